package htmlreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// maxPageBytes is the page size docs/cli.md promises for any capture.
const maxPageBytes = 5 << 20

// boundCase builds a report of flows (every flow holding the longest
// lists the analyzer keeps: 512 series samples, 256 gaps), bad of them
// with a finding, a connection per 4 flows, and feeds a Collector
// packets of each flow.
func boundCase(t *testing.T, flows, bad, packets int) (*analyze.Report, *Collector) {
	t.Helper()
	t0 := time.Unix(1_700_000_000, 0)
	c := NewCollector(DefaultLimits)
	rep := &analyze.Report{}
	rep.Capture.FirstTime = &t0
	series := make([]analyze.Sample, 512)
	for k := range series {
		series[k] = analyze.Sample{Start: t0.Add(time.Duration(k) * time.Millisecond), Packets: 12345, PayloadBytes: 12345678, WireBytes: 12999999}
	}
	gaps := make([]analyze.Gap, 256)
	for k := range gaps {
		gaps[k] = analyze.Gap{From: uint32(10 * k), To: uint32(10*k + 3), Count: 4, Frame: uint64(1_000_000 + k)}
	}
	rep.Connections = make([]analyze.Connection, flows/4)
	for i := range rep.Connections {
		rep.Connections[i].ID = i + 1
	}
	frame := uint64(0)
	for i := range flows {
		src := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		dst := netip.AddrFrom4([4]byte{11, byte(i >> 16), byte(i >> 8), byte(i)})
		f := analyze.Flow{Src: src.String(), Dst: dst.String(), DestQP: uint32(i), Transport: "RC",
			Packets: uint64(packets), WireBytes: uint64(packets) * 1100, PayloadBytes: uint64(packets) * 1024,
			FirstTime: t0, LastTime: t0.Add(time.Duration(packets) * time.Microsecond), Series: series}
		f.Requests.Packets = uint64(packets)
		f.Requests.Gaps = gaps
		for k := range packets {
			frame++
			ecn := uint8(0)
			if k%97 == 0 {
				ecn = 3
			}
			c.Add(&analyze.Packet{Frame: frame, Time: t0.Add(time.Duration(k) * time.Microsecond), Length: 1100, PayloadLen: 1024,
				IsRDMA: true, ECN: ecn, Src: analyze.Addr{IP: src}, Dst: analyze.Addr{IP: dst},
				BTH: &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PSN: uint32(k), DestQP: uint32(i)}})
		}
		if i%(flows/bad) == 0 { // spread over the flows, not the first ones
			rep.Findings = append(rep.Findings, analyze.Finding{Frame: frame, Time: t0, Kind: analyze.KindPSNGap,
				Severity: analyze.SeverityWarning, Flow: f.ID(), Detail: "gap"})
		}
		rep.Flows = append(rep.Flows, f)
	}
	return rep, c
}

// TestPageBounded: the page stays under 5 MB for many flows and for many
// packets, lists at most MaxFlowRows flows (every flow with a finding
// among them) and sums the rest on one line, charts at most MaxCharts
// flows and draws at most MaxChartPoints points, lists at most
// MaxConnectionRows connections. Before the bounds, a
// 200,000-packet 64-QP capture gave a 15.2 MB page and 200,000 one-packet
// flows a 332 MB one.
func TestPageBounded(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		flows, bad, packets  int
		wantRows, wantCharts int
	}{
		{"many flows", 20_000, 500, 1, MaxFlowRows, MaxCharts},
		{"many packets", 160, 16, 10_000, 160, MaxCharts},
		{"few flows", 3, 1, 100, 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, c := boundCase(t, tc.flows, tc.bad, tc.packets)
			var out bytes.Buffer
			require.NoError(t, Write(&out, "bound", rep, []Source{{Name: "b.pcap", Collector: c}}))
			page := out.String()
			t.Logf("%d flows of %d packets: page %d bytes", tc.flows, tc.packets, len(page))
			require.Less(t, len(page), maxPageBytes)

			doc := parsePage(t, page)
			var d struct {
				Report struct {
					Flows       []analyze.Flow       `json:"flows"`
					Connections []analyze.Connection `json:"connections"`
				} `json:"report"`
				Flows []struct {
					Name  string     `json:"name"`
					Chart *chartData `json:"chart"`
				} `json:"flows"`
				FlowsTotal       int       `json:"flows_total"`
				ConnectionsTotal int       `json:"connections_total"`
				FlowsMore        flowsMore `json:"flows_more"`
				Charts           int       `json:"charts"`
			}
			require.NoError(t, json.Unmarshal([]byte(textOf(byID(doc, "report-data"))), &d))
			require.Len(t, d.Report.Flows, tc.wantRows)
			require.Len(t, d.Flows, tc.wantRows)
			assert.Equal(t, tc.flows, d.FlowsTotal)
			assert.Equal(t, tc.flows/4, d.ConnectionsTotal)
			assert.Len(t, d.Report.Connections, min(tc.flows/4, MaxConnectionRows))
			assert.Equal(t, tc.flows-tc.wantRows, d.FlowsMore.Flows)
			assert.Equal(t, uint64(tc.flows-tc.wantRows)*uint64(tc.packets), d.FlowsMore.Packets)
			listed := map[string]bool{}
			charts, points := 0, 0
			for _, f := range d.Flows {
				listed[f.Name] = true
				if f.Chart != nil {
					charts++
					points += f.Chart.Shown
					assert.Len(t, f.Chart.TNs, f.Chart.Shown)
				}
			}
			for _, fd := range rep.Findings {
				assert.True(t, listed[fd.Flow.String()], "flow %s with a finding is listed", fd.Flow)
			}
			assert.Equal(t, tc.wantCharts, charts)
			assert.Equal(t, charts, d.Charts)
			assert.LessOrEqual(t, points, MaxChartPoints)
			for _, f := range d.Report.Flows {
				assert.Nil(t, f.Series, "a row carries no series")
				assert.Nil(t, f.Requests.Gaps, "a row carries no gaps")
			}
			if tc.flows > tc.wantRows {
				assert.Contains(t, page, "more flows", "the script sums the rest")
			}
		})
	}
}

// TestDecimate: a chart over its budget keeps its marked points (up to
// half the budget) and every stride-th ordinary one.
func TestDecimate(t *testing.T) {
	mk := func(n, every int) []filePoint {
		var s []filePoint
		for k := range n {
			p := filePoint{point: point{frame: uint64(k), kind: kindRequest}}
			if every > 0 && k%every == 0 {
				p.flags = flagFinding
			}
			s = append(s, p)
		}
		return s
	}
	for _, tc := range []struct {
		name        string
		pts         []filePoint
		budget      int
		wantKept    int
		wantStride  uint64
		wantDropped uint64
	}{
		{"within", mk(100, 0), 100, 100, 1, 0},
		{"plain halved", mk(200, 0), 100, 100, 2, 0},
		{"marked kept", mk(1000, 10), 200, 100 + 100, 9, 0},
		{"marked over half", mk(1000, 2), 100, 50 + 50, 10, 450},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keep, stride, dropped := decimate(tc.pts, tc.budget)
			kept, marked := len(tc.pts), 0
			if keep != nil {
				kept = 0
				for k, ok := range keep {
					if ok {
						kept++
						if isMarked(tc.pts[k]) {
							marked++
						}
					}
				}
			}
			assert.Equal(t, tc.wantKept, kept, fmt.Sprint("kept, marked ", marked))
			assert.LessOrEqual(t, kept, tc.budget)
			assert.Equal(t, tc.wantStride, stride)
			assert.Equal(t, tc.wantDropped, dropped)
		})
	}
}

// TestPageFindingsBounded: a report of 100,000 findings (the analyzer's
// default cap) lists the worst MaxFindingRows on the page, every error
// before any warning, counts them all by severity in the summary's data,
// and stays under the page's bound.
func TestPageFindingsBounded(t *testing.T) {
	rep, c := boundCase(t, 40, 4, 10)
	fl := rep.Flows[0].ID()
	rep.Findings = nil
	const n = 100_000
	for i := range n {
		sev := analyze.SeverityWarning
		if i%50 == 7 {
			sev = analyze.SeverityError
		}
		rep.Findings = append(rep.Findings, analyze.Finding{Frame: uint64(i + 1), Time: *rep.Capture.FirstTime, Kind: analyze.KindRetransmission, Severity: sev, Flow: fl,
			Detail: "PSN seen before (RC_RDMA_WRITE_MIDDLE) <with markup & a long detail line>"})
	}
	var out bytes.Buffer
	require.NoError(t, Write(&out, "findings", rep, []Source{{Name: "b.pcap", Collector: c}}))
	require.Less(t, out.Len(), maxPageBytes)
	doc := parsePage(t, out.String())
	var d struct {
		Report struct {
			Findings []analyze.Finding `json:"findings"`
		} `json:"report"`
		Findings      []findingExtra `json:"findings"`
		FindingCounts findingCounts  `json:"finding_counts"`
		FindingsMore  int            `json:"findings_more"`
	}
	require.NoError(t, json.Unmarshal([]byte(textOf(byID(doc, "report-data"))), &d))
	require.Len(t, d.Report.Findings, MaxFindingRows)
	require.Len(t, d.Findings, MaxFindingRows)
	assert.Equal(t, findingCounts{Error: n / 50, Warning: n - n/50}, d.FindingCounts)
	assert.Equal(t, n-MaxFindingRows, d.FindingsMore)
	errs := 0
	for i, f := range d.Report.Findings {
		if f.Severity == analyze.SeverityError {
			errs++
		}
		if i > 0 {
			assert.Less(t, d.Report.Findings[i-1].Frame, f.Frame, "in the report's order")
		}
	}
	assert.Equal(t, n/50, errs, "every error is listed")
}
