package layers

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// RDETHLen, DETHLen … are the fixed lengths of the extension headers.
const (
	RDETHLen        = 4
	DETHLen         = 8
	XRCETHLen       = 4
	RETHLen         = 16
	AtomicETHLen    = 28
	AETHLen         = 4
	AtomicAckETHLen = 8
	ImmDtLen        = 4
	IETHLen         = 4
	FETHLen         = 4
	CNPLen          = 16
)

// QKeyGSI is the well-known Q_Key of the General Services Interface (QP1).
const QKeyGSI = 0x80010000

// RDETH is the Reliable Datagram Extended Transport Header.
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Reserved    |                 EE-Context                    |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type RDETH struct {
	gplayers.BaseLayer
	extLink
	Reserved uint8
	EECnxt   uint32 // 24 bits
}

// DETH is the Datagram Extended Transport Header (UD and RD).
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                             Q_Key                             |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Reserved    |                 Source QP                     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type DETH struct {
	gplayers.BaseLayer
	extLink
	QKey     uint32
	Reserved uint8
	SrcQP    uint32 // 24 bits
}

// XRCETH is the XRC Extended Transport Header.
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|   Reserved    |                  XRC SRQ                      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type XRCETH struct {
	gplayers.BaseLayer
	extLink
	Reserved uint8
	XRCSRQ   uint32 // 24 bits
}

// RETH is the RDMA Extended Transport Header (RDMA WRITE FIRST/ONLY, READ
// REQUEST, FLUSH, ATOMIC WRITE).
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     Virtual Address (64)                      |
//	+                                                               +
//	|                                                               |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                             R_Key                             |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                          DMA Length                           |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type RETH struct {
	gplayers.BaseLayer
	extLink
	VA        uint64
	RKey      uint32
	DMALength uint32
}

// AtomicETH is the Atomic Extended Transport Header (COMPARE_SWAP,
// FETCH_ADD).
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                     Virtual Address (64)                      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                             R_Key                             |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Swap (or Add) Data (64)                      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                      Compare Data (64)                        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type AtomicETH struct {
	gplayers.BaseLayer
	extLink
	VA        uint64
	RKey      uint32
	SwapOrAdd uint64
	Compare   uint64
}

// AtomicAckETH is the Atomic Acknowledge Extended Transport Header: the
// remote data before the atomic operation.
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                 Original Remote Data (64)                     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type AtomicAckETH struct {
	gplayers.BaseLayer
	extLink
	OrigRemoteData uint64
}

// ImmDt is the Immediate Data Extended Transport Header.
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                        Immediate Data                         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type ImmDt struct {
	gplayers.BaseLayer
	extLink
	Immediate uint32
}

// IETH is the Invalidate Extended Transport Header (SEND with
// invalidate): the R_Key to invalidate.
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                             R_Key                             |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type IETH struct {
	gplayers.BaseLayer
	extLink
	RKey uint32
}

// FETH is the Flush Extended Transport Header (FLUSH, IBTA memory
// placement extensions): selectivity level and placement type.
//
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  Reserved (26)                    |SEL|  PLT  |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type FETH struct {
	gplayers.BaseLayer
	extLink
	Reserved         uint32 // 26 bits
	SelectivityLevel uint8  // 2 bits
	PlacementType    uint8  // 4 bits
}

// CNP is the 16-byte body of a congestion notification packet (opcode
// 0x81 on RoCE v2, 0x80 native): reserved bytes, zero when sent.
type CNP struct {
	gplayers.BaseLayer
	extLink
	Reserved [CNPLen]byte
}

var (
	_ gopacket.DecodingLayer     = (*RDETH)(nil)
	_ gopacket.DecodingLayer     = (*DETH)(nil)
	_ gopacket.DecodingLayer     = (*XRCETH)(nil)
	_ gopacket.DecodingLayer     = (*RETH)(nil)
	_ gopacket.DecodingLayer     = (*AtomicETH)(nil)
	_ gopacket.DecodingLayer     = (*AtomicAckETH)(nil)
	_ gopacket.DecodingLayer     = (*ImmDt)(nil)
	_ gopacket.DecodingLayer     = (*IETH)(nil)
	_ gopacket.DecodingLayer     = (*FETH)(nil)
	_ gopacket.DecodingLayer     = (*CNP)(nil)
	_ gopacket.SerializableLayer = (*RDETH)(nil)
	_ gopacket.SerializableLayer = (*DETH)(nil)
	_ gopacket.SerializableLayer = (*XRCETH)(nil)
	_ gopacket.SerializableLayer = (*RETH)(nil)
	_ gopacket.SerializableLayer = (*AtomicETH)(nil)
	_ gopacket.SerializableLayer = (*AtomicAckETH)(nil)
	_ gopacket.SerializableLayer = (*ImmDt)(nil)
	_ gopacket.SerializableLayer = (*IETH)(nil)
	_ gopacket.SerializableLayer = (*FETH)(nil)
	_ gopacket.SerializableLayer = (*CNP)(nil)
)

// LayerType returns LayerTypeRDETH.
func (h *RDETH) LayerType() gopacket.LayerType { return LayerTypeRDETH }

// CanDecode returns LayerTypeRDETH.
func (h *RDETH) CanDecode() gopacket.LayerClass { return LayerTypeRDETH }

// NextLayerType returns what the BTH's opcode puts after the RDETH.
func (h *RDETH) NextLayerType() gopacket.LayerType { return h.next(LayerTypeRDETH, h.Payload) }

// DecodeFromBytes decodes the RDETH; slices alias data.
func (h *RDETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.Reserved, h.EECnxt = 0, 0
	if err := decodeExt(&h.BaseLayer, "rdeth", data, RDETHLen, df); err != nil {
		return err
	}
	h.Reserved, h.EECnxt = data[0], get24(data[1:4])
	return nil
}

// SerializeTo writes the RDETH.
func (h *RDETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	if h.EECnxt > 0xFFFFFF {
		return fmt.Errorf("rdeth: %w: EECnxt 0x%x (24 bits)", ErrFieldRange, h.EECnxt)
	}
	p, err := b.PrependBytes(RDETHLen)
	if err != nil {
		return err
	}
	p[0] = h.Reserved
	put24(p[1:4], h.EECnxt)
	return nil
}

// LayerType returns LayerTypeDETH.
func (h *DETH) LayerType() gopacket.LayerType { return LayerTypeDETH }

// CanDecode returns LayerTypeDETH.
func (h *DETH) CanDecode() gopacket.LayerClass { return LayerTypeDETH }

// NextLayerType returns what the BTH's opcode puts after the DETH
// (LayerTypeMAD for a datagram from QP0/QP1).
func (h *DETH) NextLayerType() gopacket.LayerType { return h.next(LayerTypeDETH, h.Payload) }

// DecodeFromBytes decodes the DETH; slices alias data.
func (h *DETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.QKey, h.Reserved, h.SrcQP = 0, 0, 0
	if err := decodeExt(&h.BaseLayer, "deth", data, DETHLen, df); err != nil {
		return err
	}
	h.QKey = binary.BigEndian.Uint32(data[0:4])
	h.Reserved, h.SrcQP = data[4], get24(data[5:8])
	return nil
}

// SerializeTo writes the DETH.
func (h *DETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	if h.SrcQP > 0xFFFFFF {
		return fmt.Errorf("deth: %w: SrcQP 0x%x (24 bits)", ErrFieldRange, h.SrcQP)
	}
	p, err := b.PrependBytes(DETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(p[0:4], h.QKey)
	p[4] = h.Reserved
	put24(p[5:8], h.SrcQP)
	return nil
}

// LayerType returns LayerTypeXRCETH.
func (h *XRCETH) LayerType() gopacket.LayerType { return LayerTypeXRCETH }

// CanDecode returns LayerTypeXRCETH.
func (h *XRCETH) CanDecode() gopacket.LayerClass { return LayerTypeXRCETH }

// NextLayerType returns what the BTH's opcode puts after the XRCETH.
func (h *XRCETH) NextLayerType() gopacket.LayerType { return h.next(LayerTypeXRCETH, h.Payload) }

// DecodeFromBytes decodes the XRCETH; slices alias data.
func (h *XRCETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.Reserved, h.XRCSRQ = 0, 0
	if err := decodeExt(&h.BaseLayer, "xrceth", data, XRCETHLen, df); err != nil {
		return err
	}
	h.Reserved, h.XRCSRQ = data[0], get24(data[1:4])
	return nil
}

// SerializeTo writes the XRCETH.
func (h *XRCETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	if h.XRCSRQ > 0xFFFFFF {
		return fmt.Errorf("xrceth: %w: XRCSRQ 0x%x (24 bits)", ErrFieldRange, h.XRCSRQ)
	}
	p, err := b.PrependBytes(XRCETHLen)
	if err != nil {
		return err
	}
	p[0] = h.Reserved
	put24(p[1:4], h.XRCSRQ)
	return nil
}

// LayerType returns LayerTypeRETH.
func (h *RETH) LayerType() gopacket.LayerType { return LayerTypeRETH }

// CanDecode returns LayerTypeRETH.
func (h *RETH) CanDecode() gopacket.LayerClass { return LayerTypeRETH }

// NextLayerType returns what the BTH's opcode puts after the RETH.
func (h *RETH) NextLayerType() gopacket.LayerType { return h.next(LayerTypeRETH, h.Payload) }

// DecodeFromBytes decodes the RETH; slices alias data.
func (h *RETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.VA, h.RKey, h.DMALength = 0, 0, 0
	if err := decodeExt(&h.BaseLayer, "reth", data, RETHLen, df); err != nil {
		return err
	}
	h.VA = binary.BigEndian.Uint64(data[0:8])
	h.RKey = binary.BigEndian.Uint32(data[8:12])
	h.DMALength = binary.BigEndian.Uint32(data[12:16])
	return nil
}

// SerializeTo writes the RETH.
func (h *RETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	p, err := b.PrependBytes(RETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(p[0:8], h.VA)
	binary.BigEndian.PutUint32(p[8:12], h.RKey)
	binary.BigEndian.PutUint32(p[12:16], h.DMALength)
	return nil
}

// LayerType returns LayerTypeAtomicETH.
func (h *AtomicETH) LayerType() gopacket.LayerType { return LayerTypeAtomicETH }

// CanDecode returns LayerTypeAtomicETH.
func (h *AtomicETH) CanDecode() gopacket.LayerClass { return LayerTypeAtomicETH }

// NextLayerType returns what the BTH's opcode puts after the AtomicETH.
func (h *AtomicETH) NextLayerType() gopacket.LayerType { return h.next(LayerTypeAtomicETH, h.Payload) }

// DecodeFromBytes decodes the AtomicETH; slices alias data.
func (h *AtomicETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.VA, h.RKey, h.SwapOrAdd, h.Compare = 0, 0, 0, 0
	if err := decodeExt(&h.BaseLayer, "atomiceth", data, AtomicETHLen, df); err != nil {
		return err
	}
	h.VA = binary.BigEndian.Uint64(data[0:8])
	h.RKey = binary.BigEndian.Uint32(data[8:12])
	h.SwapOrAdd = binary.BigEndian.Uint64(data[12:20])
	h.Compare = binary.BigEndian.Uint64(data[20:28])
	return nil
}

// SerializeTo writes the AtomicETH.
func (h *AtomicETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	p, err := b.PrependBytes(AtomicETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(p[0:8], h.VA)
	binary.BigEndian.PutUint32(p[8:12], h.RKey)
	binary.BigEndian.PutUint64(p[12:20], h.SwapOrAdd)
	binary.BigEndian.PutUint64(p[20:28], h.Compare)
	return nil
}

// LayerType returns LayerTypeAtomicAckETH.
func (h *AtomicAckETH) LayerType() gopacket.LayerType { return LayerTypeAtomicAckETH }

// CanDecode returns LayerTypeAtomicAckETH.
func (h *AtomicAckETH) CanDecode() gopacket.LayerClass { return LayerTypeAtomicAckETH }

// NextLayerType returns what follows the AtomicAckETH (normally nothing).
func (h *AtomicAckETH) NextLayerType() gopacket.LayerType {
	return h.next(LayerTypeAtomicAckETH, h.Payload)
}

// DecodeFromBytes decodes the AtomicAckETH; slices alias data.
func (h *AtomicAckETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.OrigRemoteData = 0
	if err := decodeExt(&h.BaseLayer, "atomicacketh", data, AtomicAckETHLen, df); err != nil {
		return err
	}
	h.OrigRemoteData = binary.BigEndian.Uint64(data[0:8])
	return nil
}

// SerializeTo writes the AtomicAckETH.
func (h *AtomicAckETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	p, err := b.PrependBytes(AtomicAckETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(p[0:8], h.OrigRemoteData)
	return nil
}

// LayerType returns LayerTypeImmDt.
func (h *ImmDt) LayerType() gopacket.LayerType { return LayerTypeImmDt }

// CanDecode returns LayerTypeImmDt.
func (h *ImmDt) CanDecode() gopacket.LayerClass { return LayerTypeImmDt }

// NextLayerType returns what follows the ImmDt (the payload).
func (h *ImmDt) NextLayerType() gopacket.LayerType { return h.next(LayerTypeImmDt, h.Payload) }

// DecodeFromBytes decodes the ImmDt; slices alias data.
func (h *ImmDt) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.Immediate = 0
	if err := decodeExt(&h.BaseLayer, "immdt", data, ImmDtLen, df); err != nil {
		return err
	}
	h.Immediate = binary.BigEndian.Uint32(data[0:4])
	return nil
}

// SerializeTo writes the ImmDt.
func (h *ImmDt) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	p, err := b.PrependBytes(ImmDtLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(p[0:4], h.Immediate)
	return nil
}

// LayerType returns LayerTypeIETH.
func (h *IETH) LayerType() gopacket.LayerType { return LayerTypeIETH }

// CanDecode returns LayerTypeIETH.
func (h *IETH) CanDecode() gopacket.LayerClass { return LayerTypeIETH }

// NextLayerType returns what follows the IETH (the payload).
func (h *IETH) NextLayerType() gopacket.LayerType { return h.next(LayerTypeIETH, h.Payload) }

// DecodeFromBytes decodes the IETH; slices alias data.
func (h *IETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.RKey = 0
	if err := decodeExt(&h.BaseLayer, "ieth", data, IETHLen, df); err != nil {
		return err
	}
	h.RKey = binary.BigEndian.Uint32(data[0:4])
	return nil
}

// SerializeTo writes the IETH.
func (h *IETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	p, err := b.PrependBytes(IETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(p[0:4], h.RKey)
	return nil
}

// LayerType returns LayerTypeFETH.
func (h *FETH) LayerType() gopacket.LayerType { return LayerTypeFETH }

// CanDecode returns LayerTypeFETH.
func (h *FETH) CanDecode() gopacket.LayerClass { return LayerTypeFETH }

// NextLayerType returns what follows the FETH (the RETH of a FLUSH).
func (h *FETH) NextLayerType() gopacket.LayerType { return h.next(LayerTypeFETH, h.Payload) }

// DecodeFromBytes decodes the FETH; slices alias data.
func (h *FETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.Reserved, h.SelectivityLevel, h.PlacementType = 0, 0, 0
	if err := decodeExt(&h.BaseLayer, "feth", data, FETHLen, df); err != nil {
		return err
	}
	v := binary.BigEndian.Uint32(data[0:4])
	h.Reserved = v >> 6
	h.SelectivityLevel = uint8(v>>4) & 0x3
	h.PlacementType = uint8(v) & 0xF
	return nil
}

// SerializeTo writes the FETH.
func (h *FETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	if h.Reserved > 0x3FFFFFF || h.SelectivityLevel > 3 || h.PlacementType > 0xF {
		return fmt.Errorf("feth: %w", ErrFieldRange)
	}
	p, err := b.PrependBytes(FETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(p[0:4], h.Reserved<<6|uint32(h.SelectivityLevel)<<4|uint32(h.PlacementType))
	return nil
}

// LayerType returns LayerTypeCNP.
func (h *CNP) LayerType() gopacket.LayerType { return LayerTypeCNP }

// CanDecode returns LayerTypeCNP.
func (h *CNP) CanDecode() gopacket.LayerClass { return LayerTypeCNP }

// NextLayerType returns what follows the CNP body (normally nothing).
func (h *CNP) NextLayerType() gopacket.LayerType { return h.next(LayerTypeCNP, h.Payload) }

// DecodeFromBytes decodes the 16 reserved bytes of a CNP.
func (h *CNP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.Reserved = [CNPLen]byte{}
	if err := decodeExt(&h.BaseLayer, "cnp", data, CNPLen, df); err != nil {
		return err
	}
	copy(h.Reserved[:], data)
	return nil
}

// SerializeTo writes the CNP body.
func (h *CNP) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	p, err := b.PrependBytes(CNPLen)
	if err != nil {
		return err
	}
	copy(p, h.Reserved[:])
	return nil
}
