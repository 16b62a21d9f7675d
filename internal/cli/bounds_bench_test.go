package cli_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// The two memory bounds of issue 41 (docs/robustness.md, "Memory is
// bounded by the number of flows"): each benchmark runs the command on a
// capture built for the bound and reports the peak heap of a run
// (peak-heap-B/op, runPeak) and per flow (peak-heap-B/flow).

// badICRCFlows and gapFlows × gapSteps are the captures' sizes.
const (
	badICRCFlows = 200_000
	gapFlows     = 500
	gapSteps     = 2_048
)

// BenchmarkBadICRCFlows writes the JSON report of 200,000 one-packet
// flows whose ICRCs are all bad: one error finding a frame, the list
// capped at --max-findings (100,000) and the rest counted. Issue 41
// bounds its peak at 200 MB.
func BenchmarkBadICRCFlows(b *testing.B) {
	path := filepath.Join(b.TempDir(), "badicrc.pcap")
	writeBench(b, path, func(w io.Writer) error { return writeBadICRCQPs(w, badICRCFlows) })
	peak := runPeak(b, "-o", "json", "--progress", "never", path)
	b.ReportMetric(float64(peak)/badICRCFlows, "peak-heap-B/flow")
}

// BenchmarkGapFlows writes the text report of 500 RC flows of 2,048
// SEND LASTs each, every one past a missing PSN: each opens a PSN gap
// and leaves a message with a hole pending, in a new throughput
// interval, until every per-flow list is full. Issue 41 bounds its peak
// at 100 MB.
func BenchmarkGapFlows(b *testing.B) {
	path := filepath.Join(b.TempDir(), "gaps.pcap")
	writeBench(b, path, func(w io.Writer) error { return writeGapFlows(w, gapFlows, gapSteps) })
	peak := runPeak(b, "--progress", "never", path)
	b.ReportMetric(float64(peak)/gapFlows, "peak-heap-B/flow")
}

// writeBench writes the capture at path with write.
func writeBench(b *testing.B, path string, write func(io.Writer) error) {
	b.Helper()
	f, err := os.Create(path)
	require.NoError(b, err)
	require.NoError(b, write(f))
	require.NoError(b, f.Close())
}

// writeBadICRCQPs writes n RC SEND ONLYs to QPs 1…n: one frame built
// with a correct ICRC for QP 0, its QP then patched, so that each ICRC
// is wrong.
func writeBadICRCQPs(w io.Writer, n int) error {
	pc, eth, ip, udp, err := newTestFrames(w)
	if err != nil {
		return err
	}
	bth := &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, PSN: 1}
	if err := bth.SetNetworkLayerForChecksum(ip, udp); err != nil {
		return err
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, udp, bth, gopacket.Payload("0123456789abcdef"), &layers.ICRC{}); err != nil {
		return err
	}
	frame := buf.Bytes()
	const qpAt = 14 + 20 + 8 + 5 // Ethernet, IPv4, UDP, then the BTH's destination QP
	for i := 1; i <= n; i++ {
		frame[qpAt], frame[qpAt+1], frame[qpAt+2] = byte(i>>16), byte(i>>8), byte(i)
		if err := pc.write(uint32(1_700_000_000+i/1_000_000), uint32(i%1_000_000), frame); err != nil {
			return err
		}
	}
	return pc.flush()
}

// writeGapFlows writes flows RC flows (QPs 0x100…) of steps SEND LASTs
// each, in turn, one µs apart: step k of a flow is PSN 3k+2, so that
// PSNs 3k and 3k+1 are missing and the message they begin is pending
// with its hole.
func writeGapFlows(w io.Writer, flows, steps int) error {
	return writeEach(w, 0, flows*steps, nil, func(i int) []gopacket.SerializableLayer {
		return []gopacket.SerializableLayer{&layers.BTH{Opcode: layers.OpcodeRCSendLast, PKey: 0xFFFF,
			DestQP: uint32(0x100 + i%flows), PSN: uint32(3*(i/flows) + 2)}, gopacket.Payload(fmt.Sprintf("%016d", i))}
	})
}
