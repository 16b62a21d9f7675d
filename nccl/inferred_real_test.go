package nccl_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/nccltest"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// TestRealCapturesInferredConnections: the real NCCL job uses no CM, and
// the analyzer pairs each RC QP pair from its ACKs' PSNs; NCCL's CTS tell
// the same pairs another way: the receiver writes them to the sender's QP
// (cts_qp), the sender its data to the receiver's (data_qps). Each host's
// file alone and the three together list one inferred connection per
// NCCL connection the CTS name, between those QPs, and no other.
func TestRealCapturesInferredConnections(t *testing.T) {
	job := nccltest.Read(t, captures)
	var reports []*analyze.Report
	var cols []*nccl.Collector
	for _, name := range job.Pcaps {
		col, rep := analyzeFile(t, name)
		reports, cols = append(reports, rep), append(cols, col)
	}
	merged := &analyze.Report{}
	for _, r := range reports {
		require.NoError(t, merged.Merge(r))
	}
	pairs := func(rep *analyze.Report) []string {
		var out []string
		for _, c := range rep.Connections {
			require.Equal(t, analyze.StateInferred, c.State)
			a := fmt.Sprintf("%s QPN %d", c.Requester.IP, *c.Requester.QPN)
			b := fmt.Sprintf("%s QPN %d", c.Responder.IP, *c.Responder.QPN)
			if b < a {
				a, b = b, a
			}
			out = append(out, a+" ↔ "+b)
		}
		return out
	}
	cts := func(res *nccl.Result) []string {
		var out []string
		for _, c := range res.Connections {
			require.Len(t, c.DataQPs, 1)
			a := fmt.Sprintf("%s QPN %d", c.Sender, c.CTSQP)
			b := fmt.Sprintf("%s QPN %d", c.Receiver, c.DataQPs[0])
			if b < a {
				a, b = b, a
			}
			out = append(out, a+" ↔ "+b)
		}
		return out
	}
	whole := cts(nccl.Combine(cols...))
	require.Len(t, whole, 3, "the ring's three connections")
	assert.ElementsMatch(t, whole, pairs(merged), "the three files")
	for i, rep := range reports {
		assert.ElementsMatch(t, cts(cols[i].Result()), pairs(rep), job.Pcaps[i])
	}
}
