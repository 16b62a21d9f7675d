package analyze_test

import (
	"net"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// countFrame is one kind of packet TestFlowPacketCounts feeds to one flow
// (10.0.0.1 → 10.0.0.2, QP 0x42).
type countFrame uint8

const (
	cfRequest countFrame = iota // RC SEND ONLY, 64 bytes
	cfACK                       // RC ACKNOWLEDGE
	cfCNP                       // RoCE v2 CNP
	cfUnknown                   // opcode 0x1F, not in the IBTA table
	cfBadICRC                   // a SEND ONLY whose ICRC is wrong
	cfCut                       // a SEND ONLY captured without its last 20 bytes
)

// serializeCounted builds one RoCE v2 frame of kind k with PSN psn and its
// ICRC computed by the serializer.
func serializeCounted(t *testing.T, k countFrame, psn uint32) []byte {
	t.Helper()
	eth := &gplayers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4}
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: net.IPv4(10, 0, 0, 1), DstIP: net.IPv4(10, 0, 0, 2)}
	udp := &gplayers.UDP{SrcPort: 49152, DstPort: 4791}
	require.NoError(t, udp.SetNetworkLayerForChecksum(ip))
	bth := &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, DestQP: 0x42, PSN: psn}
	var rest []gopacket.SerializableLayer
	switch k {
	case cfACK:
		bth.Opcode = layers.OpcodeRCAcknowledge
		rest = []gopacket.SerializableLayer{&layers.AETH{MSN: psn}}
	case cfCNP:
		bth.Opcode, bth.BECN, bth.PSN = layers.OpcodeRoCEv2CNP, true, 0
		rest = []gopacket.SerializableLayer{&layers.CNP{}}
	case cfUnknown:
		bth.Opcode = 0x1F
		rest = []gopacket.SerializableLayer{gopacket.Payload(make([]byte, 16))}
	default:
		rest = []gopacket.SerializableLayer{gopacket.Payload(make([]byte, 64))}
	}
	require.NoError(t, bth.SetNetworkLayerForChecksum(ip, udp))
	buf := gopacket.NewSerializeBuffer()
	ls := append([]gopacket.SerializableLayer{eth, ip, udp, bth}, rest...)
	require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, append(ls, &layers.ICRC{})...))
	b := append([]byte(nil), buf.Bytes()...)
	if k == cfBadICRC {
		b[len(b)-1] ^= 0xFF
	}
	return b
}

// TestFlowPacketCounts feeds one flow requests, responses, CNPs, packets
// of unknown opcodes, bad ICRCs and cut packets, and checks the flow's
// counts of each against what was fed: the analyzer derives the request
// packets and the unverifiable ICRCs from the other counts, so every kind
// must land in exactly one of them.
func TestFlowPacketCounts(t *testing.T) {
	tests := []struct {
		name string
		seq  []countFrame
	}{
		{"requests only", []countFrame{cfRequest, cfRequest, cfRequest}},
		{"requests and their ACKs", []countFrame{cfRequest, cfACK, cfRequest, cfACK}},
		{"CNPs among requests", []countFrame{cfCNP, cfRequest, cfCNP, cfRequest, cfCNP}},
		{"unknown opcodes", []countFrame{cfUnknown, cfRequest, cfUnknown}},
		{"bad ICRCs", []countFrame{cfRequest, cfBadICRC, cfBadICRC, cfRequest}},
		{"cut packets", []countFrame{cfCut, cfCut, cfRequest, cfCut}},
		{"everything", []countFrame{cfRequest, cfACK, cfCNP, cfUnknown, cfBadICRC, cfCut, cfRequest, cfACK, cfCNP, cfUnknown, cfBadICRC, cfCut}},
		{"a CNP alone", []countFrame{cfCNP}},
		{"an unknown opcode alone", []countFrame{cfUnknown}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := analyze.New(analyze.Options{})
			ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			var reqs, resps, cnps, ok, bad, unverifiable uint64
			for i, k := range tc.seq {
				b := serializeCounted(t, k, uint32(i))
				ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(b), Length: len(b)}
				switch k {
				case cfRequest:
					reqs++
					ok++
				case cfACK:
					resps++
					ok++
				case cfCNP:
					cnps++
					ok++
				case cfUnknown:
					ok++
				case cfBadICRC:
					reqs++
					bad++
				case cfCut:
					reqs++
					unverifiable++
					b = b[:len(b)-20]
					ci.CaptureLength = len(b)
				}
				a.Feed(ci, gplayers.LinkTypeEthernet, b)
			}
			r := a.Finish()
			require.Len(t, r.Flows, 1)
			f := r.Flows[0]
			assert.Equal(t, uint64(len(tc.seq)), f.Packets)
			assert.Equal(t, reqs, f.Requests.Packets, "requests")
			assert.Equal(t, resps, f.Responses.Packets, "responses")
			assert.Equal(t, cnps, f.Congestion.CNPs, "CNPs")
			assert.Equal(t, ok, f.ICRC.OK, "ICRC OK")
			assert.Equal(t, bad, f.ICRC.Bad, "ICRC bad")
			assert.Equal(t, unverifiable, f.ICRC.Unverifiable, "ICRC unverifiable")
		})
	}
}
