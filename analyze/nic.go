package analyze

import (
	"fmt"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze/internal/conn"
	"github.com/roce-dissect/roce-dissect/analyze/internal/nic"
	"github.com/roce-dissect/roce-dissect/layers"
)

// NIC behaviour: how the NICs of an RC/UC QP pair recover from loss and
// react to congestion, measured from the capture's timestamps (see
// docs/analysis.md, "NIC behaviour"), is the stage of package nic. The
// Analyzer feeds it the requests, NAKs, CNPs and ACK latencies of each
// request flow (its flowState.nic), finds the request flow a response or
// CNP concerns, and words the stage's facts as findings.

// NIC is the NIC behaviour of a request flow and its response flow.
type NIC = nic.NIC

// Figure summarises samples: nanoseconds (_ns) or bits per second (_bps).
type Figure = nic.Figure

// Capture sides.
const (
	SideRequester = nic.SideRequester
	SideResponder = nic.SideResponder
	SideMirror    = nic.SideMirror
	SideUnknown   = nic.SideUnknown
)

// nicRequest converts an observation to the stage's Order by value: the
// two lists are the same (else this does not compile).
var _ [0]struct{} = [uint8(nic.InOrder-nic.Order(obsInOrder)) | uint8(nic.Gap-nic.Order(obsGap)) |
	uint8(nic.Fill-nic.Order(obsFill)) | uint8(nic.Old-nic.Order(obsOld))]struct{}{}

// nicRequest feeds a request of f to the NIC stage.
func (a *Analyzer) nicRequest(f *flowState, p *Packet, obs observation, isDup bool, span uint32) {
	if f.transport != layers.TransportRC && f.transport != layers.TransportUC {
		return
	}
	t, psn, bytes, ce := p.Time.UnixNano(), p.BTH.PSN, uint32(p.CarriedLength), p.ECN == 3
	if f.nic.Quiet(t, psn, bytes, nic.Order(obs), isDup, ce) {
		return // no Request to build: see nic.Flow.Quiet
	}
	a.nic.Request(&f.nic, nic.Request{T: t, PSN: psn, Bytes: bytes, Span: span,
		High: f.psn.high, Order: nic.Order(obs), Dup: isDup, CE: ce})
	if a.nic.Pending() {
		a.nicFacts(f, p)
	}
}

// nicFacts reports the facts of the request p of f as findings.
func (a *Analyzer) nicFacts(f *flowState, p *Packet) {
	for _, x := range a.nic.Facts() {
		kind, sev := nicKind(x.Kind)
		var fd *Finding
		if x.Kind == nic.NoSlowdown {
			fd = a.findingAt(x.Frame, x.Time, kind, sev, f)
		} else {
			fd = a.finding(p, kind, sev, f)
		}
		if fd != nil {
			fd.Detail = nicDetail(a.opts.Pieces, &x)
		}
	}
}

// nicKind is the finding kind and severity of a NIC fact.
func nicKind(k nic.Kind) (Kind, Severity) {
	switch k {
	case nic.RNREarly:
		return KindRNREarly, SeverityError
	case nic.Restart, nic.Skip:
		return KindGoBackN, SeverityError
	case nic.NoSlowdown:
		return KindCNPNoSlowdown, SeverityWarning
	}
	return KindCNPTooClose, SeverityWarning
}

// nicDetail words a NIC fact, its frames named by pieces.
func nicDetail(pieces *Pieces, x *nic.Fact) string {
	switch x.Kind {
	case nic.RNREarly:
		return fmt.Sprintf("PSN %d resent %s after the RNR NAK of %s, which asked for %s", x.PSN, time.Duration(x.Wait), pieces.FrameName(x.Ref), time.Duration(x.Limit))
	case nic.Restart:
		return fmt.Sprintf("resend after the NAK of %s restarted at PSN %d, not at the NAKed PSN %d", pieces.FrameName(x.Ref), x.PSN, x.From)
	case nic.Skip:
		return fmt.Sprintf("go-back-N after the NAK of %s skipped PSNs %d–%d, sent before the NAK", pieces.FrameName(x.Ref), x.From, x.To)
	case nic.NoSlowdown:
		return fmt.Sprintf("sender rate %s after the CNP, %s before: no slowdown", bps(x.Rate), bps(x.Before))
	}
	return fmt.Sprintf("CNP %s after the CNP of %s; this NIC's CNPs are otherwise at least %s apart", time.Duration(x.Wait), pieces.FrameName(x.Ref), time.Duration(x.Limit))
}

func bps(v int64) string { return fmt.Sprintf("%.3g Gbit/s", float64(v)/1e9) }

// nicReqFlow returns the request flow a response or CNP flow concerns.
func (a *Analyzer) nicReqFlow(r *flowState, psn uint32) *flowState {
	if r.peer >= 0 {
		return a.flowList[r.peer]
	}
	return a.peerOf(r, psn)
}

// nicResponse feeds the NIC stage a response of flow r: NAKs and RNR
// NAKs of the requests of its peer.
func (a *Analyzer) nicResponse(r *flowState, p *Packet) {
	if p.AETH == nil || p.AETH.IsACK() {
		return
	}
	rnr := p.AETH.IsRNRNAK()
	if !rnr && p.AETH.NAKCode() != layers.NAKPSNSequenceError {
		return
	}
	f := a.nicReqFlow(r, p.BTH.PSN)
	if f == nil || !f.nic.Has() {
		return
	}
	psn := p.BTH.PSN
	k := nic.NAK{T: p.Time.UnixNano(), Frame: p.Frame, PSN: psn, RNR: rnr}
	if rnr {
		k.Timer = int64(p.AETH.RNRTimer())
	} else {
		t := &f.psn
		k.Captured = t.seen && psnDiff(psn, t.low) >= 0 && psnDiff(psn, t.high) <= 0 && !t.anyIn(psn, psn)
	}
	a.nic.NAK(&f.nic, k)
}

// nicCNP feeds the NIC stage a CNP of flow c (to the QP of the request
// flow's sender).
func (a *Analyzer) nicCNP(c *flowState, p *Packet) {
	f := a.peerFlow(c)
	if f == nil {
		f = a.onlyRequester(c)
	}
	if f != nil {
		a.nic.CNP(&f.nic, p.Time, p.Frame)
	}
}

// onlyRequester returns the request flow a CNP flow's CNPs concern when
// the flows are not paired yet (no CM handshake captured, no ACK seen):
// the only RC/UC request flow of the reverse direction, if there is one.
func (a *Analyzer) onlyRequester(c *flowState) *flowState {
	var found *flowState
	cands := a.reverse(c)
	for _, gi := range cands[:min(len(cands), maxPairCandidates)] {
		if g := a.flowList[gi]; g.nic.Has() {
			if found != nil {
				return nil
			}
			found = g
		}
	}
	return found
}

// nicFindings returns the findings of nicReport without keeping its NIC
// object: most flows have none to give (no CNP), and building their NIC
// objects twice cost a report of 200,000 flows 600 MB of garbage.
func (a *Analyzer) nicFindings(f *flowState) []Finding {
	if !f.nic.HasFacts() {
		return nil
	}
	_, fs := a.nicReport(f, nil)
	return fs
}

// nicReport builds the NIC object of a request flow (nil when it has
// none) and the findings only the end can tell (nic.Stage.Report),
// into reuse when not nil.
func (a *Analyzer) nicReport(f *flowState, reuse *NIC) (*NIC, []Finding) {
	if !f.nic.Has() {
		return nil, nil
	}
	in := nic.In{Requests: f.requestPackets()}
	if r := a.peerFlow(f); r != nil && r.resp != nil {
		in.ACKs = r.resp.ACKs
	}
	if f.conn >= 0 {
		if to, ok := conn.ACKTimeout(a.conns.List[f.conn]); ok {
			in.ACKTimeout = to
		}
	}
	out, facts := a.nic.Report(&f.nic, in, reuse)
	var fs []Finding
	for i := range facts {
		x := &facts[i]
		kind, sev := nicKind(x.Kind)
		fs = append(fs, Finding{Frame: x.Frame, Time: x.Time, Kind: kind, Severity: sev, Flow: f.flowID(), File: a.opts.File, Detail: nicDetail(a.opts.Pieces, x)})
	}
	return out, fs
}
