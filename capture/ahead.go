package capture

// Ahead appends to dst the data of the frames that follow the last one
// Next returned, as far as the Reader holds them whole in its buffer and
// up to cap(dst), and returns dst; they stay valid until the next call
// of Next. Next still returns each of them, checked as ever: Ahead
// checks only that a record lies within the buffer, and says nothing of
// a record it cannot vouch for (a captured length above the snap length)
// or of the frames of a pcapng file (none are appended). A caller reads
// ahead to prepare for the frames (analyze.Analyzer.Prefetch), not to
// know them.
func (r *Reader) Ahead(dst [][]byte) [][]byte {
	if r.err != nil || r.ng != nil {
		return dst
	}
	var w []byte
	if r.getChunk != nil {
		w = r.chunk[r.cpos:]
	} else {
		w, _ = r.in.Peek(r.in.Buffered())
	}
	for len(dst) < cap(dst) && len(w) >= pcapRecordHeaderLen {
		caplen := r.u32(w[8:12])
		if caplen > r.maxCap || len(w)-pcapRecordHeaderLen < int(caplen) {
			break
		}
		n := pcapRecordHeaderLen + int(caplen)
		dst = append(dst, w[pcapRecordHeaderLen:n:n])
		w = w[n:]
	}
	return dst
}
