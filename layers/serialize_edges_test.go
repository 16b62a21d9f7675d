package layers

import (
	"encoding/binary"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// edgeLayers returns fresh layers of a RoCE v2 RDMA WRITE ONLY of payload.
func edgeLayers(t *testing.T, payload string) (*gplayers.IPv4, *gplayers.UDP, []gopacket.SerializableLayer) {
	t.Helper()
	eth := &gplayers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4}
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2}}
	udp := &gplayers.UDP{SrcPort: 49152, DstPort: UDPPortRoCEv2}
	bth := &BTH{Opcode: OpcodeRCRDMAWriteOnly, PKey: 0xFFFF, DestQP: 0x12, PSN: 7}
	require.NoError(t, bth.SetNetworkLayerForChecksum(ip, udp))
	reth := &RETH{VA: 0x1000, RKey: 0x1234, DMALength: uint32(len(payload))}
	return ip, udp, []gopacket.SerializableLayer{eth, ip, udp, bth, reth, gopacket.Payload(payload)}
}

// TestSerializeWithoutICRCLayer: a RoCE packet serialized without an
// &ICRC{} layer used to lose its last 4 payload bytes to the ICRC (with
// the pad in the wrong place) and still decode as ICRC ok. The BTH now
// adds the ICRC: the same bytes as with the layer, the payload intact.
func TestSerializeWithoutICRCLayer(t *testing.T) {
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	for _, payload := range []string{"hello", "12345678", "a payload of 21 bytes"} {
		t.Run(payload, func(t *testing.T) {
			_, _, without := edgeLayers(t, payload)
			buf := gopacket.NewSerializeBuffer()
			require.NoError(t, gopacket.SerializeLayers(buf, opts, without...))
			got := append([]byte(nil), buf.Bytes()...)

			_, _, with := edgeLayers(t, payload)
			buf2 := gopacket.NewSerializeBuffer()
			require.NoError(t, gopacket.SerializeLayers(buf2, opts, append(with, &ICRC{})...))
			assert.Equal(t, buf2.Bytes(), got, "as with an explicit ICRC layer")

			pad := (4 - len(payload)%4) % 4
			require.Len(t, got, 14+20+8+12+16+len(payload)+pad+4, "payload, pad and ICRC all there")
			pkt := gopacket.NewPacket(got, gplayers.LayerTypeEthernet, gopacket.Default)
			require.Nil(t, pkt.ErrorLayer())
			assert.Equal(t, payload, string(pkt.ApplicationLayer().Payload()))
			assert.Equal(t, uint8(pad), pkt.Layer(LayerTypeBTH).(*BTH).PadCnt)
			icrc := pkt.Layer(LayerTypeICRC).(*ICRC)
			assert.Equal(t, ICRCOK, icrc.Status)
			// The oracle: the ICRC of PROTOCOL.md over the bytes as built.
			want, err := ComputeICRC(NetworkIPv4, got[14:34], got[34:42], got[42:len(got)-4])
			require.NoError(t, err)
			assert.Equal(t, want, binary.LittleEndian.Uint32(got[len(got)-4:]))
		})
	}
}

// udpChecksum is the RFC 768 checksum of an IPv4/UDP datagram, computed
// here as the oracle.
func udpChecksum(ip4, udp []byte) uint16 {
	var sum uint32
	add := func(b []byte) {
		for i := 0; i+1 < len(b); i += 2 {
			sum += uint32(binary.BigEndian.Uint16(b[i:]))
		}
		if len(b)%2 == 1 {
			sum += uint32(b[len(b)-1]) << 8
		}
	}
	add(ip4[12:20])
	sum += 17 + uint32(len(udp))
	c := append([]byte(nil), udp...)
	c[6], c[7] = 0, 0
	add(c)
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// TestUDPChecksumRoCE: BTH.SetNetworkLayerForChecksum alone lets the UDP
// layer compute its checksum (no separate udp.SetNetworkLayerForChecksum,
// which ComputeChecksums used to fail without), a valid one; wrapped in
// UDPZeroChecksum the UDP checksum is 0, as RoCE NICs send it, and the
// ICRC, which does not cover it, verifies either way.
func TestUDPChecksumRoCE(t *testing.T) {
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	_, _, ls := edgeLayers(t, "hello")
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, gopacket.SerializeLayers(buf, opts, append(ls, &ICRC{})...))
	withSum := append([]byte(nil), buf.Bytes()...)
	assert.Equal(t, udpChecksum(withSum[14:34], withSum[34:]), binary.BigEndian.Uint16(withSum[40:42]))
	assert.NotZero(t, binary.BigEndian.Uint16(withSum[40:42]))

	_, udp, ls := edgeLayers(t, "hello")
	ls[2] = UDPZeroChecksum{UDP: udp}
	buf = gopacket.NewSerializeBuffer()
	require.NoError(t, gopacket.SerializeLayers(buf, opts, append(ls, &ICRC{})...))
	zero := buf.Bytes()
	assert.Equal(t, []byte{0, 0}, zero[40:42])
	assert.Equal(t, withSum[:40], zero[:40], "only the checksum differs")
	assert.Equal(t, withSum[42:], zero[42:], "the ICRC too is the same")
	pkt := gopacket.NewPacket(zero, gplayers.LayerTypeEthernet, gopacket.Default)
	assert.Equal(t, ICRCOK, pkt.Layer(LayerTypeICRC).(*ICRC).Status)
}
