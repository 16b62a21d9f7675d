package cli_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
	"github.com/roce-dissect/roce-dissect/layers"
)

// writeOnePacketFlows writes a capture of n one-packet flows: UD SEND
// ONLY frames (ICRC correct) from 10.0.0.1 to 10.0.0.2, each to its own
// destination QP.
func writeOnePacketFlows(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	require.NoError(tb, err)
	w := pcapgo.NewWriter(f)
	require.NoError(tb, w.WriteFileHeader(65535, gplayers.LinkTypeEthernet))
	src, dst := net.IPv4(10, 0, 0, 1).To4(), net.IPv4(10, 0, 0, 2).To4()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	buf := gopacket.NewSerializeBuffer()
	for i := range n {
		eth := &gplayers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4}
		ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: src, DstIP: dst}
		udp := &gplayers.UDP{SrcPort: 49152, DstPort: 4791}
		bth := &layers.BTH{Opcode: layers.OpcodeUDSendOnly, PKey: 0xFFFF, DestQP: uint32(i + 1), PSN: 1}
		require.NoError(tb, udp.SetNetworkLayerForChecksum(ip))
		require.NoError(tb, bth.SetNetworkLayerForChecksum(ip, udp))
		require.NoError(tb, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			eth, ip, udp, bth, &layers.DETH{QKey: 0x11111111, SrcQP: 0x22}, gopacket.Payload(make([]byte, 64)), &layers.ICRC{}))
		ci := gopacket.CaptureInfo{Timestamp: start.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(buf.Bytes()), Length: len(buf.Bytes())}
		require.NoError(tb, w.WritePacket(ci, buf.Bytes()))
	}
	require.NoError(tb, f.Close())
}

// peakHeap runs fn and returns the most heap its objects held meanwhile
// (sampled every millisecond, plus at the end).
func peakHeap(fn func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	var peak uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			v := read()
			mu.Lock()
			peak = max(peak, v)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return max(peak, read())
}

// BenchmarkManyFlowsReport writes the report (text, JSON, CSV; -j 1 and
// the default) of 200,000 one-packet flows, the report written while it
// is built (docs/robustness.md, "Scale: many flows"), and reports the
// peak heap of a run: peak-heap-B/op, and per flow peak-heap-B/flow.
func BenchmarkManyFlowsReport(b *testing.B) {
	const flows = 200_000
	path := filepath.Join(b.TempDir(), "flows.pcap")
	writeOnePacketFlows(b, path, flows)
	for _, out := range []string{"text", "json", "csv"} {
		for _, j := range []string{"1", "2"} {
			b.Run(fmt.Sprintf("%s/j%s", out, j), func(b *testing.B) {
				b.ReportAllocs()
				var peak uint64
				for b.Loop() {
					p := peakHeap(func() {
						if code := cli.Run(context.Background(), []string{"-j", j, "-o", out, path}, io.Discard, io.Discard); code != 0 {
							b.Fatalf("exit status %d", code)
						}
					})
					peak = max(peak, p)
				}
				b.ReportMetric(float64(peak), "peak-heap-B/op")
				b.ReportMetric(float64(peak)/flows, "peak-heap-B/flow")
			})
		}
	}
}
