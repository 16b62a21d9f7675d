package report

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/filename"
)

// Hosts is the per-host summary of a report (JSON "hosts", the text
// report's "Hosts" section): what each address sent and received, and
// which host each capture file was taken on.
type Hosts struct {
	// Addresses are the flows' addresses in address order.
	Addresses []HostAddress `json:"addresses"`
	// Files are the run's capture files in the order given.
	Files []HostFile `json:"files"`
}

// HostAddress is what one address sent (the flows it is the source of)
// and received (those it is the destination of): their messages
// (Messages.Count) and payload bytes (PayloadBytes).
type HostAddress struct {
	Addr             string `json:"addr"`
	SentMessages     uint64 `json:"sent_messages"`
	SentBytes        uint64 `json:"sent_bytes"`
	ReceivedMessages uint64 `json:"received_messages"`
	ReceivedBytes    uint64 `json:"received_bytes"`
}

// HostFile is the host a capture file was taken on (HostTally.Host): nil
// when its flows do not tell. Pair, when Host is nil, are the two
// addresses that every flow of the file is between: it was taken on one
// of them, or between them.
type HostFile struct {
	File string   `json:"file"`
	Host *string  `json:"host"`
	Pair []string `json:"pair,omitempty"`
}

// File is the HostFile of the flows added, taken from the capture file
// named file.
func (t *HostTally) File(file string) HostFile {
	f := HostFile{File: file, Host: t.Host()}
	if len(t.common) == 2 {
		f.Pair = slices.SortedFunc(slices.Values(t.common), compareAddr)
	}
	return f
}

// HostTally adds up a report's flows, one at a time (a report streamed
// flow by flow is never held whole), into its Hosts.
type HostTally struct {
	addrs map[string]*HostAddress
	// common are the addresses that are the source or destination of
	// every flow added (at most two).
	common []string
	flows  int
}

// TallyFlows is the HostTally of flows.
func TallyFlows(flows []analyze.Flow) *HostTally {
	t := &HostTally{}
	for i := range flows {
		t.Add(&flows[i])
	}
	return t
}

// Add counts flow f.
func (t *HostTally) Add(f *analyze.Flow) {
	if t.addrs == nil {
		t.addrs = map[string]*HostAddress{}
	}
	src, dst := t.addr(f.Src), t.addr(f.Dst)
	src.SentMessages += f.Messages.Count
	src.SentBytes += f.PayloadBytes
	dst.ReceivedMessages += f.Messages.Count
	dst.ReceivedBytes += f.PayloadBytes
	if t.flows == 0 {
		t.common = []string{f.Src}
		if f.Dst != f.Src {
			t.common = append(t.common, f.Dst)
		}
	} else {
		t.common = slices.DeleteFunc(t.common, func(a string) bool { return a != f.Src && a != f.Dst })
	}
	t.flows++
}

// Hosts is the Hosts of the flows added, those of one capture file
// named file.
func (t *HostTally) Hosts(file string) *Hosts {
	return &Hosts{Addresses: t.Addresses(), Files: []HostFile{t.File(file)}}
}

// addr is the HostAddress of a, made when first seen.
func (t *HostTally) addr(a string) *HostAddress {
	h := t.addrs[a]
	if h == nil {
		h = &HostAddress{Addr: a}
		t.addrs[a] = h
	}
	return h
}

// Host is the host the flows were captured on: the one address that is
// the source or destination of every flow (docs/analysis.md, "Hosts").
// It is nil without flows, when no address is common to all (a switch
// mirror), and when two are (the flows of one pair of hosts only, seen
// alike from either end).
func (t *HostTally) Host() *string {
	if len(t.common) != 1 {
		return nil
	}
	h := t.common[0]
	return &h
}

// Addresses are the addresses counted, in address order (compareAddr).
func (t *HostTally) Addresses() []HostAddress {
	out := make([]HostAddress, 0, len(t.addrs))
	for _, h := range t.addrs {
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b HostAddress) int { return compareAddr(a.Addr, b.Addr) })
	return out
}

// compareAddr orders addresses (analyze.ParseAddr): IP addresses
// numerically, then LIDs numerically, then any other by name.
func compareAddr(a, b string) int {
	rank := func(s string) (analyze.Addr, int) {
		x, err := analyze.ParseAddr(s)
		switch {
		case err != nil:
			return x, 2
		case x.IsLID:
			return x, 1
		}
		return x, 0
	}
	x, rx := rank(a)
	y, ry := rank(b)
	if rx != ry {
		return cmp.Compare(rx, ry)
	}
	switch rx {
	case 0:
		return x.IP.Compare(y.IP)
	case 1:
		return cmp.Compare(x.LID, y.LID)
	}
	return cmp.Compare(a, b)
}

// writeHosts writes the "Hosts" text section: a row per address, and the
// host each file was taken on. It is written for a run of several files,
// or when a file's host is known: a single capture of one pair's traffic,
// or a mirror's, says no more there than its flow table does.
func (t *textWriter) writeHosts(h *Hosts) {
	if h == nil || len(h.Addresses) == 0 {
		return
	}
	if len(h.Files) < 2 && !slices.ContainsFunc(h.Files, func(f HostFile) bool { return f.Host != nil }) {
		return
	}
	w, p := t.w, t.p
	fmt.Fprintln(w)
	p.Bold.Fprintln(w, "Hosts")
	header := []cell{{text: "ADDRESS", left: true}, {text: "SENT MESSAGES"}, {text: "SENT BYTES"}, {text: "RECEIVED MESSAGES"}, {text: "RECEIVED BYTES"}}
	p.table(w, "  ", header, len(h.Addresses), func(i int, row []cell) []cell {
		a := &h.Addresses[i]
		return append(row, cell{text: a.Addr, left: true},
			cell{text: fmt.Sprint(a.SentMessages)}, cell{text: humanBytes(a.SentBytes)},
			cell{text: fmt.Sprint(a.ReceivedMessages)}, cell{text: humanBytes(a.ReceivedBytes)})
	})
	for _, f := range h.Files {
		on := "taken on no one host (no address is in all its flows)"
		switch {
		case f.Host != nil:
			on = "taken on " + *f.Host
		case len(f.Pair) == 2:
			on = fmt.Sprintf("taken on %s or %s, or between them (all its flows are between the two)", f.Pair[0], f.Pair[1])
		}
		fmt.Fprintf(w, "  %s: %s\n", filename.Text(f.File), on)
	}
}
