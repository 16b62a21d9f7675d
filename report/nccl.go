package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/nccl"
)

// writeNCCL writes the "Collectives (NCCL)" text section: the ranks with
// their addresses, the rings, the connections, and a line per
// collective; nothing when no NCCL traffic was recognised.
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
	for _, t := range r.Trees {
		parents := make([]string, len(t.Parents))
		for i, p := range t.Parents {
			parents[i] = fmt.Sprintf("%d → %d", p.Rank, p.Parent)
		}
		fmt.Fprintf(w, "  Tree from root %d: %s\n", t.Root, strings.Join(parents, ", "))
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
	if len(r.Collectives) == 0 {
		return
	}
	fmt.Fprintln(w)
	header = []cell{{text: "COLLECTIVE", left: true}, {text: "KIND", left: true}, {text: "ALGORITHM", left: true}, {text: "S"},
		{text: "BUSY"}, {text: "DURATION"}, {text: "ALGBW"}, {text: "BUSBW"}, {text: "STRAGGLER", left: true}}
	p.table(w, "  ", header, len(r.Collectives), func(i int, row []cell) []cell {
		c := &r.Collectives[i]
		size, busy := "-", "-"
		if c.SizeBytes != nil {
			size = fmt.Sprint(*c.SizeBytes)
		}
		if c.BusyNs != nil {
			busy = HumanDuration(time.Duration(*c.BusyNs))
		}
		return append(row,
			cell{text: fmt.Sprint(c.Index), left: true}, cell{text: c.Kind, left: true},
			cell{text: c.Algorithm + ", " + c.Protocol, left: true}, cell{text: size}, cell{text: busy},
			cell{text: HumanDuration(time.Duration(c.DurationNs))}, cell{text: HumanRate(c.AlgBWBps)}, cell{text: HumanRate(c.BusBWBps)},
			cell{text: ncclStraggler(c.Straggler), left: true})
	})
}

// ncclStraggler is a collective's straggler in a few words, "-" for
// none.
func ncclStraggler(s *nccl.Straggler) string {
	switch {
	case s == nil:
		return "-"
	case s.Kind == "link":
		return fmt.Sprintf("link %d → %s slow by %s (%s)", s.Rank, ncclRank(s.ReceiverRank), HumanDuration(time.Duration(s.LateNs)), s.Why)
	case s.Kind == "gpu":
		return fmt.Sprintf("rank %d: GPU late by %s", s.Rank, HumanDuration(time.Duration(s.LateNs)))
	}
	return fmt.Sprintf("rank %d: %s late by %s", s.Rank, s.Kind, HumanDuration(time.Duration(s.LateNs)))
}

// ncclRank is a rank's text, "?" when unknown.
func ncclRank(r *int) string {
	if r == nil {
		return "?"
	}
	return fmt.Sprint(*r)
}
