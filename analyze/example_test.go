package analyze_test

import (
	"fmt"
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

// writeOnly builds a RoCE v2 RDMA WRITE ONLY frame with a correct ICRC.
func writeOnly(psn uint32, payload []byte) []byte {
	eth := &gplayers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4}
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: net.IPv4(10, 0, 0, 1), DstIP: net.IPv4(10, 0, 0, 2)}
	udp := &gplayers.UDP{SrcPort: 49152, DstPort: 4791}
	_ = udp.SetNetworkLayerForChecksum(ip)
	bth := &layers.BTH{Opcode: layers.OpcodeRCRDMAWriteOnly, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: psn}
	_ = bth.SetNetworkLayerForChecksum(ip, udp)
	reth := &layers.RETH{VA: 0x1000, RKey: 0x42, DMALength: uint32(len(payload))}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, eth, ip, udp, bth, reth, gopacket.Payload(payload), &layers.ICRC{}); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// Feed frames, read the report: here PSN 102 never made it into the capture.
func Example() {
	a := analyze.New(analyze.Options{})
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, psn := range []uint32{100, 101, 103, 104} {
		frame := writeOnly(psn, make([]byte, 1024))
		ci := gopacket.CaptureInfo{Timestamp: start.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(frame), Length: len(frame)}
		a.Feed(ci, gplayers.LinkTypeEthernet, frame)
	}
	r := a.Report()
	f := r.Flows[0]
	fmt.Printf("%s → %s QP %d: %d packets, %d payload bytes, ICRC ok %d\n", f.Src, f.Dst, f.DestQP, f.Packets, f.PayloadBytes, f.ICRC.OK)
	fmt.Printf("missing %d: %+v\n", f.Requests.Missing, f.Requests.Gaps)
	fmt.Printf("finding: frame %d %s: %s\n", r.Findings[0].Frame, r.Findings[0].Kind, r.Findings[0].Detail)
	// Output:
	// 10.0.0.1 → 10.0.0.2 QP 17: 4 packets, 4096 payload bytes, ICRC ok 4
	// missing 1: [{From:102 To:102 Count:1 Frame:3 File:}]
	// finding: frame 3 psn_gap: PSN jumped to 103: PSN 102 missing: fate unknown (no response shows whether the responder got them)
}

// TestSeriesBounded: a flow whose packets come one interval apart (or a
// crafted capture whose clock jumps) keeps at most 512 samples: the
// interval doubles instead, and no packet or byte is lost.
func TestSeriesBounded(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	whole, first, second := analyze.New(analyze.Options{}), analyze.New(analyze.Options{}), analyze.New(analyze.Options{})
	const n = 20_000
	for i := range n {
		// PSN rises; every 7th packet goes back in time.
		f := writeOnly(uint32(i), make([]byte, 64))
		ts := start.Add(time.Duration(i) * time.Millisecond)
		if i%7 == 0 {
			ts = ts.Add(-5 * time.Second)
		}
		ci := gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(f), Length: len(f)}
		whole.Feed(ci, gplayers.LinkTypeEthernet, f)
		if i < n/2 {
			first.Feed(ci, gplayers.LinkTypeEthernet, f)
		} else {
			second.Feed(ci, gplayers.LinkTypeEthernet, f)
		}
	}
	w := whole.Report()
	require.Len(t, w.Flows, 1)
	fl := w.Flows[0]
	assert.LessOrEqual(t, len(fl.Series), 512)
	assert.Greater(t, fl.IntervalSeconds, 0.001, "the interval doubled")
	var pk, by uint64
	for i, s := range fl.Series {
		pk += s.Packets
		by += s.PayloadBytes
		if i > 0 {
			assert.True(t, s.Start.After(fl.Series[i-1].Start), "sorted")
		}
	}
	assert.Equal(t, fl.Packets, pk)
	assert.Equal(t, fl.PayloadBytes, by)

	m := first.Report()
	require.NoError(t, m.Merge(second.Report()))
	assert.Equal(t, fl.IntervalSeconds, m.Flows[0].IntervalSeconds)
	assert.Equal(t, fl.Series, m.Flows[0].Series, "merging halves gives the same series")
}
