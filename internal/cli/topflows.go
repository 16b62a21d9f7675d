package cli

import (
	"cmp"
	"slices"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// textFlowLimit is how many flows the text report's flow table lists by
// payload before it summarises (docs/cli.md, "Large captures"): every flow
// with a problem is listed besides.
const textFlowLimit = 50

// listedFlows returns the indexes (in report order) of the flows the text
// report lists, and how many it leaves out: every flow up to textFlowLimit
// flows or with --all-flows; beyond, the textFlowLimit flows with the most
// payload bytes and every flow with a problem.
func (r *runner) listedFlows(rep *analyze.Report) ([]int, int) {
	if r.listed != nil {
		return r.listed.idx, r.listed.left
	}
	n := len(rep.Flows)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	if (r.cfg != nil && r.cfg.allFlows) || n <= textFlowLimit { // the library's WriteReport has no cfg: as the command by default
		return idx, 0
	}
	top := slices.Clone(idx)
	slices.SortStableFunc(top, func(a, b int) int { return cmp.Compare(rep.Flows[b].PayloadBytes, rep.Flows[a].PayloadBytes) })
	keep := make([]bool, n)
	for _, i := range top[:textFlowLimit] {
		keep[i] = true
	}
	listed := idx[:0]
	for i := range rep.Flows {
		if keep[i] || flowHasProblem(&rep.Flows[i]) {
			listed = append(listed, i)
		}
	}
	return listed, n - len(listed)
}

// flowHasProblem says whether a flow's row in the text report shows a
// problem: missing PSNs, resends or duplicates, NAKs, CNPs, ECN marks,
// bad ICRCs, payloads above the path MTU or incomplete messages.
func flowHasProblem(f *analyze.Flow) bool {
	return f.Requests.Missing > 0 || f.Requests.Retransmitted+f.Requests.Duplicates > 0 ||
		f.Responses.NAKs+f.Responses.RNRNAKs > 0 || f.Congestion.CNPs > 0 || f.Congestion.ECNCE > 0 ||
		f.ICRC.Bad > 0 || f.MTU.AboveNegotiated > 0 || f.Messages.Incomplete > 0
}
