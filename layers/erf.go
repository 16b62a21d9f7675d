package layers

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// ERFHeaderLen is the length of the fixed ERF record header.
const ERFHeaderLen = 16

// ERF record types this package follows.
const (
	ERFTypeEthernet       = 2
	ERFTypeInfiniBand     = 21
	ERFTypeInfiniBandLink = 25
)

// ERF is the header of an Endace ERF record, as pcap LINKTYPE_ERF (197)
// stores it; ibdump writes native IB captures this way.
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|             Timestamp (64, little-endian fixed point)         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|E|    Type     |     Flags     |        Record Length          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Loss counter / color        |         Wire Length           |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	| extension headers (8 bytes each) while E is set …             |
//
// Records of type 21 and 25 carry an IB packet from its LRH (no pad);
// type 2 carries an Ethernet frame after a 2-byte pad. The payload is
// bounded by the wire length WLen (record padding after it is dropped); a
// record captured shorter than WLen is flagged truncated.
type ERF struct {
	gplayers.BaseLayer
	Timestamp   uint64
	Type        uint8 // record type, without the extension bit
	HasExtHdr   bool
	Flags       uint8
	RLen        uint16
	LossCounter uint16
	WLen        uint16
	// ExtHeaders holds the raw extension headers (8 bytes each), aliasing
	// the data.
	ExtHeaders []byte
}

var (
	_ gopacket.DecodingLayer     = (*ERF)(nil)
	_ gopacket.SerializableLayer = (*ERF)(nil)
)

// Time converts the record's timestamp (seconds since 1970 in the high 32
// bits, the binary fraction of a second in the low 32) to a time, rounded
// to the nearest nanosecond: ERF keeps a precision that the pcap record
// header rounds to microseconds.
func (e *ERF) Time() time.Time {
	frac := (e.Timestamp & 0xFFFFFFFF) * 1_000_000_000
	ns := frac >> 32
	if frac&(1<<31) != 0 {
		ns++ // round to the nearest nanosecond
	}
	return time.Unix(int64(e.Timestamp>>32), int64(ns)).UTC()
}

// ERFTimestamp converts a time to an ERF timestamp, the inverse of
// ERF.Time to the nanosecond (times from 1970 to 2106).
func ERFTimestamp(t time.Time) uint64 {
	frac := uint64(t.Nanosecond()) << 32 / 1_000_000_000
	return uint64(t.Unix())<<32 | frac
}

// LayerType returns LayerTypeERF.
func (e *ERF) LayerType() gopacket.LayerType { return LayerTypeERF }

// CanDecode returns LayerTypeERF.
func (e *ERF) CanDecode() gopacket.LayerClass { return LayerTypeERF }

// NextLayerType returns LayerTypeLRH for IB records, Ethernet for
// Ethernet records, else the payload.
func (e *ERF) NextLayerType() gopacket.LayerType {
	switch e.Type {
	case ERFTypeInfiniBand, ERFTypeInfiniBandLink:
		return LayerTypeLRH
	case ERFTypeEthernet:
		return gplayers.LayerTypeEthernet
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes the record header and its extension headers.
func (e *ERF) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*e = ERF{}
	if len(data) < ERFHeaderLen {
		df.SetTruncated()
		return fmt.Errorf("erf: %w: %d bytes, need %d", ErrTruncated, len(data), ERFHeaderLen)
	}
	e.Timestamp = binary.LittleEndian.Uint64(data[0:8])
	e.Type = data[8] & 0x7F
	e.HasExtHdr = data[8]&0x80 != 0
	e.Flags = data[9]
	e.RLen = binary.BigEndian.Uint16(data[10:12])
	e.LossCounter = binary.BigEndian.Uint16(data[12:14])
	e.WLen = binary.BigEndian.Uint16(data[14:16])
	off := ERFHeaderLen
	for more := e.HasExtHdr; more; {
		if len(data) < off+8 {
			df.SetTruncated()
			e.Contents = data
			return fmt.Errorf("erf: %w: extension header at offset %d", ErrTruncated, off)
		}
		more = data[off]&0x80 != 0
		off += 8
	}
	e.ExtHeaders = data[ERFHeaderLen:off]
	if e.Type == ERFTypeEthernet {
		off += 2
		if len(data) < off {
			df.SetTruncated()
			e.Contents = data
			return fmt.Errorf("erf: %w: Ethernet pad", ErrTruncated)
		}
	}
	e.Contents = data[:off]
	// WLen is the length of the packet on the wire (for Ethernet, the frame
	// after the 2-byte pad); anything after it is record padding.
	end := off + int(e.WLen)
	if len(data) < end {
		df.SetTruncated()
		end = len(data)
	}
	e.Payload = data[off:end]
	return nil
}

// SerializeTo writes the record header (no extension headers unless
// ExtHeaders holds them; the 2-byte pad of an Ethernet record). With
// FixLengths, WLen and RLen are set from the payload and HasExtHdr from
// ExtHeaders.
func (e *ERF) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if len(e.ExtHeaders)%8 != 0 || e.Type > 0x7F {
		return fmt.Errorf("erf: %w: extension headers of %d bytes, type %d", ErrFieldRange, len(e.ExtHeaders), e.Type)
	}
	n := ERFHeaderLen + len(e.ExtHeaders)
	if e.Type == ERFTypeEthernet {
		n += 2 // pad before the Ethernet frame
	}
	if opts.FixLengths {
		e.WLen = uint16(len(b.Bytes()))
		e.RLen = uint16(n + len(b.Bytes()))
		e.HasExtHdr = len(e.ExtHeaders) > 0
	}
	h, err := b.PrependBytes(n)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(h[0:8], e.Timestamp)
	h[8] = e.Type
	if e.HasExtHdr {
		h[8] |= 0x80
	}
	h[9] = e.Flags
	binary.BigEndian.PutUint16(h[10:12], e.RLen)
	binary.BigEndian.PutUint16(h[12:14], e.LossCounter)
	binary.BigEndian.PutUint16(h[14:16], e.WLen)
	copy(h[16:], e.ExtHeaders)
	for i := ERFHeaderLen + len(e.ExtHeaders); i < n; i++ {
		h[i] = 0
	}
	return nil
}
