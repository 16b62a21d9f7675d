package synth

import (
	"bytes"
	"sort"

	"github.com/roce-dissect/roce-dissect/internal/wrap"
	"github.com/roce-dissect/roce-dissect/layers"
)

// Truth is what a capture contains, computed by the generator from what it
// wrote. It is written as JSON next to the capture (see docs of each field
// for the definitions the analyzer shares).
type Truth struct {
	Scenario    string       `json:"scenario"`
	Encap       string       `json:"encap"`
	LinkType    int          `json:"link_type"`
	Seed        uint64       `json:"seed"`
	Frames      int          `json:"frames"`
	RoCEPackets int          `json:"roce_packets"`
	Connections []Connection `json:"connections"`
	Flows       []*Flow      `json:"flows"`
	Capture     struct {
		// NotCaptured sums the flows' requests.missing_not_captured.
		NotCaptured int64 `json:"not_captured"`
		// ICRCPortRewritten counts the packets whose UDP source port 4791
		// hides the port their ICRC was computed over (Config.SnifferSrcPort).
		ICRCPortRewritten int `json:"icrc_port_rewritten,omitempty"`
	} `json:"capture"`
	// CutFrames counts the frames cut with original length = captured
	// length (Config.CutFrames); Malformed the malformed frames written
	// (Config.ShortMAD).
	CutFrames int `json:"cut_frames"`
	Malformed int `json:"malformed"`
	// Findings are every finding the analyzer should report, in frame
	// order (see tracker.finding).
	Findings []Finding `json:"findings"`
	// Pause frames (Config.Pause; truthpause.go), absent without: the
	// link speed their quanta are timed at (bit/s), the storm threshold
	// (ns), one PauseStats per sender MAC, kind and priority, sorted by
	// src_mac, kind, priority, and the storms, in the same order then by
	// start_frame. Frames counts the pause frames, RoCEPackets does not.
	LinkSpeedBps          int64        `json:"link_speed_bps,omitempty"`
	PauseStormThresholdNs int64        `json:"pause_storm_threshold_ns,omitempty"`
	Pause                 []PauseStats `json:"pause,omitempty"`
	PauseStorms           []PauseStorm `json:"pause_storms,omitempty"`
	// Encapsulation is what --wrap (Config.Wrap; wrap.go) put around the
	// frames: the frames per chain and the tunnels; absent without.
	Encapsulation *wrap.Truth `json:"encapsulation,omitempty"`
}

// Finding is a finding the capture holds: its kind and severity as the
// analyzer names them (docs/analysis.md) and the frame it is at.
type Finding struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	Frame    int    `json:"frame"`
}

// Endpoint is one side of a CM connection.
type Endpoint struct {
	// QPN and StartingPSN are null when the capture cut them.
	QPN *uint32 `json:"qpn"`
	// StartingPSN is the StartingPSN field of this side's own CM message
	// (REQ for the requester, REP for the responder): where the PSNs it
	// expects to receive start.
	StartingPSN *uint32 `json:"starting_psn"`
	// SendPSN is where this side's requests start: the other side's
	// StartingPSN field; null when the capture cut that field.
	SendPSN *uint32 `json:"send_psn"`
	IP      string  `json:"ip"`
}

// Connection is a connection set up by CM REQ/REP/RTU.
type Connection struct {
	Requester Endpoint `json:"requester"`
	Responder Endpoint `json:"responder"`
	PathMTU   *int     `json:"path_mtu"` // null when the capture cut it
	// State is "disconnected" after DREQ/DREP, else "established".
	State string `json:"state"`
	// Truncated is set when the snap length cut the REQ's or the REP's
	// fixed fields (CutMessages names which): the fields it hid are null.
	Truncated   bool     `json:"truncated,omitempty"`
	CutMessages []string `json:"cut_messages,omitempty"`
}

// Flow is the traffic of one (source, destination, DestQP): requests of
// one side and responses/CNPs to it.
type Flow struct {
	Src          string `json:"src"`
	Dst          string `json:"dst"`
	DestQP       uint32 `json:"dest_qp"`
	Transport    string `json:"transport"`
	Packets      int    `json:"packets"`
	PayloadBytes int64  `json:"payload_bytes"`
	Requests     struct {
		Packets  int     `json:"packets"`
		PSNFirst *uint32 `json:"psn_first"`
		PSNLast  *uint32 `json:"psn_last"`
		Missing  int64   `json:"missing"`
		// MissingNotCaptured: missing PSNs the responder acknowledged
		// (a later response covers them) and nobody resent.
		MissingNotCaptured int64 `json:"missing_not_captured"`
		// MissingLost: missing PSNs NAKed or resent.
		MissingLost      int64    `json:"missing_lost"`
		Gaps             []PSNGap `json:"gaps"`
		Retransmitted    int      `json:"retransmitted"`
		RetransmitCauses struct {
			NAK     int `json:"nak"`
			RNR     int `json:"rnr"`
			Timeout int `json:"timeout"`
		} `json:"retransmit_causes"`
		Duplicates int `json:"duplicates"`
		OutOfOrder int `json:"out_of_order"`
	} `json:"requests"`
	Responses struct {
		ACKs          int `json:"acks"`
		NAKs          int `json:"naks"`
		RNRNAKs       int `json:"rnr_naks"`
		ReadResponses int `json:"read_responses"`
		AtomicACKs    int `json:"atomic_acks"`
	} `json:"responses"`
	Messages struct {
		Count int   `json:"count"`
		Bytes int64 `json:"bytes"`
	} `json:"messages"`
	MTU struct {
		Inferred *int `json:"inferred"`
	} `json:"mtu"`
	Congestion struct {
		ECNCE int `json:"ecn_ce"`
		CNPs  int `json:"cnps"`
	} `json:"congestion"`
	ICRC struct {
		OK           int `json:"ok"`
		Bad          int `json:"bad"`
		Unverifiable int `json:"unverifiable"`

		// PortRewritten counts the packets of OK written with UDP source
		// port 4791 over an ICRC of their real port (Config.SnifferSrcPort),
		// and OriginalSrcPorts lists those real ports.
		PortRewritten    int      `json:"port_rewritten,omitempty"`
		OriginalSrcPorts []uint16 `json:"original_src_ports,omitempty"`
	} `json:"icrc"`
	// NIC is the NIC behaviour of an RC request flow (truthnic.go).
	NIC *NIC `json:"nic,omitempty"`
	// PausedNs is the length of the intersection of the flow's span
	// [first packet time, last packet time] with the union, over all
	// senders, of the paused intervals (see PauseStats) of the flow's
	// priority: those of PFC for that priority and those of 802.3x, which
	// pause every priority. The flow's priority is that of its first
	// packet that is not a CNP (of its first CNP if it has only CNPs); a
	// packet's priority is its VLAN PCP in an 802.1Q frame, else its
	// DSCP>>3 (IPv4 TOS, IPv6 or RoCE v1 GRH traffic class, >>5). Times
	// are the timestamps as written. Absent when 0.
	PausedNs int64 `json:"paused_ns,omitempty"`
}

// PSNGap is a range of request PSNs never seen in the capture.
type PSNGap struct {
	From  uint32 `json:"from"`
	To    uint32 `json:"to"`
	Count int64  `json:"count"`
}

// psnSpace unwraps 24-bit PSNs of one stream onto int64, 0 being the
// first PSN seen.
type psnSpace struct {
	set  bool
	base uint32
	hi   int64 // unwrapped highest PSN seen
}

func serial24(d uint32) int64 { return int64(int32(d<<8) >> 8) }

// at returns the unwrapped value of p (the first call fixes the origin).
func (s *psnSpace) at(p uint32) int64 {
	if !s.set {
		s.set, s.base = true, p
		return 0
	}
	ref := (s.base + uint32(s.hi)) & psnMask
	return s.hi + serial24(p-ref)
}

func (s *psnSpace) psn(u int64) uint32 { return (s.base + uint32(u)) & psnMask }

// intervals is a sorted set of disjoint, non-adjacent closed ranges.
type intervals [][2]int64

func (iv intervals) contains(x int64) bool {
	for i := len(iv) - 1; i >= 0; i-- {
		if x > iv[i][1] {
			return false
		}
		if x >= iv[i][0] {
			return true
		}
	}
	return false
}

// covers reports whether every value of [lo, hi] is in the set.
func (iv intervals) covers(lo, hi int64) bool {
	for i := len(iv) - 1; i >= 0; i-- {
		if iv[i][0] <= lo {
			return hi <= iv[i][1]
		}
	}
	return false
}

// add inserts [lo, hi]; the common cases (extending the last range, or a
// range after it) are O(1).
func (iv *intervals) add(lo, hi int64) {
	s := *iv
	if n := len(s); n > 0 && lo >= s[n-1][0] && lo <= s[n-1][1]+1 {
		s[n-1][1] = max(s[n-1][1], hi)
		return
	}
	if n := len(s); n == 0 || lo > s[n-1][1]+1 {
		*iv = append(s, [2]int64{lo, hi})
		return
	}
	out := s[:0:0]
	placed := false
	for _, r := range s {
		switch {
		case r[1]+1 < lo:
			out = append(out, r)
		case hi+1 < r[0]:
			if !placed {
				out = append(out, [2]int64{lo, hi})
				placed = true
			}
			out = append(out, r)
		default:
			lo, hi = min(lo, r[0]), max(hi, r[1])
		}
	}
	if !placed {
		out = append(out, [2]int64{lo, hi})
	}
	*iv = out
}

// overlap is the length of the set's intersection with [a, b), in the
// half-open measure: each range [lo, hi] counts as [lo, hi+1).
func (iv intervals) overlap(a, b int64) int64 {
	var n int64
	for _, r := range iv {
		n += max(0, min(r[1]+1, b)-max(r[0], a))
	}
	return n
}

type flowKey struct {
	src, dst int
	qp       uint32
}

type pendingMsg struct {
	resp   bool
	psn, n uint32
	size   uint32
}

type flowState struct {
	f         Flow
	req, resp psnSpace
	reqSeen   intervals // request PSNs seen (READ requests cover their range)
	reqHiSet  bool
	respSeen  intervals // READ response PSNs seen
	doneReq   intervals // PSNs of completed request messages
	doneResp  intervals // PSNs of completed READ responses
	pending   []pendingMsg
	lastReq   []byte
	loss      flowLoss // loss attribution (truthloss.go)
	nic       *nicTruth
	pause     flowPause // span and priority for the paused time (truthpause.go)
	// The last request: a PSN seen before (again), a new highest (fresh).
	again, fresh bool
}

// tracker computes the truth from the frames as they are written.
type tracker struct {
	flows map[flowKey]*flowState
	order []*flowState
	truth Truth
	// reqFlow is the request flow of each connection, which its
	// responses give evidence about.
	reqFlow map[*conn]*flowState
	// sendPSN says where a connection's requester starts, when the
	// capture shows it (the REP's StartingPSN was captured).
	sendPSN func(c *conn) (uint32, bool)
	// now is the timestamp of the frame being added, as written (ns),
	// and origLen its original length.
	now     int64
	origLen int
	// ackTimeout is a connection's Local ACK Timeout in ns, when the
	// capture holds that field of the CM REQ.
	ackTimeout func(c *conn) (int64, bool)
}

func newTracker() *tracker {
	return &tracker{flows: make(map[flowKey]*flowState), reqFlow: make(map[*conn]*flowState)}
}

// finding records a finding the analyzer should report at frame. Every
// kind of finding the generated captures hold is added by one such call.
func (t *tracker) finding(kind, severity string, frame int) {
	t.truth.Findings = append(t.truth.Findings, Finding{Kind: kind, Severity: severity, Frame: frame})
}

func transportName(c *conn, p *pkt) string {
	if p.cm != cmNone || c.kind == kindUD {
		return "UD"
	}
	if c.dc {
		return "DC"
	}
	return "RC"
}

// add records one written frame: p is what it carries, frame the captured
// bytes, status the ICRC status a decoder finds. It returns p's flow.
func (t *tracker) add(p *pkt, frame []byte, status layers.ICRCStatus) *flowState {
	t.truth.Frames++
	t.truth.RoCEPackets++
	src, dst := p.c.a, p.c.b
	if p.fromB {
		src, dst = dst, src
	}
	k := flowKey{src.idx, dst.idx, p.destQP}
	fs := t.flows[k]
	if fs == nil {
		fs = &flowState{}
		fs.f.Src, fs.f.Dst, fs.f.DestQP = src.addr, dst.addr, p.destQP
		fs.f.Transport = transportName(p.c, p)
		fs.f.Requests.Gaps = []PSNGap{}
		t.flows[k] = fs
		t.order = append(t.order, fs)
	}
	f := &fs.f
	f.Packets++
	f.PayloadBytes += int64(p.payLen)
	frameNo := t.truth.Frames
	switch status {
	case layers.ICRCOK:
		f.ICRC.OK++
	case layers.ICRCBad:
		f.ICRC.Bad++
		t.finding("bad_icrc", "error", frameNo)
	default:
		f.ICRC.Unverifiable++
	}
	if pos := p.op.Position(); (pos == layers.PositionFirst || pos == layers.PositionMiddle) && f.MTU.Inferred == nil {
		n := p.payLen
		f.MTU.Inferred = &n
	}
	if p.ce {
		f.Congestion.ECNCE++
		t.finding("ecn_ce", "info", frameNo)
	}
	switch {
	case p.op.IsCNP():
		f.Congestion.CNPs++
		t.finding("cnp", "info", frameNo)
		t.nicCNP(p, frameNo)
	case p.op.IsRequest():
		t.request(fs, p, frame)
		t.nicRequest(fs, p, frameNo)
	default:
		t.response(fs, p)
		t.nicResponse(p, frameNo)
	}
	return fs
}

func (t *tracker) request(fs *flowState, p *pkt, frame []byte) {
	f := &fs.f
	r := &f.Requests
	r.Packets++
	frameNo := t.truth.Frames
	if r.PSNFirst == nil {
		v := p.psn
		r.PSNFirst = &v
		t.startFlow(fs, p)
	}
	u := fs.req.at(p.psn)
	span := int64(max(p.span, 1))
	t.jump(fs, p, u, frameNo)
	again := fs.reqHiSet && fs.reqSeen.contains(u)
	fs.again, fs.fresh = again, !fs.reqHiSet || u > fs.req.hi
	switch {
	case !fs.reqHiSet:
		fs.reqHiSet = true
		fs.req.hi = u
	case fs.reqSeen.contains(u):
		if bytes.Equal(frame, fs.lastReq) {
			r.Duplicates++
			t.finding("duplicate", "warning", frameNo)
		} else {
			r.Retransmitted++
			t.finding("retransmission", "warning", frameNo)
			t.resent(fs, p)
		}
	case u < fs.req.hi:
		r.OutOfOrder++
		t.finding("out_of_order", "warning", frameNo)
	}
	if u > fs.req.hi {
		fs.req.hi = u
	}
	fs.reqSeen.add(u, u+span-1)
	fs.loss.end = max(fs.loss.end, u+span)
	fs.lastReq = append(fs.lastReq[:0], frame...)
	if !again {
		t.message(fs, p, u, frameNo)
	}
	if p.isMsg && p.msgLast {
		t.complete(fs, pendingMsg{psn: p.msgPSN, n: p.msgN, size: p.msgSize})
	}
}

func (t *tracker) response(fs *flowState, p *pkt) {
	f := &fs.f
	switch p.op.Operation() {
	case layers.OperationAcknowledge:
		a := layers.AETH{Syndrome: p.aeth}
		switch {
		case a.IsACK():
			f.Responses.ACKs++
			t.covered(p, 0)
		case a.IsNAK():
			f.Responses.NAKs++
			t.finding("nak", "error", t.truth.Frames)
			t.covered(p, -1)
			t.naked(p)
		case a.IsRNRNAK():
			f.Responses.RNRNAKs++
			t.finding("rnr_nak", "warning", t.truth.Frames)
			t.covered(p, -1)
		}
		return
	case layers.OperationAtomicAcknowledge:
		f.Responses.AtomicACKs++
		t.covered(p, 0)
		return
	}
	t.covered(p, 0)
	// READ responses.
	f.Responses.ReadResponses++
	u := fs.resp.at(p.psn)
	if u > fs.resp.hi {
		fs.resp.hi = u
	}
	fs.respSeen.add(u, u)
	if p.msgLast {
		t.complete(fs, pendingMsg{resp: true, psn: p.msgPSN, n: p.msgN, size: p.msgSize})
	}
}

// complete counts the message if all its PSNs have been seen, else keeps
// it for the end of the capture.
func (t *tracker) complete(fs *flowState, m pendingMsg) {
	if !t.tryComplete(fs, m) {
		fs.pending = append(fs.pending, m)
	}
}

func (t *tracker) tryComplete(fs *flowState, m pendingMsg) bool {
	sp, seen, done := &fs.req, &fs.reqSeen, &fs.doneReq
	if m.resp {
		sp, seen, done = &fs.resp, &fs.respSeen, &fs.doneResp
	}
	lo := sp.at(m.psn)
	hi := lo + int64(m.n) - 1
	if done.contains(lo) {
		return true // already counted
	}
	if !seen.covers(lo, hi) {
		return false
	}
	done.add(lo, hi)
	fs.f.Messages.Count++
	fs.f.Messages.Bytes += int64(m.size)
	return true
}

// finish resolves pending messages and the PSN gaps.
func (t *tracker) finish() *Truth {
	connsOf := make(map[*flowState][]*conn, len(t.reqFlow)) // one pass, not one per flow
	for c, rf := range t.reqFlow {
		connsOf[rf] = append(connsOf[rf], c)
	}
	for _, fs := range t.order {
		for _, m := range fs.pending {
			t.tryComplete(fs, m)
		}
		fs.pending = nil
		r := &fs.f.Requests
		if r.PSNFirst == nil {
			t.truth.Flows = append(t.truth.Flows, &fs.f)
			continue
		}
		hi := fs.req.hi
		last := fs.req.psn(hi)
		r.PSNLast = &last
		// Missing: PSNs in [0, hi] (from the first PSN of the capture to
		// the highest) not covered.
		next := int64(0)
		for _, iv := range fs.reqSeen {
			if iv[1] < next {
				continue
			}
			if iv[0] > hi {
				break
			}
			if iv[0] > next {
				r.Gaps = append(r.Gaps, PSNGap{From: fs.req.psn(next), To: fs.req.psn(iv[0] - 1), Count: iv[0] - next})
				r.Missing += iv[0] - next
				fs.loss.missing.add(next, iv[0]-1)
			}
			next = iv[1] + 1
		}
		t.attribute(fs)
		t.nicFinish(fs, connsOf[fs])
		t.truth.Flows = append(t.truth.Flows, &fs.f)
	}
	sort.Slice(t.truth.Findings, func(i, j int) bool {
		a, b := t.truth.Findings[i], t.truth.Findings[j]
		if a.Frame != b.Frame {
			return a.Frame < b.Frame
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Severity < b.Severity
	})
	if t.truth.Findings == nil {
		t.truth.Findings = []Finding{}
	}
	if t.truth.Flows == nil {
		t.truth.Flows = []*Flow{}
	}
	if t.truth.Connections == nil {
		t.truth.Connections = []Connection{}
	}
	return &t.truth
}
