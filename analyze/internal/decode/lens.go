package decode

import (
	"errors"
	"fmt"
)

// MaxOriginalLength is the largest original (wire) length a frame is
// believed to have: libpcap's MAXIMUM_SNAPLEN (256 KiB), above any
// Ethernet jumbo frame, IB packet (LRH PktLen ≤ 8 KiB) or IP datagram. A
// capture's record header can say anything up to 4 GiB; a length above this
// is counted as the frame's captured length instead
// (Capture.OriginalLengthsClamped) and is a bad_original_length finding, so
// that four frames cannot make a report of gigabytes and terabits.
const MaxOriginalLength = 262144

// ClampOriginalLength returns the original length to account for a frame
// whose record says orig and that has caplen bytes captured.
func ClampOriginalLength(orig, caplen int) int {
	if orig > MaxOriginalLength || orig < 0 {
		return caplen
	}
	return orig
}

// errUDPLength reports a UDP length beyond the IP payload.
var errUDPLength = errors.New("UDP length beyond the IP payload")

// ErrFrameLength is the error of a malformed frame recorded whole whose
// length fields point past its end (docs/robustness.md: a capture tool's
// systematic cut is told apart from such a frame), or of an ERF record
// shorter than its own headers.
var ErrFrameLength = errors.New("length fields past the end of the frame")

// Lens is what the length fields of a frame declare.
type Lens struct {
	// end is the frame length the network headers imply (the largest of
	// their offsets in the frame plus the length each declares: IPv4
	// total length, IPv6 header + payload length, GRH + PayLen, LRH
	// PktLen + VCRC; a packet inside a tunnel may declare more than the
	// tunnel when a mirror cut it); 0 when unknown.
	end int
	// ipPayload is the IP payload length the innermost IP header
	// declares (the one around the RDMA packet when it arrived in a
	// tunnel); -1 when there is no IP header.
	ipPayload int
	set       bool
	// n is the packet length the innermost network header declares (from
	// that header on): the RDMA packet's, without the tunnels around it.
	n int
	// record is the end an ERF record declares: the larger of its record
	// length RLen and its headers plus wire length WLen; 0 when none.
	record int
	// badRecord: an ERF record length RLen shorter than its own headers.
	badRecord bool
	rlen, hdr int
}

// network records the lengths of a network header: off is its offset in
// the frame, n the packet length from it on, payload the IP payload
// length (-1 for a GRH or LRH). The innermost header's say how long the
// RDMA packet is.
func (l *Lens) network(off, n, payload int) {
	l.set, l.end = true, max(l.end, off+n)
	l.ipPayload, l.n = payload, n
}

// erf records the lengths an ERF record of n bytes declares: its wire
// length after hdr bytes of headers, and its record length RLen unless
// that is only the padding to 8 bytes that a pcap writer may drop (real
// DAG captures: 306 bytes of a record whose RLen says 312).
func (l *Lens) erf(rlen, wlen, hdr, n int) {
	l.record = hdr + wlen
	if rlen > (n+7)&^7 {
		l.record = max(l.record, rlen)
	}
	l.badRecord, l.rlen, l.hdr = rlen < hdr, rlen, hdr
}

// Declared is the frame length the length fields declare: the outermost
// network header's end, or an ERF record's if longer; 0 when unknown.
func (l *Lens) Declared() int {
	if !l.set {
		return l.record
	}
	return max(l.end, l.record)
}

// Packet is the packet length the innermost network header declares, from
// that header on: the RDMA packet's, without the tunnels around it.
func (l *Lens) Packet() int { return l.n }

// checkUDP checks a RoCE v2 UDP length against the IP payload.
func (l *Lens) checkUDP(udpLen int) error {
	if !l.set || l.ipPayload < 0 || udpLen <= l.ipPayload {
		return nil
	}
	return fmt.Errorf("RoCEv2 packet: %w: UDP length %d, IP payload %d bytes", errUDPLength, udpLen, l.ipPayload)
}

// recordErr is the error of an RDMA packet of encapsulation e in an ERF
// record whose record length is shorter than its own headers (badRecord).
func (l *Lens) recordErr(e Encap) error {
	return fmt.Errorf("%s packet: %w: ERF record length %d is shorter than its %d bytes of headers", e, ErrFrameLength, l.rlen, l.hdr)
}
