package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/wrap"
)

// pointsJSON is the part of the JSON report the capture-point tests read.
type pointsJSON struct {
	Flows []struct {
		Src      string `json:"src"`
		Dst      string `json:"dst"`
		DestQP   uint32 `json:"dest_qp"`
		Packets  uint64 `json:"packets"`
		Requests struct {
			Retransmitted uint64 `json:"retransmitted"`
		} `json:"requests"`
	} `json:"flows"`
	Points *struct {
		Files []struct {
			File          string `json:"file"`
			ClockOffsetNs int64  `json:"clock_offset_ns"`
			OffsetErrorNs int64  `json:"offset_error_ns"`
			Method        string `json:"method"`
		} `json:"files"`
		Links []synth.PointLinkTruth `json:"links"`
	} `json:"points"`
}

// writePoints generates pc into dir and returns the file names and truth.
func writePoints(t *testing.T, pc synth.PointsConfig) ([]string, *synth.PointsTruth) {
	t.Helper()
	dir := t.TempDir()
	var names []string
	var ws []io.Writer
	var bufs []*bytes.Buffer
	for i := range pc.Points {
		name := filepath.Join(dir, pc.Points[i].Name+".pcap")
		pc.Points[i].Name = name
		names = append(names, name)
		b := &bytes.Buffer{}
		bufs, ws = append(bufs, b), append(ws, b)
	}
	tr, err := synth.WritePoints(pc, ws)
	require.NoError(t, err)
	for i, b := range bufs {
		require.NoError(t, os.WriteFile(names[i], b.Bytes(), 0o644))
	}
	return names, tr
}

// mustWrap parses a chain of encapsulations (wrap.Parse).
func mustWrap(t *testing.T, chain string) wrap.Chain {
	t.Helper()
	c, err := wrap.Parse(chain)
	require.NoError(t, err)
	return c
}

func runJSON(t *testing.T, args ...string) (pointsJSON, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), append([]string{"-o", "json"}, args...), &out, &errb)
	require.Equal(t, cli.ExitOK, code, errb.String())
	var rep pointsJSON
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	return rep, out.String()
}

func TestCapturePointsMatchTruth(t *testing.T) {
	twoPoints := func(drop string) []synth.Point {
		var d []synth.PSNRef
		if drop != "" {
			var err error
			d, err = synth.ParsePSNList(drop)
			require.NoError(t, err)
		}
		return []synth.Point{
			{Name: "host-a"},
			{Name: "host-b", ClockOffset: 1500 * time.Microsecond, Delay: 3 * time.Microsecond, Jitter: 200 * time.Nanosecond, TTLDec: 1, TapDrop: d},
		}
	}
	cases := []struct {
		name    string
		base    synth.Config
		points  []synth.Point
		lossHop int
		corrupt string
	}{
		{"ipv4 resends, tap drop, corruption (ns)", synth.Config{Scenario: "write-bw", Messages: 8, Nanos: true, Impairments: synth.Impairments{NAK: mustPSNs(t, "+5,+10")}},
			twoPoints("+3"), 1, "+10"},
		{"ipv4 no resends (µs)", synth.Config{Scenario: "write-bw", Messages: 8}, twoPoints(""), 1, ""},
		{"ipv6 resends (ns)", synth.Config{Scenario: "send-bw", Encap: synth.EncapIPv6, Messages: 6, Nanos: true, Impairments: synth.Impairments{NAK: mustPSNs(t, "+4")}},
			twoPoints("+1"), 1, ""},
		{"rocev1 resends and corruption (ns)", synth.Config{Scenario: "write-bw", Encap: synth.EncapRoCEv1, Messages: 6, Nanos: true, Impairments: synth.Impairments{NAK: mustPSNs(t, "+2,+9")}},
			twoPoints("+6"), 1, "+9"},
		{"header-only resends (µs)", synth.Config{Scenario: "write-bw", Messages: 8, SnapLen: 96, Impairments: synth.Impairments{NAK: mustPSNs(t, "+5,+10")}},
			twoPoints("+3"), 1, "+10"},
		{"read-bw (ns)", synth.Config{Scenario: "read-bw", Messages: 6, Nanos: true}, twoPoints(""), 1, ""},
		{"three points, loss after the mirror (ns)", synth.Config{Scenario: "write-bw", Messages: 10, Nanos: true, Impairments: synth.Impairments{NAK: mustPSNs(t, "+7")}},
			[]synth.Point{
				{Name: "host-a", ClockOffset: -2 * time.Millisecond},
				{Name: "mirror", ClockOffset: 40 * time.Microsecond, Delay: 1 * time.Microsecond, Jitter: 100 * time.Nanosecond, TTLDec: 1, TapDrop: mustPSNs(t, "+12")},
				{Name: "host-b", ClockOffset: 7 * time.Millisecond, Delay: 2 * time.Microsecond, Jitter: 100 * time.Nanosecond, TTLDec: 1},
			}, 2, ""},
		{"a switch's ERSPAN mirror between two hosts, one behind VXLAN (ns)", synth.Config{Scenario: "write-bw", Messages: 10, Nanos: true, Impairments: synth.Impairments{NAK: mustPSNs(t, "+4")}},
			[]synth.Point{
				{Name: "host-a"},
				{Name: "mirror", ClockOffset: 30 * time.Microsecond, Delay: 1 * time.Microsecond, TTLDec: 1, Wrap: mustWrap(t, "erspan2")},
				{Name: "host-b", ClockOffset: -3 * time.Millisecond, Delay: 2 * time.Microsecond, Jitter: 100 * time.Nanosecond, TTLDec: 1, Wrap: mustWrap(t, "vxlan")},
			}, 2, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pc := synth.PointsConfig{Base: tc.base, Points: tc.points, LossHop: tc.lossHop}
			if tc.corrupt != "" {
				pc.Corrupt = mustPSNs(t, tc.corrupt)
			}
			files, tr := writePoints(t, pc)
			rep, raw := runJSON(t, files...)
			require.NotNil(t, rep.Points, raw)

			// Offsets: relative to the first file, within the timestamp
			// resolution plus the jitter bound; the stated error covers it.
			require.Len(t, rep.Points.Files, len(files))
			tol := make([]int64, len(files))
			for i, f := range rep.Points.Files {
				ft := tr.Files[i]
				want := ft.ClockOffsetNs - tr.Files[0].ClockOffsetNs
				tol[i] = 2*(ft.ResolutionNs+tr.Files[0].ResolutionNs) + ft.JitterNs
				assert.Equal(t, files[i], f.File)
				assert.InDelta(t, want, f.ClockOffsetNs, float64(tol[i]), "offset of %s", f.File)
				if i == 0 {
					assert.Equal(t, "reference", f.Method)
					continue
				}
				assert.Equal(t, "two_way", f.Method)
				assert.LessOrEqual(t, abs64(f.ClockOffsetNs-want), f.OffsetErrorNs+2*ft.ResolutionNs, "stated error of %s", f.File)
			}

			// Links: every count and PSN list exactly; delays within the
			// offset tolerance of both files.
			require.Len(t, rep.Points.Links, len(tr.Links), raw)
			got := map[[5]string]synth.PointLinkTruth{}
			for _, l := range rep.Points.Links {
				got[[5]string{l.Src, l.Dst, fmtQP(l.DestQP), l.From, l.To}] = l
			}
			index := map[string]int{}
			for i, f := range files {
				index[f] = i
			}
			for _, w := range tr.Links {
				g, ok := got[[5]string{w.Src, w.Dst, fmtQP(w.DestQP), w.From, w.To}]
				require.True(t, ok, "link %s → %s QP %d %s → %s missing", w.Src, w.Dst, w.DestQP, w.From, w.To)
				assert.Equal(t, w.Matched, g.Matched, "matched")
				assert.Equal(t, w.Lost, g.Lost, "lost")
				assert.Equal(t, w.LostPSNs, g.LostPSNs, "lost PSNs")
				assert.Equal(t, w.NotCaptured, g.NotCaptured, "not captured")
				assert.Equal(t, w.Corrupted, g.Corrupted, "corrupted")
				assert.Equal(t, w.CorruptedPSNs, g.CorruptedPSNs, "corrupted PSNs")
				assert.Equal(t, w.Reordered, g.Reordered, "reordered")
				dt := float64(tol[index[w.From]] + tol[index[w.To]])
				assert.InDelta(t, w.OneWayDelayNs.Min, g.OneWayDelayNs.Min, dt, "delay min")
				assert.InDelta(t, w.OneWayDelayNs.Median, g.OneWayDelayNs.Median, dt, "delay median")
				assert.InDelta(t, w.OneWayDelayNs.P99, g.OneWayDelayNs.P99, dt, "delay p99")
				assert.InDelta(t, w.OneWayDelayNs.Max, g.OneWayDelayNs.Max, dt, "delay max")
			}

			// The combined flows count each transmission once: the
			// stream's packets and retransmissions, no more.
			require.Len(t, rep.Flows, len(tr.Stream.Flows))
			for _, wf := range tr.Stream.Flows {
				found := false
				for _, gf := range rep.Flows {
					if gf.Src == wf.Src && gf.Dst == wf.Dst && gf.DestQP == wf.DestQP {
						found = true
						assert.Equal(t, uint64(wf.Packets), gf.Packets, "packets of %s → %s", wf.Src, wf.Dst)
						assert.Equal(t, uint64(wf.Requests.Retransmitted), gf.Requests.Retransmitted, "retransmissions of %s → %s", wf.Src, wf.Dst)
					}
				}
				assert.True(t, found, "flow %s → %s QP %d", wf.Src, wf.Dst, wf.DestQP)
			}
		})
	}
}

// mustPSNs parses a list of PSNs (synth.ParsePSNList).
func mustPSNs(t testing.TB, s string) []synth.PSNRef {
	t.Helper()
	l, err := synth.ParsePSNList(s)
	require.NoError(t, err)
	return l
}

func fmtQP(qp uint32) string { return strconv.FormatUint(uint64(qp), 16) }

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// TestCapturePointsOverride: --clock-offset replaces the estimate.
func TestCapturePointsOverride(t *testing.T) {
	files, tr := writePoints(t, synth.PointsConfig{Base: synth.Config{Scenario: "write-bw", Messages: 4, Nanos: true},
		Points: []synth.Point{{Name: "a"}, {Name: "b", ClockOffset: 3 * time.Millisecond, Delay: 2 * time.Microsecond}}})
	rep, _ := runJSON(t, "--clock-offset", files[1]+"=3ms", files[0], files[1])
	require.NotNil(t, rep.Points)
	assert.Equal(t, "override", rep.Points.Files[1].Method)
	assert.Equal(t, int64(3*time.Millisecond), rep.Points.Files[1].ClockOffsetNs)
	for _, l := range rep.Points.Links {
		assert.Equal(t, int64(2000), l.OneWayDelayNs.Min, "exact offset: exact delays")
	}
	assert.NotEmpty(t, tr.Links)

	var out, errb bytes.Buffer
	assert.Equal(t, cli.ExitUsage, cli.Run(context.Background(), []string{"--clock-offset", "x", files[0]}, &out, &errb))
}

// TestCapturePointsNeverMeet: files that share no packet (or only a few
// byte-identical CM datagrams of the same generator) are merged as
// before, without a points object.
func TestCapturePointsNeverMeet(t *testing.T) {
	pairs := [][2]string{
		{"../../testdata/write_bw_ipv4.pcap", "../../testdata/loss_nak_gobackn.pcap"},
		{"../../testdata/write_bw_ipv4.pcap", "../../testdata/send_bw_ipv6.pcapng"},
		{"../../testdata/loss_nak_gobackn.pcap", "../../testdata/psn_wrap.pcap"},
	}
	if _, err := os.Stat(filepath.Join(shared, "softroce")); err == nil {
		pairs = append(pairs, [2]string{filepath.Join(shared, "softroce/rdma_write_bw.pcap"), filepath.Join(shared, "softroce/rdma_read_bw.pcap")})
	}
	for _, p := range pairs {
		rep, raw := runJSON(t, p[0], p[1])
		assert.Nil(t, rep.Points, "%s + %s", p[0], p[1])
		assert.NotContains(t, raw, `"points"`)
	}
}

// TestCapturePointsText: the text report has the section, with the
// offsets and the lost PSN with its frame.
func TestCapturePointsText(t *testing.T) {
	nak, err := synth.ParsePSNList("+5")
	require.NoError(t, err)
	files, tr := writePoints(t, synth.PointsConfig{Base: synth.Config{Scenario: "write-bw", Messages: 6, Nanos: true, Impairments: synth.Impairments{NAK: nak}},
		Points: []synth.Point{{Name: "a"}, {Name: "b", ClockOffset: time.Millisecond, Delay: 2 * time.Microsecond}}})
	var out, errb bytes.Buffer
	require.Equal(t, cli.ExitOK, cli.Run(context.Background(), []string{"--color", "never", files[0], files[1]}, &out, &errb), errb.String())
	s := out.String()
	assert.Contains(t, s, "Capture points")
	assert.Contains(t, s, files[0]+": clock 0s (exact, reference)")
	var lost *synth.PointLinkTruth
	for i := range tr.Links {
		if tr.Links[i].Lost > 0 {
			lost = &tr.Links[i]
		}
	}
	require.NotNil(t, lost)
	assert.Contains(t, s, "lost between "+files[0]+" and "+files[1]+": PSN "+strconv.FormatUint(uint64(lost.LostPSNs[0]), 10))
}

// BenchmarkCapturePoints runs the whole command on two capture points of
// one write stream (both passes: per-file analysis and sampling, then the
// merged matching pass); bytes are those of both files.
func BenchmarkCapturePoints(b *testing.B) {
	dir := b.TempDir()
	pc := synth.PointsConfig{Base: synth.Config{Scenario: "write-bw", Messages: 2000, Nanos: true},
		Points: []synth.Point{{Name: "a"}, {Name: "b", ClockOffset: time.Millisecond, Delay: 2 * time.Microsecond, Jitter: 100 * time.Nanosecond}}}
	var bufs [2]bytes.Buffer
	_, err := synth.WritePoints(pc, []io.Writer{&bufs[0], &bufs[1]})
	require.NoError(b, err)
	files := []string{filepath.Join(dir, "a.pcap"), filepath.Join(dir, "b.pcap")}
	for i, f := range files {
		require.NoError(b, os.WriteFile(f, bufs[i].Bytes(), 0o644))
	}
	b.SetBytes(int64(bufs[0].Len() + bufs[1].Len()))
	b.ReportAllocs()
	for b.Loop() {
		if code := cli.Run(context.Background(), append([]string{"-o", "json", "--progress", "never"}, files...), io.Discard, io.Discard); code != cli.ExitOK {
			b.Fatalf("exit %d", code)
		}
	}
}
