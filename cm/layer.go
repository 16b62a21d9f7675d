package cm

import (
	"fmt"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/layers"
)

// LayerTypeMAD is the gopacket layer type of a management datagram. It is
// layers.LayerTypeMAD (number 1916): package layers registers it with a
// fallback that keeps the MAD as raw bytes, and importing this package
// gives it the real decoder. Package layers hands the payload of every
// packet to or from QP0/QP1 (BTH DestQP or DETH SrcQP 0 or 1) to it, so
//
//	p := gopacket.NewPacket(frame, gplayers.LayerTypeEthernet, gopacket.Default)
//	if mad, ok := p.Layer(cm.LayerTypeMAD).(*cm.MAD); ok { … mad.Message … }
var LayerTypeMAD = gopacket.OverrideLayerType(int(layers.LayerTypeMAD),
	gopacket.LayerTypeMetadata{Name: "MAD", Decoder: gopacket.DecodeFunc(decodeMAD)})

// MAD is a 256-byte InfiniBand management datagram: the 24-byte common
// header, then 232 bytes whose meaning depends on the management class.
//
// Decoding fills Header and Data for every class, and also:
//   - class CM (0x07): Message, the decoded CM message, when the attribute
//     is one of the eleven messages (nil for ClassPortInfo and others);
//   - class SubnAdm (0x03): SubnAdm, the RMPP and SA headers;
//   - class Perf (0x04): Perf, the reserved area and attribute data.
//
// Every other class (the SMPs of QP0, vendor classes, …) is kept as raw
// Data, its class named by Header.MgmtClass.
//
// All slices alias the decoded bytes. A MAD reused through
// DecodeFromBytes (as gopacket.DecodingLayerParser does) decodes with no
// allocation: the CM messages live in storage owned by the MAD, and
// Message points into it, so a Message is valid until the next decode.
//
// A MAD cut short by the capture's snap length still decodes its header
// and, for CM, the message when its fixed fields are present (its private
// data then shorter); DecodeFromBytes then returns an error wrapping
// ErrTruncated and calls SetTruncated.
type MAD struct {
	gplayers.BaseLayer
	Header Header
	// Data is the MAD after the common header: 232 bytes, fewer when cut.
	Data []byte
	// Message is the CM message, for class CM. To serialize a CM MAD, set
	// it (and Header); Data is then ignored.
	Message Message
	// SubnAdm is valid when Header.MgmtClass is ClassSubnAdm.
	SubnAdm SubnAdm
	// Perf is valid when Header.MgmtClass is ClassPerfMgmt.
	Perf Perf

	store *messageStore // reused message storage (DecodingLayerParser path)
	fresh bool          // allocate each message (NewPacket path)
}

// Compile-time checks.
var (
	_ gopacket.DecodingLayer     = (*MAD)(nil)
	_ gopacket.SerializableLayer = (*MAD)(nil)
)

// messageStore holds one value of each CM message, indexed like
// messageTypes and allocated on first use, so that a reused MAD decodes
// without allocating.
type messageStore [len(messageTypes)]Message

// LayerType returns LayerTypeMAD.
func (m *MAD) LayerType() gopacket.LayerType { return LayerTypeMAD }

// CanDecode returns LayerTypeMAD.
func (m *MAD) CanDecode() gopacket.LayerClass { return LayerTypeMAD }

// NextLayerType returns gopacket.LayerTypeZero: nothing follows a MAD.
func (m *MAD) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// CM returns the decoded CM message, or nil when the MAD is not of class
// CM or its attribute is not one of the eleven messages.
func (m *MAD) CM() Message {
	if m.Header.MgmtClass != ClassCM {
		return nil
	}
	return m.Message
}

// Decode decodes a MAD without gopacket: DecodeFromBytes with
// gopacket.NilDecodeFeedback.
func (m *MAD) Decode(data []byte) error { return m.DecodeFromBytes(data, gopacket.NilDecodeFeedback) }

// DecodeFromBytes decodes a MAD, resetting every field. The 256 bytes of
// the MAD are its Contents; bytes beyond them (if any) its Payload.
func (m *MAD) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	m.Data, m.Message, m.SubnAdm, m.Perf = nil, nil, SubnAdm{}, Perf{}
	if err := m.Header.DecodeFromBytes(data); err != nil {
		m.BaseLayer = gplayers.BaseLayer{Contents: data}
		df.SetTruncated()
		return err
	}
	n := min(len(data), MADLen)
	m.BaseLayer = gplayers.BaseLayer{Contents: data[:n], Payload: data[n:]}
	m.Data = data[HeaderLen:n]

	switch m.Header.MgmtClass {
	case ClassCM:
		if t := lookupMessage(m.Header.AttributeID); t != nil && len(m.Data) >= t.fixed {
			msg := m.message(t)
			_ = msg.DecodeFromBytes(m.Data) // truncation reported below
			m.Message = msg
		}
	case ClassSubnAdm:
		_ = m.SubnAdm.DecodeFromBytes(m.Data)
	case ClassPerfMgmt:
		_ = m.Perf.DecodeFromBytes(m.Data)
	}
	if n < MADLen {
		df.SetTruncated()
		return fmt.Errorf("cm: %w: %s %s MAD: %d bytes, need %d", ErrTruncated,
			m.Header.MgmtClass, m.Header.AttributeName(), len(data), MADLen)
	}
	return nil
}

// message returns the storage for a CM message: a new one for the
// NewPacket path, the MAD's own (allocated once) otherwise.
func (m *MAD) message(t *messageType) Message {
	if m.fresh {
		return t.new()
	}
	if m.store == nil {
		m.store = new(messageStore)
	}
	msg := m.store[t.id]
	if msg == nil {
		msg = t.new()
		m.store[t.id] = msg
	}
	return msg
}

// decodeMAD is the gopacket decoder of LayerTypeMAD. It adds the MAD
// layer whenever its header decoded, so a truncated MAD still shows its
// header (followed by gopacket's DecodeFailure layer for the error).
func decodeMAD(data []byte, p gopacket.PacketBuilder) error {
	m := &MAD{fresh: true}
	err := m.DecodeFromBytes(data, p)
	if len(data) >= HeaderLen {
		p.AddLayer(m)
	}
	if err != nil {
		return err
	}
	if len(m.Payload) > 0 {
		return p.NextDecoder(gopacket.LayerTypePayload)
	}
	return nil
}

// SerializeTo writes the 256-byte MAD, prepending exactly MADLen bytes.
// With a Message, the header is written with the message after it (and
// FixLengths sets Header.MgmtClass and Header.AttributeID to match the
// message; without it a mismatch is an error wrapping ErrBadHeader).
// Without a Message, Data follows the header, zero-padded to 232 bytes.
func (m *MAD) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if err := m.fix(opts.FixLengths); err != nil {
		return err
	}
	buf, err := b.PrependBytes(MADLen)
	if err != nil {
		return err
	}
	return m.encode(buf)
}

// AppendBinary appends the 256-byte MAD to b, like SerializeTo without
// FixLengths.
func (m *MAD) AppendBinary(b []byte) ([]byte, error) {
	if err := m.fix(false); err != nil {
		return b, err
	}
	n := len(b)
	b = append(b, make([]byte, MADLen)...)
	if err := m.encode(b[n:]); err != nil {
		return b[:n], err
	}
	return b, nil
}

// fix checks (or, with fix, mends) the header against the message.
func (m *MAD) fix(fix bool) error {
	if m.Message == nil {
		if len(m.Data) > DataLen {
			return fmt.Errorf("cm: %w: MAD data is %d bytes, room for %d", ErrFieldRange, len(m.Data), DataLen)
		}
		return nil
	}
	id := m.Message.AttributeID()
	if m.Header.MgmtClass == ClassCM && m.Header.AttributeID == id {
		return nil
	}
	if !fix {
		return fmt.Errorf("cm: %w: %s MAD with attribute %s carries a %s message", ErrBadHeader,
			m.Header.MgmtClass, m.Header.AttributeID, messageName(id))
	}
	m.Header.MgmtClass, m.Header.AttributeID = ClassCM, id
	return nil
}

// encode writes the MAD into buf (MADLen bytes).
func (m *MAD) encode(buf []byte) error {
	clear(buf)
	m.Header.Encode(buf)
	if m.Message != nil {
		return m.Message.encode(buf[HeaderLen:MADLen])
	}
	copy(buf[HeaderLen:], m.Data)
	return nil
}

// String returns the header summary and, for a CM message, its summary:
// "CM Send REQ tid=0x000000026dc5c064: REQ LocalCommID=0x64c0c56d …".
func (m *MAD) String() string {
	s := m.Header.String()
	if msg := m.CM(); msg != nil {
		s += ": " + msg.String()
	}
	return s
}
