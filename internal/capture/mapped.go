package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/gopacket/gopacket"
)

// OpenMapped opens the named capture file as Open does, but maps a plain
// (not compressed) pcap file into memory read-only instead of reading it:
// Next then hands out slices of the mapping, which stay valid until
// Close, not only until the next call, and reading costs no copy and no
// read call per buffer. Everything else (pcapng, gzip, a file that cannot
// be mapped, standard input) is read as Open reads it; Mapped says which.
// The frames and errors are those Open's Reader gives, byte for byte.
//
// The mapping is of the file's size when it is opened: a file that grows
// while it is read ends there, and one that shrinks faults the process
// (SIGBUS), as any program mapping a file does.
func OpenMapped(name string) (*Reader, error) {
	if name == "-" {
		return Open(name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	m := mapFile(f)
	if m == nil || !isPcapMagic(m) {
		if m != nil {
			_ = m.Close()
		}
		r, err := NewReader(f) // nothing read from f yet: it is at offset 0
		if err != nil {
			f.Close()
			return nil, err
		}
		r.closer = f
		return r, nil
	}
	f.Close() // the mapping stays without the file
	r, err := NewReader(bytes.NewReader(m))
	if err != nil {
		_ = m.Close()
		return nil, err
	}
	r.mapped, r.pos, r.closer = m, r.Offset(), m
	return r, nil
}

// Mapped returns the mapping of the file OpenMapped mapped, or nil when
// the Reader reads its input. The data Next returns is then
// Mapped()[off:off+len(data)] with off = Offset()-len(data).
func (r *Reader) Mapped() []byte { return r.mapped }

// isPcapMagic reports a classic pcap magic number at the start of b.
func isPcapMagic(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	switch binary.BigEndian.Uint32(b) {
	case magicPcapBE, magicPcapLE, magicPcapNanoBE, magicPcapNanoLE:
		return true
	}
	return false
}

// nextMapped reads one classic pcap record from the mapping, with the
// checks and messages of nextPcap.
func (r *Reader) nextMapped() (ci gopacket.CaptureInfo, data []byte, err error) {
	start := r.pos
	rest := r.mapped[start:]
	if len(rest) < pcapRecordHeaderLen {
		if len(rest) == 0 {
			return ci, nil, io.EOF
		}
		return ci, nil, r.short(start, "record", "record header", len(rest), pcapRecordHeaderLen)
	}
	caplen := r.u32(rest[8:12])
	if caplen > r.maxCap {
		return ci, nil, r.capError(start, caplen)
	}
	n := pcapRecordHeaderLen + int(caplen)
	if len(rest) < n {
		return ci, nil, r.short(start, "record", "packet data", len(rest)-pcapRecordHeaderLen, int(caplen))
	}
	r.pos += int64(n)
	return r.recordInfo(rest), rest[pcapRecordHeaderLen:n:n], nil
}
