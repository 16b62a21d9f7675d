package layers

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// ERSPAN type III lengths and version.
const (
	// ERSPANIIIHeaderLen is the length of the fixed ERSPAN type III header.
	ERSPANIIIHeaderLen = 12
	// ERSPANIIIPlatformLen is the length of the optional platform-specific
	// subheader that follows it when the O bit is set.
	ERSPANIIIPlatformLen = 8
	// ERSPANIIIVersion is the Ver field of a type III header.
	ERSPANIIIVersion = 2
)

// ERSPANGranularity is the Gra field of an ERSPAN type III header: the unit
// of its Timestamp.
type ERSPANGranularity uint8

// Timestamp granularities (draft-foschiano-erspan-03 §4.3).
const (
	ERSPANGranularity100us    ERSPANGranularity = 0 // ticks of 100 µs
	ERSPANGranularity100ns    ERSPANGranularity = 1 // ticks of 100 ns
	ERSPANGranularityIEEE1588 ERSPANGranularity = 2 // IEEE 1588: nanoseconds, seconds in a subheader
	ERSPANGranularityCustom   ERSPANGranularity = 3 // user configured, platform dependent
)

// String returns "100us", "100ns", "IEEE1588" or "custom".
func (g ERSPANGranularity) String() string {
	return [...]string{"100us", "100ns", "IEEE1588", "custom"}[g&3]
}

// ERSPANFrameType is the FT field of an ERSPAN type III header: what the
// mirrored frame is.
type ERSPANFrameType uint8

// Frame types of draft-foschiano-erspan-03 §4.3; the other values are
// reserved.
const (
	ERSPANFrameTypeEthernet ERSPANFrameType = 0 // an Ethernet frame (without FCS)
	ERSPANFrameTypeIP       ERSPANFrameType = 2 // an IP packet, IPv4 or IPv6
)

// String returns "Ethernet", "IP" or "reserved_n".
func (t ERSPANFrameType) String() string {
	switch t {
	case ERSPANFrameTypeEthernet:
		return "Ethernet"
	case ERSPANFrameTypeIP:
		return "IP"
	}
	return fmt.Sprintf("reserved_%d", uint8(t))
}

// ERSPANIII is the header of an ERSPAN type III (version 2) mirror packet,
// which a switch sends over GRE with protocol type 0x22EB
// (EthernetTypeERSPANIII) to carry a copy of a frame it forwarded
// (draft-foschiano-erspan-03 §4.3). gopacket decodes ERSPAN type II
// (gplayers.ERSPANII, 0x88BE) itself; importing this package adds type III,
// so that gopacket.NewPacket decodes
// Ethernet → IPv4 → GRE → ERSPANIII → Ethernet → IPv4 → UDP 4791 → BTH … and
// checks the ICRC of the mirrored RoCE packet.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  Ver  |          VLAN         | COS |BSO|T|     Session ID    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                          Timestamp                            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|             SGT               |P|    FT   |   Hw ID   |D|Gra|O|
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	  platform-specific subheader, 8 bytes, when O is set:
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  Platf ID |               Platform Specific Info              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Platform Specific Info                       |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Ver is 2. VLAN is the mirrored frame's VLAN, COS its class of service,
// BSO its integrity (0 good or unknown, 1 short, 2 oversized, 3 CRC or
// alignment error), T says the mirror copy was truncated (it exceeded the
// MTU), Session ID names the mirror session. Timestamp is the low 32 bits
// of the switch's hardware clock in the unit Gra gives (see Granularity).
// SGT is the security group tag; P set means the payload is an Ethernet
// protocol frame; FT is the frame type (0 Ethernet, 2 IP); Hw ID names the
// ERSPAN engine; D is the direction (0 ingress, 1 egress); O says the
// platform-specific subheader follows.
//
// The subheader is kept raw (PlatformID, PlatformInfo), except that
// UpperTimestamp reads the high 32 bits of the hardware timestamp from the
// second word of Platf IDs 0x3 and 0x7, as Wireshark's ERSPAN dissector does
// ("Upper 32-bit Timestamp"; for 0x3 the first word ends with a 14-bit
// port index, for 0x7 with a 20-bit source index).
//
// The mirrored frame is the payload: NextLayerType is Ethernet for FT 0,
// IPv4 or IPv6 (by the version nibble) for FT 2, the raw payload for other
// frame types. Decoding checks the length before reading and resets every
// field; short data gives an error wrapping ErrTruncated (after
// DecodeFeedback.SetTruncated), a version other than 2 one wrapping
// ErrBadHeader. Contents and Payload alias the data.
type ERSPANIII struct {
	gplayers.BaseLayer
	Version           uint8  // Ver: 2
	VLANIdentifier    uint16 // VLAN, 12 bits
	CoS               uint8  // COS, 3 bits
	BSO               uint8  // bad/short/oversized, 2 bits
	Truncated         bool   // T: the mirror copy was truncated
	SessionID         uint16 // 10 bits
	Timestamp         uint32 // low 32 bits of the hardware clock, in Granularity units
	SGT               uint16 // security group tag
	P                 bool   // the payload is an Ethernet protocol frame
	FrameType         ERSPANFrameType
	HardwareID        uint8 // Hw ID, 6 bits
	Direction         bool  // D: false ingress, true egress
	Granularity       ERSPANGranularity
	PlatformSubheader bool   // O: the 8-byte platform-specific subheader follows
	PlatformID        uint8  // Platf ID, 6 bits (with PlatformSubheader)
	PlatformInfo      uint64 // the subheader's other 58 bits (with PlatformSubheader)
}

var (
	_ gopacket.DecodingLayer     = (*ERSPANIII)(nil)
	_ gopacket.SerializableLayer = (*ERSPANIII)(nil)
)

// LayerType returns LayerTypeERSPANIII.
func (e *ERSPANIII) LayerType() gopacket.LayerType { return LayerTypeERSPANIII }

// CanDecode returns LayerTypeERSPANIII.
func (e *ERSPANIII) CanDecode() gopacket.LayerClass { return LayerTypeERSPANIII }

// NextLayerType returns Ethernet for frame type 0, IPv4 or IPv6 for frame
// type 2 (by the payload's version nibble), else gopacket.LayerTypePayload.
func (e *ERSPANIII) NextLayerType() gopacket.LayerType {
	switch e.FrameType {
	case ERSPANFrameTypeEthernet:
		return gplayers.LayerTypeEthernet
	case ERSPANFrameTypeIP:
		if len(e.Payload) > 0 {
			switch e.Payload[0] >> 4 {
			case 4:
				return gplayers.LayerTypeIPv4
			case 6:
				return gplayers.LayerTypeIPv6
			}
		}
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes the header and, when O is set, the
// platform-specific subheader; slices alias data.
func (e *ERSPANIII) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*e = ERSPANIII{}
	if len(data) < ERSPANIIIHeaderLen {
		df.SetTruncated()
		return fmt.Errorf("erspan3: %w: %d bytes, need %d", ErrTruncated, len(data), ERSPANIIIHeaderLen)
	}
	e.Version = data[0] >> 4
	if e.Version != ERSPANIIIVersion {
		return fmt.Errorf("erspan3: %w: version %d, want %d", ErrBadHeader, e.Version, ERSPANIIIVersion)
	}
	e.VLANIdentifier = binary.BigEndian.Uint16(data[0:2]) & 0x0FFF
	w := binary.BigEndian.Uint16(data[2:4])
	e.CoS = uint8(w >> 13)
	e.BSO = uint8(w>>11) & 3
	e.Truncated = w&0x0400 != 0
	e.SessionID = w & 0x03FF
	e.Timestamp = binary.BigEndian.Uint32(data[4:8])
	e.SGT = binary.BigEndian.Uint16(data[8:10])
	w = binary.BigEndian.Uint16(data[10:12])
	e.P = w&0x8000 != 0
	e.FrameType = ERSPANFrameType(w>>10) & 0x1F
	e.HardwareID = uint8(w>>4) & 0x3F
	e.Direction = w&0x0008 != 0
	e.Granularity = ERSPANGranularity(w>>1) & 3
	e.PlatformSubheader = w&1 != 0
	n := ERSPANIIIHeaderLen
	if e.PlatformSubheader {
		n += ERSPANIIIPlatformLen
		if len(data) < n {
			df.SetTruncated()
			return fmt.Errorf("erspan3: %w: %d bytes, need %d with the platform subheader", ErrTruncated, len(data), n)
		}
		sub := binary.BigEndian.Uint64(data[ERSPANIIIHeaderLen:n])
		e.PlatformID = uint8(sub >> 58)
		e.PlatformInfo = sub & (1<<58 - 1)
	}
	e.Contents = data[:n]
	e.Payload = data[n:]
	return nil
}

// SerializeTo writes the header, and the platform-specific subheader
// (with the O bit) when PlatformSubheader is set; PlatformID and
// PlatformInfo are not written otherwise. A zero Version is written as 2,
// the only version this layer decodes; a field too large for its bits
// gives an error wrapping ErrFieldRange.
func (e *ERSPANIII) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	if e.Version > 0xF || e.VLANIdentifier > 0x0FFF || e.CoS > 7 || e.BSO > 3 || e.SessionID > 0x03FF ||
		e.FrameType > 0x1F || e.HardwareID > 0x3F || e.Granularity > 3 ||
		(e.PlatformSubheader && (e.PlatformID > 0x3F || e.PlatformInfo >= 1<<58)) {
		return fmt.Errorf("erspan3: %w: Ver %d VLAN %d COS %d BSO %d session %d FT %d HwID %d Gra %d PlatfID %d info 0x%x",
			ErrFieldRange, e.Version, e.VLANIdentifier, e.CoS, e.BSO, e.SessionID, e.FrameType, e.HardwareID, e.Granularity, e.PlatformID, e.PlatformInfo)
	}
	n := ERSPANIIIHeaderLen
	if e.PlatformSubheader {
		n += ERSPANIIIPlatformLen
	}
	h, err := b.PrependBytes(n)
	if err != nil {
		return err
	}
	ver := e.Version
	if ver == 0 {
		ver = ERSPANIIIVersion
	}
	binary.BigEndian.PutUint16(h[0:2], uint16(ver)<<12|e.VLANIdentifier)
	w := uint16(e.CoS)<<13 | uint16(e.BSO)<<11 | e.SessionID
	if e.Truncated {
		w |= 0x0400
	}
	binary.BigEndian.PutUint16(h[2:4], w)
	binary.BigEndian.PutUint32(h[4:8], e.Timestamp)
	binary.BigEndian.PutUint16(h[8:10], e.SGT)
	w = uint16(e.FrameType)<<10 | uint16(e.HardwareID)<<4 | uint16(e.Granularity)<<1
	if e.P {
		w |= 0x8000
	}
	if e.Direction {
		w |= 0x0008
	}
	if e.PlatformSubheader {
		w |= 1
		binary.BigEndian.PutUint64(h[ERSPANIIIHeaderLen:n], uint64(e.PlatformID)<<58|e.PlatformInfo)
	}
	binary.BigEndian.PutUint16(h[10:12], w)
	return nil
}

// UpperTimestamp returns the high 32 bits of the hardware timestamp and
// true when the packet carries them: a platform-specific subheader of
// Platf ID 0x3 or 0x7, whose second word is the "Upper 32-bit Timestamp"
// (as Wireshark reads them). Other subheaders, or none, give false.
func (e *ERSPANIII) UpperTimestamp() (uint32, bool) {
	if !e.PlatformSubheader || (e.PlatformID != 0x3 && e.PlatformID != 0x7) {
		return 0, false
	}
	return uint32(e.PlatformInfo), true
}

// TimestampDuration returns the hardware timestamp as a time since the
// switch clock's epoch, and whether it could be converted:
//
//   - 100 µs and 100 ns granularity: the tick count (the upper 32 bits from
//     UpperTimestamp above Timestamp when the packet carries them) times the
//     unit; false when that overflows a time.Duration.
//   - IEEE 1588: Timestamp is the nanoseconds of the second (false when it
//     is 10⁹ or more), and UpperTimestamp, when present, the seconds.
//     Without it the result is only the fraction of the second.
//   - Custom granularity: false (the unit is the platform's).
func (e *ERSPANIII) TimestampDuration() (time.Duration, bool) {
	upper, hasUpper := e.UpperTimestamp()
	switch e.Granularity {
	case ERSPANGranularity100us, ERSPANGranularity100ns:
		unit := uint64(100 * time.Microsecond)
		if e.Granularity == ERSPANGranularity100ns {
			unit = uint64(100 * time.Nanosecond)
		}
		ticks := uint64(e.Timestamp)
		if hasUpper {
			ticks |= uint64(upper) << 32
		}
		if ticks > math.MaxInt64/unit {
			return 0, false
		}
		return time.Duration(ticks * unit), true
	case ERSPANGranularityIEEE1588:
		if e.Timestamp >= 1_000_000_000 {
			return 0, false
		}
		return time.Duration(uint64(upper)*1_000_000_000 + uint64(e.Timestamp)), true
	}
	return 0, false
}

// TimestampString renders the hardware timestamp by its granularity:
// "12.3456s (100us)", "1.5s (IEEE1588)", "250ms (IEEE1588, ns of the second)"
// when the seconds are not in the packet, or the raw value for a custom
// granularity or a value that does not convert, "0x0001e240 (custom)".
func (e *ERSPANIII) TimestampString() string {
	d, ok := e.TimestampDuration()
	if !ok {
		return fmt.Sprintf("0x%08x (%s)", e.Timestamp, e.Granularity)
	}
	if _, hasUpper := e.UpperTimestamp(); e.Granularity == ERSPANGranularityIEEE1588 && !hasUpper {
		return d.String() + " (IEEE1588, ns of the second)"
	}
	return d.String() + " (" + e.Granularity.String() + ")"
}
