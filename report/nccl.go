package report

import (
	"fmt"
	"strings"

	"github.com/roce-dissect/roce-dissect/nccl"
)

// writeNCCL writes the "Collectives (NCCL)" text section: the ranks with
// their addresses, the rings, and the connections; nothing when no NCCL
// traffic was recognised.
func (t *textWriter) writeNCCL(r *nccl.Result) {
	if r == nil {
		return
	}
	w, p := t.w, t.p
	fmt.Fprintln(w)
	p.Bold.Fprintln(w, "Collectives (NCCL)")
	fmt.Fprintf(w, "  FIFO layout: NCCL %s\n", r.FIFOLayout)
	ranks := make([]string, len(r.Ranks))
	for i, rk := range r.Ranks {
		ranks[i] = fmt.Sprintf("%d = %s", rk.Rank, rk.Addr)
	}
	fmt.Fprintf(w, "  Ranks: %s\n", strings.Join(ranks, ", "))
	for c, ring := range r.Rings {
		order := make([]string, len(ring)+1)
		for i, rk := range ring {
			order[i] = fmt.Sprint(rk)
		}
		order[len(ring)] = order[0]
		fmt.Fprintf(w, "  Ring of channel %d: %s\n", c, strings.Join(order, " → "))
	}
	header := []cell{{text: "SENDER → RECEIVER", left: true}, {text: "ADDRESSES", left: true}, {text: "DATA QPS", left: true}, {text: "CTS QP"}, {text: "CTS"}, {text: "MESSAGES"}, {text: "BYTES"}}
	p.table(w, "  ", header, len(r.Connections), func(i int, row []cell) []cell {
		c := &r.Connections[i]
		qps := make([]string, len(c.DataQPs))
		for k, q := range c.DataQPs {
			qps[k] = fmt.Sprint(q)
		}
		return append(row,
			cell{text: ncclRank(c.SenderRank) + " → " + ncclRank(c.ReceiverRank), left: true},
			cell{text: c.Sender + " → " + c.Receiver, left: true},
			cell{text: strings.Join(qps, ","), left: true},
			cell{text: fmt.Sprint(c.CTSQP)}, cell{text: fmt.Sprint(c.CTS)}, cell{text: fmt.Sprint(c.Messages)}, cell{text: fmt.Sprint(c.Bytes)})
	})
}

// ncclRank is a rank's text, "?" when unknown.
func ncclRank(r *int) string {
	if r == nil {
		return "?"
	}
	return fmt.Sprint(*r)
}
