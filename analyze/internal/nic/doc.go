// Package nic is the NIC behaviour stage of the analyzer: how the NICs of
// an RC or UC queue pair recover from loss and react to congestion,
// measured from a capture's timestamps (docs/analysis.md, "NIC
// behaviour").
//
// Use it with one Stage per analyzer and one Flow per request flow,
// held by the flow (the zero value is ready; a flow of one request
// allocates nothing). Feed it in capture order:
//
//	var s nic.Stage
//	var f nic.Flow                       // in the request flow's state
//	if !f.Quiet(t, psn, bytes, o, dup, ce) { // each request of an RC/UC flow:
//		s.Request(&f, nic.Request{...})  // those Quiet did not take
//	}
//	s.NAK(&f, nic.NAK{...})              // a NAK or RNR NAK of its reverse flow
//	s.CNP(&f, t, frame)                  // a CNP to its sender's QP
//	s.Response(&f, ns)                   // a request → ACK latency
//	s.CE(&f, t)                          // a CE mark a later capture point saw
//	for _, x := range s.Facts() { ... }  // after each event: findings, as numbers
//	part, facts := s.Report(&f, nic.In{...}, nil)
//	all := nic.Merge(part, otherPart)    // the same flow in another file or shard
//
// The caller decides which request flow a NAK, ACK or CNP concerns (the
// stage knows no addresses or QPs), how a request stood in its PSN
// stream (Order), and words the facts (Fact) as findings. The report
// part, NIC, is the JSON object "nic" of a flow; analyze.NIC is an alias.
//
// A flow's state is fixed in size: 24 bytes in the flow, then a ring of
// its last 8 requests (160 bytes) from its second request, and the
// state of NAKs, resends, CNPs and CE marks from the first of them, with
// up to 8 figures of 15 samples, each switching to a histogram (package
// hist) beyond; at most MaxFlowBytes. An event costs no allocation but
// the first of a figure or of a state.
package nic
