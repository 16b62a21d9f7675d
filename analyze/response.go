package analyze

import (
	"fmt"

	"github.com/roce-dissect/roce-dissect/layers"
)

// response accounts a response packet (ACK/NAK, READ response, atomic ACK).
func (a *Analyzer) response(f *flowState, p *Packet, payload int) {
	op := p.BTH.Opcode
	if f.resp == nil {
		f.resp = new(Responses)
	}
	f.resp.Packets++
	a.responseEvidence(f, p)
	a.nicResponse(f, p)
	switch op.Operation() {
	case layers.OperationRDMAReadResponseFirst, layers.OperationRDMAReadResponseMiddle,
		layers.OperationRDMAReadResponseLast, layers.OperationRDMAReadResponseOnly:
		f.resp.ReadResponses++
		c := f.rare()
		if c.respMsg == nil {
			c.respMsg = &msgStream{}
		}
		a.reassemble(f, c.respMsg, p, payload, false, untracked)
	case layers.OperationAtomicAcknowledge:
		f.resp.AtomicACKs++
	}
	if p.AETH == nil {
		return
	}
	switch p.AETH.Type() {
	case layers.AckTypeACK:
		if op.Operation() == layers.OperationAcknowledge {
			f.resp.ACKs++
		}
		a.ackRTT(f, p)
	case layers.AckTypeNAK:
		f.resp.NAKs++
		if f.resp.NAKCodes == nil {
			f.resp.NAKCodes = make(map[string]uint64)
		}
		code := p.AETH.NAKCode().String()
		f.resp.NAKCodes[code]++
		if fd := a.finding(p, KindNAK, SeverityError, f); fd != nil {
			fd.Detail = fmt.Sprintf("NAK %s at PSN %d", code, p.BTH.PSN)
		}
	case layers.AckTypeRNRNAK:
		f.resp.RNRNAKs++
		if f.resp.RNRTimers == nil {
			f.resp.RNRTimers = make(map[string]uint64)
		}
		d := p.AETH.RNRTimer().String()
		f.resp.RNRTimers[d]++
		if fd := a.finding(p, KindRNRNAK, SeverityWarning, f); fd != nil {
			fd.Detail = fmt.Sprintf("RNR NAK at PSN %d, retry after %s", p.BTH.PSN, d)
		}
	}
}

// ackRTT matches an ACK against the pending requests of the reverse flow.
func (a *Analyzer) ackRTT(f *flowState, p *Packet) {
	req := a.peerOf(f, p.BTH.PSN)
	if req == nil {
		return
	}
	i, ok := req.pending.find(p.BTH.PSN)
	if !ok {
		return
	}
	e := req.pending.newest(i)
	if req.rtt == nil {
		req.rtt = new(rttHist)
	}
	req.rtt.Add(p.Time.UnixNano() - e.t)
	a.nic.Response(&req.nic, p.Time.UnixNano()-e.t)
	req.pending.keepNewest(i) // older entries are acknowledged too
}

// peerOf returns the request flow an ACK in f answers: the reverse flow
// linked by a CM connection or found earlier, else the one of the reverse
// direction whose pending requests hold the acknowledged PSN, or which
// jumped over it (a NAK names the PSN lost, which no request pending
// holds; without a CM connection, it must still reach its requests).
func (a *Analyzer) peerOf(f *flowState, psn uint32) *flowState {
	if f.peer >= 0 {
		return a.flowList[f.peer]
	}
	// Look among the flows of the reverse direction, a bounded number of
	// them a bounded number of times: unmatched ACKs must not cost a scan
	// of every flow each.
	if f.pairTries >= maxPairTries {
		return nil
	}
	f.pairTries++
	cands := a.reverse(f)
	for _, gi := range cands[:min(len(cands), maxPairCandidates)] {
		g := a.flowList[gi]
		if g.peer >= 0 {
			continue
		}
		if _, ok := g.pending.find(psn); ok || g.psn.jumpedOver(psn) {
			f.peer, g.peer = g.index, f.index
			return g
		}
	}
	return nil
}

// Bounds of the search for the request flow an ACK answers.
const (
	maxPairTries      = 16
	maxPairCandidates = 256
)
