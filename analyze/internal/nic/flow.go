package nic

import (
	"time"
	"unsafe"
)

// Flow is the NIC state of one request flow, held by the flow: the first
// request alone (a flow of one request, the most common, allocates
// nothing), then a pointer to the state the second request or the first
// NAK, CNP or CE mark allocates. Its zero value is a flow with no request
// yet; 24 bytes.
type Flow struct {
	s     *state
	first txRec // the first request while s is nil, when first.psn has held
}

// MaxFlowBytes bounds the heap the NIC state of one flow holds, every
// figure past exact samples with its histogram full (4 KiB of counts),
// and its CNP interval candidates (TestWorstFlowMemory).
const MaxFlowBytes = 36 << 10

// held marks Flow.first as a request: PSNs are 24-bit, the bit is free.
const held = 1 << 31

// Has says the flow is an RC/UC request flow the stage follows: it was
// fed a request.
func (f *Flow) Has() bool { return f.s != nil || f.first.psn&held != 0 }

// Mem returns where the flow's allocated state is and its size (nil, 0
// when none), for a caller that reads it into the caches ahead of its
// packets.
func (f *Flow) Mem() (unsafe.Pointer, uintptr) {
	if f.s == nil {
		return nil, 0
	}
	return unsafe.Pointer(f.s), unsafe.Sizeof(*f.s)
}

// window is the number of requests the rate before and after a CNP is
// measured over.
const window = 8

// txRec is one request of the ring of the last ones sent.
type txRec struct {
	psn   uint32
	bytes uint32
	t     int64
}

// cnpCand is one of the smallest CNP intervals, kept with its frames for
// the cnp_too_close findings.
type cnpCand struct {
	ns          int64
	frame, prev uint64
	t           time.Time
}

const maxCands = 8

// state is the NIC behaviour state of a request flow: the ring of its
// last requests and its response latency, which every request flow with
// ACKs writes; the rest, which only NAKs, resends, CNPs and CE marks
// write, in events, allocated by the first of them.
type state struct {
	ring  [window]txRec
	ringN int
	ringH int
	resp  *stat // figResponse, allocated by its first sample
	*events
}

// events is the NIC state of a flow with NAKs, resends, CNPs or CE
// marks.
type events struct {
	stats [figures]*stat // all but figResponse (state.resp), allocated by their first sample

	// The NAK or RNR NAK waiting for its resend.
	nakPending bool
	nakRNR     bool
	nakPSN     uint32
	nakT       int64
	nakTimer   int64 // RNR timer, ns
	nakFrame   uint64
	// The go-back-N resend in progress.
	epActive  bool
	epNAK     bool
	epExpect  uint32
	epEnd     uint32
	epFrame   uint64 // its NAK's frame
	gbn       uint64
	timeouts  uint64
	rnrEarly  uint64
	up, down  uint64
	cePending bool
	ceT       int64
	ceSeen    bool
	cnps      uint64
	lastCNP   int64
	lastFrame uint64
	cands     *[maxCands]cnpCand // allocated by the first CNP interval
	candN     int
	// The rate window after the last CNP.
	afterOn    bool
	afterN     int
	afterBytes uint64
	afterT0    int64
	afterLastT int64
	afterLastB uint32
	before     int64 // rate before that CNP, bps (0: unknown)
	cnpFrame   uint64
	cnpTime    time.Time
	noSlow     uint64
}

// state returns the flow's state, allocating it: the first request,
// kept in the flow until then, goes into its ring.
func (f *Flow) state() *state {
	if f.s == nil {
		f.s = &state{}
		if f.first.psn&held != 0 {
			f.s.ring[0] = f.first
			f.s.ring[0].psn &^= held
			f.s.ringH, f.s.ringN = 1, 1
			f.first = txRec{}
		}
	}
	return f.s
}

// add adds a sample to a figure.
func (n *state) add(fig int, v int64) {
	if v < 0 {
		return // measured across the capture's clock going back: no figure
	}
	st := &n.resp
	if fig != figResponse {
		st = &n.ev().stats[fig]
	}
	if *st == nil {
		*st = &stat{}
	}
	(*st).add(v)
}

// stat returns a figure's samples, nil when it has none.
func (n *state) stat(fig int) *stat {
	switch {
	case fig == figResponse:
		return n.resp
	case n.events == nil:
		return nil
	}
	return n.stats[fig]
}

// ev returns the flow's event state, allocating it.
func (n *state) ev() *events {
	if n.events == nil {
		n.events = &events{}
	}
	return n.events
}

// push adds a request to the ring of the last ones sent.
func (n *state) push(r txRec) {
	n.ring[n.ringH] = r
	n.ringH = (n.ringH + 1) % window
	if n.ringN < window {
		n.ringN++
	}
}

// addCand keeps the maxCands smallest CNP intervals.
func (n *state) addCand(c cnpCand) {
	if n.cands == nil {
		n.cands = new([maxCands]cnpCand)
	}
	if n.candN < maxCands {
		n.cands[n.candN] = c
		n.candN++
		return
	}
	worst := 0
	for i := 1; i < maxCands; i++ {
		if n.cands[i].ns > n.cands[worst].ns {
			worst = i
		}
	}
	if c.ns < n.cands[worst].ns {
		n.cands[worst] = c
	}
}
