package layers

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// MAC Control lengths.
const (
	// MACControlPauseLen is the length of a PAUSE frame's fields: the
	// opcode and pause_time.
	MACControlPauseLen = 4
	// MACControlPFCLen is the length of a PFC frame's fields: the opcode,
	// the class-enable vector and eight time fields.
	MACControlPFCLen = 20
	// MACControlMinLen is the minimum Ethernet payload, to which MAC
	// Control frames are padded with zeros.
	MACControlMinLen = 46
)

// QuantumBits is the length of the pause quantum of PAUSE and PFC frames,
// in bit times: a pause_time of n asks the link partner to stop for
// n × 512 bit times.
const QuantumBits = 512

// PauseDuration converts a pause time in quanta to time on a link of
// linkBitsPerSecond (100e9 for 100 Gb/s): quanta × 512 bit times, rounded
// to the nanosecond. 0xFFFF quanta are 335.539 µs at 100 Gb/s. A rate that
// is not positive gives 0.
func PauseDuration(quanta uint16, linkBitsPerSecond float64) time.Duration {
	if !(linkBitsPerSecond > 0) || math.IsInf(linkBitsPerSecond, 0) {
		return 0
	}
	return time.Duration(math.Round(float64(quanta) * QuantumBits * 1e9 / linkBitsPerSecond))
}

// MACControlOpcode is the opcode of a MAC Control frame.
type MACControlOpcode uint16

// MAC Control opcodes this package decodes.
const (
	// MACControlOpcodePause is the IEEE 802.3x PAUSE (IEEE 802.3 Annex 31B).
	MACControlOpcodePause MACControlOpcode = 0x0001
	// MACControlOpcodePFC is the priority-based flow control of IEEE
	// 802.1Qbb (IEEE 802.3 Annex 31D), which RoCE relies on.
	MACControlOpcodePFC MACControlOpcode = 0x0101
)

// String returns "PAUSE", "PFC", the name of an EPON MPCP opcode (GATE,
// REPORT, REGISTER_REQ, REGISTER, REGISTER_ACK) or "0x%04x".
func (o MACControlOpcode) String() string {
	switch o {
	case MACControlOpcodePause:
		return "PAUSE"
	case MACControlOpcodePFC:
		return "PFC"
	case 0x0002:
		return "GATE"
	case 0x0003:
		return "REPORT"
	case 0x0004:
		return "REGISTER_REQ"
	case 0x0005:
		return "REGISTER"
	case 0x0006:
		return "REGISTER_ACK"
	}
	return fmt.Sprintf("0x%04x", uint16(o))
}

// MACControl is an IEEE 802.3 MAC Control frame (EtherType 0x8808,
// EthernetTypeMACControl), sent to 01-80-C2-00-00-01: an 802.3x PAUSE,
// which stops all traffic of the link, or a PFC frame (IEEE 802.1Qbb),
// which stops chosen priorities — the flow control that keeps a lossless
// RoCE fabric lossless. Times count quanta of 512 bit times (QuantumBits,
// PauseDuration); 0 resumes at once (XON).
//
// PAUSE (opcode 0x0001):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        Opcode 0x0001          |          pause_time           |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|            reserved, zeros up to the 46-byte minimum …        |
//
// PFC (opcode 0x0101):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|        Opcode 0x0101          |   reserved    |e7|e6| … |e1|e0|
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|           time[0]             |            time[1]            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|           time[2]             |            time[3]            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|           time[4]             |            time[5]            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|           time[6]             |            time[7]            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|            reserved, zeros up to the 46-byte minimum …        |
//
// Bit i of the class-enable vector (e_i) says that time[i] applies to
// priority i; the receiver ignores the times of priorities not enabled.
// ClassEnableVector keeps all 16 bits (the high 8 are reserved).
//
// Other opcodes (the EPON MPCP ones, say) decode the opcode only. What
// follows the decoded fields — the zero padding, or a body not decoded —
// stays in Payload: it is not a layer, and NextLayerType is
// gopacket.LayerTypeZero. Decoding checks the length first and resets
// every field; short data gives an error wrapping ErrTruncated (after
// DecodeFeedback.SetTruncated). Contents and Payload alias the data.
type MACControl struct {
	gplayers.BaseLayer
	Opcode            MACControlOpcode
	PauseTime         uint16    // PAUSE: pause_time, in quanta
	ClassEnableVector uint16    // PFC: bit i enables priority i
	PauseTimes        [8]uint16 // PFC: time[i] for priority i, in quanta
}

var (
	_ gopacket.DecodingLayer     = (*MACControl)(nil)
	_ gopacket.SerializableLayer = (*MACControl)(nil)
)

// LayerType returns LayerTypeMACControl.
func (m *MACControl) LayerType() gopacket.LayerType { return LayerTypeMACControl }

// CanDecode returns LayerTypeMACControl.
func (m *MACControl) CanDecode() gopacket.LayerClass { return LayerTypeMACControl }

// NextLayerType returns gopacket.LayerTypeZero: nothing follows a MAC
// Control frame but its padding.
func (m *MACControl) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// macControlFieldsLen is the length of the fields decoded for opcode o.
func macControlFieldsLen(o MACControlOpcode) int {
	switch o {
	case MACControlOpcodePause:
		return MACControlPauseLen
	case MACControlOpcodePFC:
		return MACControlPFCLen
	}
	return 2
}

// DecodeFromBytes decodes the frame; slices alias data.
func (m *MACControl) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*m = MACControl{}
	if len(data) < 2 {
		df.SetTruncated()
		return fmt.Errorf("maccontrol: %w: %d bytes, need 2", ErrTruncated, len(data))
	}
	op := MACControlOpcode(binary.BigEndian.Uint16(data[0:2]))
	n := macControlFieldsLen(op)
	if len(data) < n {
		df.SetTruncated()
		return fmt.Errorf("maccontrol: %w: %s of %d bytes, need %d", ErrTruncated, op, len(data), n)
	}
	m.Opcode = op
	switch op {
	case MACControlOpcodePause:
		m.PauseTime = binary.BigEndian.Uint16(data[2:4])
	case MACControlOpcodePFC:
		m.ClassEnableVector = binary.BigEndian.Uint16(data[2:4])
		for i := range m.PauseTimes {
			m.PauseTimes[i] = binary.BigEndian.Uint16(data[4+2*i:])
		}
	}
	m.Contents = data[:n]
	m.Payload = data[n:]
	return nil
}

// SerializeTo writes the opcode and the fields it has (PauseTime for
// PAUSE; ClassEnableVector and PauseTimes for PFC; nothing more for other
// opcodes, whose body is the payload serialized after). With FixLengths,
// zeros are appended up to the 46-byte minimum Ethernet payload.
func (m *MACControl) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	n := macControlFieldsLen(m.Opcode)
	if pad := MACControlMinLen - n - len(b.Bytes()); opts.FixLengths && pad > 0 {
		p, err := b.AppendBytes(pad)
		if err != nil {
			return err
		}
		clear(p)
	}
	h, err := b.PrependBytes(n)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint16(h[0:2], uint16(m.Opcode))
	switch m.Opcode {
	case MACControlOpcodePause:
		binary.BigEndian.PutUint16(h[2:4], m.PauseTime)
	case MACControlOpcodePFC:
		binary.BigEndian.PutUint16(h[2:4], m.ClassEnableVector)
		for i, t := range m.PauseTimes {
			binary.BigEndian.PutUint16(h[4+2*i:], t)
		}
	}
	return nil
}

// Enabled reports whether the frame acts on priority (0–7): for PFC,
// whether bit priority of the class-enable vector is set; an 802.3x PAUSE
// acts on the whole link, so it reports true whatever the priority. Other
// opcodes, and a PFC priority outside 0–7, give false.
func (m *MACControl) Enabled(priority int) bool {
	switch m.Opcode {
	case MACControlOpcodePause:
		return true
	case MACControlOpcodePFC:
		return priority >= 0 && priority < 8 && m.ClassEnableVector&(1<<priority) != 0
	}
	return false
}

// Quanta returns the pause time the frame carries for priority, in quanta
// (see PauseDuration): for PFC the time field of that priority as on the
// wire, whether or not Enabled (a receiver ignores it when not); for an
// 802.3x PAUSE its single pause_time, whatever the priority. Other
// opcodes, and a PFC priority outside 0–7, give 0.
func (m *MACControl) Quanta(priority int) uint16 {
	switch m.Opcode {
	case MACControlOpcodePause:
		return m.PauseTime
	case MACControlOpcodePFC:
		if priority >= 0 && priority < 8 {
			return m.PauseTimes[priority]
		}
	}
	return 0
}

// decodeMACControl is the gopacket decoder of EtherType 0x8808.
func decodeMACControl(data []byte, p gopacket.PacketBuilder) error {
	m := &MACControl{}
	if err := m.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(m)
	return nil
}
