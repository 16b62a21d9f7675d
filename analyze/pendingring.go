package analyze

// pendingReq is a request waiting for its ACK, for the RTT: the last PSN
// it reserves (the PSN its ACK carries) and when it was seen.
type pendingReq struct {
	psn uint32
	t   int64
}

// pendingLen bounds the requests a flow keeps awaiting an ACK.
const pendingLen = 64

// pendingRing holds a flow's last pendingLen requests awaiting an ACK.
// Its buffer grows as requests come, up to pendingLen (most flows never
// fill it: its memory is paid by the flows that use it); from then on the
// newest overwrites the oldest. The entries are always read newest first,
// by age: newest(0) is the last one pushed.
type pendingRing struct {
	buf  []pendingReq
	head uint8 // where the next push goes: len(buf) until the ring is full
	n    uint8 // entries still awaiting an ACK, the newest n pushed
}

// push adds the newest request, dropping the oldest when the ring is full.
func (r *pendingRing) push(e pendingReq) {
	if len(r.buf) < pendingLen {
		r.buf = append(r.buf, pendingReq{})
	}
	r.buf[r.head] = e
	r.head = uint8((int(r.head) + 1) % pendingLen)
	if r.n < pendingLen {
		r.n++
	}
}

// len returns the number of requests awaiting an ACK.
func (r *pendingRing) len() int { return int(r.n) }

// newest returns the request of age i (0: the newest), i < len().
func (r *pendingRing) newest(i int) pendingReq {
	return r.buf[(int(r.head)-1-i+pendingLen)%pendingLen]
}

// find returns the age of the newest request awaiting an ACK for psn.
func (r *pendingRing) find(psn uint32) (int, bool) {
	for i := range r.len() {
		if r.newest(i).psn == psn {
			return i, true
		}
	}
	return 0, false
}

// keepNewest keeps the i newest requests awaiting an ACK: the older ones
// are acknowledged.
func (r *pendingRing) keepNewest(i int) {
	r.n = uint8(min(i, int(r.n)))
}
