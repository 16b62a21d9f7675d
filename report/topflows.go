package report

import (
	"cmp"
	"slices"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// TextFlowLimit is how many flows the text report's flow table lists by
// payload before it summarises (docs/cli.md, "Large captures"): every flow
// with a problem is listed besides.
const TextFlowLimit = 50

// listedFlows returns the indexes (in report order) of the flows the text
// report lists, and how many it leaves out: every flow up to TextFlowLimit
// flows or with --all-flows; beyond, the TextFlowLimit flows with the most
// payload bytes and every flow with a problem.
func (t *textWriter) listedFlows(rep *analyze.Report) ([]int, int) {
	if t.o.Listed != nil {
		return t.o.Listed, t.o.Unlisted
	}
	n := len(rep.Flows)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	if t.o.AllFlows || n <= TextFlowLimit {
		return idx, 0
	}
	top := slices.Clone(idx)
	slices.SortStableFunc(top, func(a, b int) int { return cmp.Compare(rep.Flows[b].PayloadBytes, rep.Flows[a].PayloadBytes) })
	keep := make([]bool, n)
	for _, i := range top[:TextFlowLimit] {
		keep[i] = true
	}
	listed := idx[:0]
	for i := range rep.Flows {
		if keep[i] || FlowHasProblem(&rep.Flows[i]) {
			listed = append(listed, i)
		}
	}
	return listed, n - len(listed)
}

// FlowHasProblem says whether a flow's row in the text report shows a
// problem: missing PSNs, resends or duplicates, NAKs, CNPs, ECN marks,
// bad ICRCs, payloads above the path MTU or incomplete messages.
func FlowHasProblem(f *analyze.Flow) bool {
	return f.Requests.Missing > 0 || f.Requests.Retransmitted+f.Requests.Duplicates > 0 ||
		f.Responses.NAKs+f.Responses.RNRNAKs > 0 || f.Congestion.CNPs > 0 || f.Congestion.ECNCE > 0 ||
		f.ICRC.Bad > 0 || f.MTU.AboveNegotiated > 0 || f.Messages.Incomplete > 0
}
