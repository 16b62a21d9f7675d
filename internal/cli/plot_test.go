package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/outfile"
)

// plotReport builds a report of flows whose 1 µs series are given as
// payload bytes per µs from t0.
func plotReport(t0 time.Time, dur time.Duration, flows map[uint32][]uint64) *analyze.Report {
	last := t0.Add(dur)
	rep := &analyze.Report{Capture: analyze.Capture{FirstTime: &t0, LastTime: &last}}
	for qp := uint32(0); qp < 64; qp++ {
		bytes, ok := flows[qp]
		if !ok {
			continue
		}
		f := analyze.Flow{Src: "10.0.0.1", Dst: "10.0.0.2", DestQP: qp, IntervalSeconds: 1e-6}
		f.Requests.Packets = 1
		for k, b := range bytes {
			if b > 0 {
				f.Series = append(f.Series, analyze.Sample{Start: t0.Add(time.Duration(k) * time.Microsecond), PayloadBytes: b})
				f.PayloadBytes += b
			}
		}
		rep.Flows = append(rep.Flows, f)
	}
	return rep
}

// TestPlotData: the plot's interval comes from the capture's duration
// when --interval is not given (the old 1 ms default drew nothing on a
// 40 µs capture), its steps are the bytes of each interval over its
// width, the last interval is scaled to the part the capture covers (or
// left out, said in a note), QP1 is not plotted, and past the top flows
// the rest is one "others" line.
func TestPlotData(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const kb = 125 // bytes in 1 µs at 1 Gb/s
	t.Run("interval from the duration", func(t *testing.T) {
		per := make([]uint64, 40)
		for i := range per {
			per[i] = kb
		}
		rep := plotReport(t0, 40*time.Microsecond, map[uint32][]uint64{1: per, 0x11: per})
		d, err := buildPlot(rep, 0)
		require.NoError(t, err)
		assert.Equal(t, time.Microsecond, d.iv, "40 µs / 80 rounds up to the finest kept, 1 µs")
		require.Len(t, d.lines, 1, "QP1 (CM) is not data")
		assert.Equal(t, "10.0.0.1 → 10.0.0.2 QP 0x000011", d.lines[0].name)
		require.Len(t, d.lines[0].bps, 41)
		for k := range 40 {
			assert.InDelta(t, 1e9, d.lines[0].bps[k], 1, "bucket %d: 125 bytes a µs is 1 Gb/s", k)
		}
		assert.True(t, math.IsNaN(d.lines[0].bps[40]), "the capture ends where the 41st interval starts: left out")
		assert.Contains(t, d.notes[len(d.notes)-1], "last 1 µs interval left out")
	})
	t.Run("coarser interval, last one scaled", func(t *testing.T) {
		per := make([]uint64, 1000)
		for i := range per {
			per[i] = kb
		}
		rep := plotReport(t0, 999*time.Microsecond+500*time.Nanosecond, map[uint32][]uint64{0x11: per})
		d, err := buildPlot(rep, 0)
		require.NoError(t, err)
		assert.Equal(t, 20*time.Microsecond, d.iv, "≈1 ms / 80 → 20 µs")
		bps := d.lines[0].bps
		require.Len(t, bps, 50)
		assert.InDelta(t, 1e9, bps[0], 1)
		// The last 20 µs interval starts at 980 µs; the capture covers
		// 19.5 µs of it, holding 20 µs worth of bytes (the last sample).
		assert.InDelta(t, 20*kb*8/19.5e-6, bps[49], 1)
		assert.Contains(t, d.notes[0], "last interval scaled to the 19.5 µs the capture covers")
	})
	t.Run("given interval", func(t *testing.T) {
		rep := plotReport(t0, 10*time.Microsecond, map[uint32][]uint64{0x11: {kb, kb, kb, kb, kb, kb, kb, kb, kb, kb, kb}})
		d, err := buildPlot(rep, 5*time.Microsecond)
		require.NoError(t, err)
		assert.Equal(t, 5*time.Microsecond, d.iv)
		assert.InDeltaSlice(t, []float64{1e9, 1e9}, d.lines[0].bps[:2], 1)
	})
	t.Run("top flows and others", func(t *testing.T) {
		flows := map[uint32][]uint64{}
		for qp := uint32(0x10); qp < 0x10+14; qp++ {
			flows[qp] = []uint64{uint64(qp) * 10, 0, uint64(qp) * 10}
		}
		d, err := buildPlot(plotReport(t0, 3*time.Microsecond, flows), 0)
		require.NoError(t, err)
		require.Len(t, d.lines, plotTopFlows+1)
		assert.Equal(t, "10.0.0.1 → 10.0.0.2 QP 0x00001d", d.lines[0].name, "the most bytes first")
		assert.Equal(t, "others (6 flows)", d.lines[plotTopFlows].name)
		var want uint64
		for qp := uint32(0x10); qp < 0x16; qp++ {
			want += uint64(qp) * 10
		}
		assert.InDelta(t, float64(want)*8/1e-6, d.lines[plotTopFlows].bps[0], 1, "others sums its flows")
		peak, others := d.scale()
		assert.InDelta(t, float64(0x1d*10)*8/1e-6, peak, 1, "the named flows set the scale")
		assert.InDelta(t, float64(want)*8/1e-6, others, 1)
		svg := filepath.Join(t.TempDir(), "p.svg")
		require.NoError(t, outfile.Write(svg, func(w io.Writer) error { return writePlot(w, svg, plotReport(t0, 3*time.Microsecond, flows), 0) }))
		b, err := os.ReadFile(svg)
		require.NoError(t, err)
		assert.Contains(t, string(b), "others (6 flows), up to", "the legend says the others leave the scale")
	})
	t.Run("nothing to plot", func(t *testing.T) {
		_, err := buildPlot(plotReport(t0, time.Microsecond, map[uint32][]uint64{1: {kb}}), 0)
		assert.EqualError(t, err, "no data flow to plot (only CM or management traffic)")
	})
}

// TestPlotMarkers: a NAK or a CNP (sent by the responder to the
// requester's QP, a flow with no data) sits on the line of the data flow
// of its connection (TestPlotLossClasses checks the gaps' marks).
func TestPlotMarkers(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rep := plotReport(t0, 4*time.Microsecond, map[uint32][]uint64{0x11: {100, 100, 100, 100}})
	conn := 0
	rep.Flows[0].Connection = &conn
	rep.Flows = append(rep.Flows, analyze.Flow{Src: "10.0.0.2", Dst: "10.0.0.1", DestQP: 0x22, Connection: &conn})
	rep.Findings = []analyze.Finding{
		{Kind: analyze.KindNAK, Time: t0.Add(2 * time.Microsecond), Flow: analyze.FlowID{Src: "10.0.0.2", Dst: "10.0.0.1", DestQP: 0x22}},
		{Kind: analyze.KindCNP, Time: t0.Add(3 * time.Microsecond), Flow: analyze.FlowID{Src: "10.0.0.2", Dst: "10.0.0.1", DestQP: 0x22}},
		{Kind: analyze.KindCNP, Time: t0, Flow: analyze.FlowID{Src: "10.9.9.9", Dst: "10.0.0.1", DestQP: 0x22}},
		{Kind: analyze.KindRetransmission, Time: t0, Flow: analyze.FlowID{Src: "10.0.0.1", Dst: "10.0.0.2", DestQP: 0x11}},
	}
	d, err := buildPlot(rep, 0)
	require.NoError(t, err)
	assert.Equal(t, []plotMarker{
		{kind: markNAK, at: 2 * time.Microsecond, line: 0},
		{kind: markCNP, at: 3 * time.Microsecond, line: 0},
		{kind: markCNP, at: 0, line: -1},
	}, d.markers)
}

func TestPlotUnits(t *testing.T) {
	for _, tc := range []struct {
		peak  float64
		scale float64
		unit  string
	}{{600, 1, "b/s"}, {60e3, 1e3, "kb/s"}, {6e7, 1e6, "Mb/s"}, {2.5e10, 1e9, "Gb/s"}, {4e12, 1e12, "Tb/s"}} {
		s, u := rateUnit(tc.peak)
		assert.Equal(t, tc.scale, s, fmt.Sprint(tc.peak))
		assert.Equal(t, tc.unit, u)
	}
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{{800 * time.Nanosecond, "ns"}, {40 * time.Microsecond, "µs"}, {300 * time.Millisecond, "ms"}, {5 * time.Second, "s"}} {
		_, u := timeUnit(tc.d)
		assert.Equal(t, tc.want, u, tc.d.String())
	}
	assert.Equal(t, "20 µs", plotDuration(20*time.Microsecond))
	assert.Equal(t, 30.0, niceCeil(26.6))
	assert.Equal(t, 2*time.Microsecond, niceDuration(1500*time.Nanosecond))
}
