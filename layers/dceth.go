package layers

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// DCETHLen is the length of the DC extended transport header.
const DCETHLen = 8

// DCETH is the 8-byte header that NVIDIA's Dynamically Connected (DC)
// transport puts after the RDETH and DETH places of a DC packet, before the
// headers RC would carry (RETH, AETH, ImmDt, …) and the payload:
//
//	BTH | RDETH place (4) | DETH place (8) | DCETH (8) | RETH/AETH/… | payload | ICRC
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                        Word0 (unknown)                        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                        Word1 (unknown)                        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The name is ours: DC is not in the IBTA specification and no public
// document defines these bytes, so their fields are kept as two raw
// 32-bit words. What public sources show: Wireshark's packet-infiniband.c
// ("Mellanox DCT") treats the RD opcodes as DC and skips 8 bytes right
// after the BTH without naming them (so it reads the RD headers 8 bytes
// late, and DC ACKs wrongly); it also skips an unnamed 16-byte "DCCETH"
// (DC connect) on opcode 0x55. NVIDIA's mlx5 PRM headers (struct
// mlx5_ifc_definer_hl_ib_l4_bits, the packet fields its steering can
// match) list a "dcceth" presence bit next to the BTH and DETH ones. Neither gives field meanings. In a real capture, an
// 8-byte DC RDMA WRITE carried 00 00 c0 dc 00 00 00 00 here and its ACK
// 00 00 c0 db 00 00 00 00.
//
// Decoding checks the length first, resets both words, and aliases the
// data (Contents, Payload). Errors wrap ErrTruncated.
type DCETH struct {
	gplayers.BaseLayer
	extLink
	Word0 uint32 // bytes 0–3, meaning unknown
	Word1 uint32 // bytes 4–7, meaning unknown
}

var (
	_ gopacket.DecodingLayer     = (*DCETH)(nil)
	_ gopacket.SerializableLayer = (*DCETH)(nil)
)

// LayerType returns LayerTypeDCETH.
func (h *DCETH) LayerType() gopacket.LayerType { return LayerTypeDCETH }

// CanDecode returns LayerTypeDCETH.
func (h *DCETH) CanDecode() gopacket.LayerClass { return LayerTypeDCETH }

// NextLayerType returns what the BTH's opcode puts after the DCETH (RETH,
// AETH, ImmDt, … or the payload).
func (h *DCETH) NextLayerType() gopacket.LayerType { return h.next(LayerTypeDCETH, h.Payload) }

// DecodeFromBytes decodes the DCETH; slices alias data.
func (h *DCETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h.Word0, h.Word1 = 0, 0
	if err := decodeExt(&h.BaseLayer, "dceth", data, DCETHLen, df); err != nil {
		return err
	}
	h.Word0 = binary.BigEndian.Uint32(data[0:4])
	h.Word1 = binary.BigEndian.Uint32(data[4:8])
	return nil
}

// SerializeTo writes the DCETH.
func (h *DCETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	p, err := b.PrependBytes(DCETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(p[0:4], h.Word0)
	binary.BigEndian.PutUint32(p[4:8], h.Word1)
	return nil
}
