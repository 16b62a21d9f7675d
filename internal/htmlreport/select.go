package htmlreport

import (
	"sort"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// The page's bounds, whatever the capture (docs/cli.md, "HTML report";
// TestPageBounded): the flow table lists at most MaxFlowRows flows, at
// most MaxCharts of them have a sequence and throughput chart, and those
// charts draw at most MaxChartPoints points in all (each chart's
// ordinary packets decimated evenly to its share). The page lists first
// every flow with a problem (a finding, a missing PSN, a resend, a
// duplicate, a packet out of order, a NAK, an RNR NAK or a bad ICRC),
// most findings first, then the other flows by bytes; a charted flow
// brings its reverse flow. The flows left out are summed on one line
// (the JSON report, -o json, lists them all). The page's rows carry
// neither a flow's throughput series, its PSN gaps (its chart does) nor
// its NIC figures (-o json has them). The connections table lists the
// first MaxConnectionRows connections and counts the rest.
const (
	MaxFlowRows    = 1000
	MaxCharts      = 64
	MaxChartPoints = 48_000
	// MaxConnectionRows bounds the connections (CM) table likewise, and
	// MaxFindingRows the findings table, which lists the worst first
	// (errors, then warnings, then info, each in frame order): the rest
	// are counted (the summary counts every finding by severity).
	MaxConnectionRows = 1000
	MaxFindingRows    = 2000
)

// findingCounts counts findings by severity, for the page's summary.
type findingCounts struct {
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
}

// pickFindings returns the indexes of the findings the page lists, worst
// first as the text report lists them (errors, then warnings, then info,
// each in the report's order), at most MaxFindingRows, and the counts of
// all of them.
func pickFindings(fs []analyze.Finding) ([]int, findingCounts) {
	var c findingCounts
	idx := make([]int, len(fs))
	for i, f := range fs {
		idx[i] = i
		switch f.Severity {
		case analyze.SeverityError:
			c.Error++
		case analyze.SeverityWarning:
			c.Warning++
		default:
			c.Info++
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return fs[idx[a]].Severity < fs[idx[b]].Severity })
	return idx[:min(len(idx), MaxFindingRows)], c
}

// flowsMore sums the flows the page does not list.
type flowsMore struct {
	Flows     int    `json:"flows"`
	Packets   uint64 `json:"packets"`
	WireBytes uint64 `json:"wire_bytes"`
}

// hasProblem reports whether a flow has a finding or a counter that the
// flow table shows in red.
func hasProblem(f *analyze.Flow, findings int) bool {
	r := &f.Requests
	return findings > 0 || r.Missing > 0 || r.Retransmitted > 0 || r.Duplicates > 0 || r.OutOfOrder > 0 ||
		f.Responses.NAKs > 0 || f.Responses.RNRNAKs > 0 || f.ICRC.Bad > 0
}

// pickFlows chooses the flows the page lists (shown, indices into
// rep.Flows in the report's order) and those it charts (charted[i]),
// within maxRows and maxCharts. findings counts each flow's findings;
// a flow can be charted when it or its peer has points.
func pickFlows(rep *analyze.Report, findings, peer []int, pts []*merged, maxRows, maxCharts int) (shown []int, charted []bool) {
	n := len(rep.Flows)
	order := make([]int, n)
	bad := make([]bool, n)
	for i := range order {
		order[i] = i
		bad[i] = hasProblem(&rep.Flows[i], findings[i])
	}
	sort.SliceStable(order, func(a, b int) bool {
		i, j := order[a], order[b]
		if bad[i] != bad[j] {
			return bad[i]
		}
		if findings[i] != findings[j] {
			return findings[i] > findings[j]
		}
		return rep.Flows[i].WireBytes > rep.Flows[j].WireBytes
	})
	in := make([]bool, n)
	charted = make([]bool, n)
	rows, charts := 0, 0
	add := func(i int) {
		in[i] = true
		rows++
	}
	for _, i := range order {
		if rows >= maxRows {
			break
		}
		if in[i] {
			continue
		}
		add(i)
		p := peer[i]
		withPoints := pts[i] != nil || (p >= 0 && pts[p] != nil)
		if !withPoints || charts >= maxCharts {
			continue
		}
		if p < 0 {
			charted[i] = true
			charts++
			continue
		}
		// A chart names its reverse flow: chart only with it listed.
		if !in[p] && rows >= maxRows {
			continue
		}
		if !in[p] {
			add(p)
		}
		charted[i] = true
		charts++
		if charts < maxCharts {
			charted[p] = true
			charts++
		}
	}
	for i := range in {
		if in[i] {
			shown = append(shown, i)
		}
	}
	return shown, charted
}

// chartBudget is how many points each of n charts may draw.
func chartBudget(n int) int {
	if n == 0 {
		return MaxChartPoints
	}
	return MaxChartPoints / n
}

// isMarked reports whether a point is kept before ordinary ones when a
// chart is decimated (as the Collector does: a finding, an ECN-CE mark,
// a NAK, an RNR NAK or a CNP).
func isMarked(p filePoint) bool {
	return p.flags != 0 || p.kind == kindNAK || p.kind == kindRNRNAK || p.kind == kindCNP
}

// decimate picks which of a chart's points (sorted by time) to draw
// within budget: the marked ones first, up to half the budget, then the
// ordinary ones evenly, every stride-th. It returns nil when all fit.
func decimate(sel []filePoint, budget int) (keep []bool, stride uint64, markedDropped uint64) {
	if len(sel) <= budget {
		return nil, 1, 0
	}
	keep = make([]bool, len(sel))
	marked, plain := 0, 0
	for _, p := range sel {
		if isMarked(p) {
			marked++
		} else {
			plain++
		}
	}
	markedMax := max(budget/2, budget-plain)
	room := budget - min(marked, markedMax)
	stride = 1
	if room > 0 {
		stride = uint64((plain + room - 1) / room)
	}
	var m, o uint64
	for k, p := range sel {
		if isMarked(p) {
			if m < uint64(markedMax) {
				keep[k] = true
			} else {
				markedDropped++
			}
			m++
			continue
		}
		if room > 0 && o%stride == 0 {
			keep[k] = true
		}
		o++
	}
	return keep, stride, markedDropped
}

// pageFlow is a flow as the page's rows show it: without the lists the
// script does not read (bounded per flow, but up to about 100 KiB).
func pageFlow(f analyze.Flow) analyze.Flow {
	f.Series = nil
	f.Requests.Gaps = nil
	f.NIC = nil
	return f
}
