package layers

import (
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSerializeFieldRange: fields wider than their wire width are refused.
func TestSerializeFieldRange(t *testing.T) {
	for _, l := range []gopacket.SerializableLayer{
		&BTH{DestQP: 1 << 24}, &BTH{PSN: 1 << 24}, &BTH{PadCnt: 4}, &BTH{TVer: 16},
		&RDETH{EECnxt: 1 << 24}, &DETH{SrcQP: 1 << 24}, &XRCETH{XRCSRQ: 1 << 24},
		&AETH{MSN: 1 << 24}, &FETH{PlacementType: 16}, &FETH{SelectivityLevel: 4},
		&LRH{VL: 16}, &LRH{PktLen: 0x800}, &LRH{LNH: 4}, &GRH{FlowLabel: 1 << 20},
		&GRH{SGID: make([]byte, 5)}, &ERF{ExtHeaders: make([]byte, 3)},
	} {
		err := l.SerializeTo(gopacket.NewSerializeBuffer(), gopacket.SerializeOptions{})
		assert.ErrorIs(t, err, ErrFieldRange, "%#v", l)
	}
}

// TestSerializeNeedsICRC: FixLengths or ComputeChecksums without the ICRC
// serialized after the payload is an error, not a corrupt packet.
func TestSerializeNeedsICRC(t *testing.T) {
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	buf := gopacket.NewSerializeBuffer()
	assert.ErrorIs(t, gopacket.SerializeLayers(buf, opts, &BTH{}), ErrBadHeader)
	assert.ErrorIs(t, gopacket.SerializeLayers(buf, opts, &GRH{NxtHdr: NxtHdrBTH}), ErrBadHeader)
	assert.ErrorIs(t, gopacket.SerializeLayers(buf, opts, &LRH{LNH: LNHIBAGlobal}, &BTH{}, &ICRC{}, &VCRC{}), ErrBadHeader)
	assert.Error(t, (&BTH{}).SetNetworkLayerForChecksum(&GRH{}, nil))
}

// TestSerializeRawLRH: a raw (non-IBA) native packet has a VCRC but no ICRC.
func TestSerializeRawLRH(t *testing.T) {
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	lrh := &LRH{VL: 0, LNH: LNHRaw, DLID: 1, SLID: 2}
	require.NoError(t, gopacket.SerializeLayers(buf, opts, lrh, gopacket.Payload{1, 2, 3, 4}, &VCRC{}))
	pkt := gopacket.NewPacket(buf.Bytes(), LayerTypeLRH, gopacket.Default)
	require.Nil(t, pkt.ErrorLayer())
	assert.Equal(t, uint16(3), pkt.Layer(LayerTypeLRH).(*LRH).PktLen)
	assert.Equal(t, ICRCOK, pkt.Layer(LayerTypeVCRC).(*VCRC).Status)
	assert.Nil(t, pkt.Layer(LayerTypeICRC))
}

// TestERFEthernetRecord: an ERF Ethernet record has a 2-byte pad, and WLen
// counts the frame after it.
func TestERFEthernetRecord(t *testing.T) {
	frame := goldenFrames[0].bytes()
	buf := gopacket.NewSerializeBuffer()
	erf := &ERF{Type: ERFTypeEthernet}
	require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, erf, gopacket.Payload(frame)))
	assert.Equal(t, uint16(len(frame)), erf.WLen)
	assert.Equal(t, uint16(ERFHeaderLen+2+len(frame)), erf.RLen)
	rec := append(buf.Bytes(), 0, 0, 0, 0) // record padding
	pkt := gopacket.NewPacket(rec, LayerTypeERF, gopacket.Default)
	require.Nil(t, pkt.ErrorLayer())
	assert.False(t, pkt.Metadata().Truncated)
	assert.Equal(t, frame, pkt.Layer(LayerTypeERF).LayerPayload())
	assert.NotNil(t, pkt.Layer(gplayers.LayerTypeEthernet))
	assert.Equal(t, ICRCOK, pkt.Layer(LayerTypeICRC).(*ICRC).Status)
}
