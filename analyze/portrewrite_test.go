package analyze_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/layers"
)

// genFrames generates cfg in memory and returns its frames and truth.
func genFrames(t *testing.T, cfg synth.Config) (frames [][]byte, cis []gopacket.CaptureInfo, lt gplayers.LinkType, truth []byte) {
	t.Helper()
	var capBuf, truthBuf bytes.Buffer
	_, err := synth.Generate(cfg, &capBuf, &truthBuf)
	require.NoError(t, err)
	r, err := capture.NewReader(&capBuf)
	require.NoError(t, err)
	for {
		ci, data, l, err := r.Next()
		if err != nil {
			break
		}
		frames, cis, lt = append(frames, append([]byte(nil), data...)), append(cis, ci), l
	}
	return frames, cis, lt, truthBuf.Bytes()
}

// udpSrcPort returns the UDP source port of a generated RoCE v2 frame.
func udpSrcPort(t *testing.T, frame []byte) uint16 {
	t.Helper()
	pkt := gopacket.NewPacket(frame, gplayers.LayerTypeEthernet, gopacket.NoCopy)
	udp, ok := pkt.Layer(gplayers.LayerTypeUDP).(*gplayers.UDP)
	require.True(t, ok)
	return uint16(udp.SrcPort)
}

// TestSnifferSrcPortRewrite generates captures whose UDP source ports the
// "NIC sniffer" overwrote with 4791 after the ICRC, and checks the
// analysis against the generator's truth and against the analysis of the
// same capture as sent (same seed, real ports): every ICRC the sniffer
// broke verifies with the port of the unrewritten frame, no bad_icrc
// finding is left but the corrupted packets', and the rest of the
// report is the same.
func TestSnifferSrcPortRewrite(t *testing.T) {
	for _, sc := range []string{synth.ScenarioWriteBW, synth.ScenarioReadBW, synth.ScenarioSendBW, synth.ScenarioAtomic, synth.ScenarioUD} {
		for _, enc := range []synth.Encap{synth.EncapIPv4, synth.EncapIPv6, synth.EncapVLAN} {
			for _, variant := range []string{"clean", "corrupt-icrc", "ecn", "snap128"} {
				label := fmt.Sprintf("%s/%s/%s", sc, enc, variant)
				cfg := synth.Config{Scenario: sc, Encap: enc, MTU: 1024, Messages: 12, MsgSize: 2048}
				if sc == synth.ScenarioUD {
					cfg.MsgSize = 1024
				}
				k := uint32(1) // PSNs per request: a READ of 2 path MTUs reserves 2
				if sc == synth.ScenarioReadBW {
					k = 2
				}
				switch variant {
				case "corrupt-icrc":
					cfg.CorruptICRC = []synth.PSNRef{{Value: 1 * k, Relative: true}, {Value: 7 * k, Relative: true}}
				case "ecn":
					cfg.ECN = []synth.PSNRef{{Value: 2 * k, Relative: true}}
				case "snap128":
					cfg.SnapLen = 128
				}
				sent, _, _, _ := genFrames(t, cfg)
				cfg.SnifferSrcPort = true
				frames, cis, lt, truth := genFrames(t, cfg)
				require.Len(t, frames, len(sent), label)

				rep, rewritten := analyzeRewritten(t, frames, sent, cis, lt, label)
				diffs := compareTruth(t, truth, rep)
				assert.Empty(t, diffs, "%s: report differs from the truth:\n%s", label, strings.Join(diffs, "\n"))
				assert.Equal(t, rewritten, rep.Capture.ICRCPortRewritten, label)
				if sc != synth.ScenarioUD || variant != "snap128" {
					assert.Positive(t, rewritten, "%s: packets whole in the capture (ACKs, CNPs, short ones even at snap length 128) verify", label)
				}

				plain := analyzeFrames(sent, cis, lt)
				checkSameAsSent(t, plain, rep, label)
			}
		}
	}
}

// analyzeRewritten analyzes frames, whose UDP source ports the sniffer
// rewrote, checking each: its port is the sniffer's 4791, and a packet
// whose ICRC verifies is marked rewritten, with the port of the frame as
// sent (sent), while one whose ICRC is bad or unverifiable is not. It
// returns the report and the packets marked rewritten.
func analyzeRewritten(t *testing.T, frames, sent [][]byte, cis []gopacket.CaptureInfo, lt gplayers.LinkType, label string) (*analyze.Report, uint64) {
	t.Helper()
	a := analyze.New(analyze.Options{})
	var rewritten uint64
	for i, data := range frames {
		require.Equal(t, uint16(4791), udpSrcPort(t, data), "%s frame %d: the sniffer's port", label, i+1)
		p := a.Feed(cis[i], lt, data)
		if p.ICRC.Status == layers.ICRCUnverifiable {
			assert.False(t, p.SrcPortRewritten, "%s frame %d", label, i+1)
			continue
		}
		if p.ICRC.Status == layers.ICRCBad {
			assert.False(t, p.SrcPortRewritten, "%s frame %d", label, i+1)
			continue
		}
		rewritten++
		assert.True(t, p.SrcPortRewritten, "%s frame %d", label, i+1)
		assert.Equal(t, udpSrcPort(t, sent[i]), p.OriginalSrcPort, "%s frame %d: the port it was sent with", label, i+1)
	}
	return a.Report(), rewritten
}

// checkSameAsSent checks the report of a capture the sniffer rewrote
// against the report of the capture as sent (plain): the same flows with
// the same ICRC counts, every verified packet's port rewritten, and the
// same findings.
func checkSameAsSent(t *testing.T, plain, rep *analyze.Report, label string) {
	t.Helper()
	require.Len(t, rep.Flows, len(plain.Flows), label)
	for i, f := range rep.Flows {
		pf := plain.Flows[i]
		assert.Equal(t, pf.ICRC.OK, f.ICRC.OK, label)
		assert.Equal(t, pf.ICRC.Bad, f.ICRC.Bad, label)
		assert.Equal(t, pf.ICRC.Unverifiable, f.ICRC.Unverifiable, label)
		assert.Equal(t, f.ICRC.OK, f.ICRC.PortRewritten, "%s: every verified packet had its port rewritten", label)
		f.ICRC, pf.ICRC = analyze.ICRCCounts{}, analyze.ICRCCounts{}
		assert.Equal(t, pf, f, label)
	}
	assert.Equal(t, findingKinds(plain), findingKinds(rep), label)
}

// analyzeFrames analyzes frames in memory.
func analyzeFrames(frames [][]byte, cis []gopacket.CaptureInfo, lt gplayers.LinkType) *analyze.Report {
	a := analyze.New(analyze.Options{})
	for i, data := range frames {
		a.Feed(cis[i], lt, data)
	}
	return a.Report()
}

// findingKinds lists the findings as "frame kind".
func findingKinds(r *analyze.Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, fmt.Sprintf("%d %s", f.Frame, f.Kind))
	}
	return out
}

// TestSnifferSrcPortMix: in a capture of many QPs, each flow recovers its
// own entropy port, read from the frames as sent; a full flow table still
// recovers the ports of the packets it does not track.
func TestSnifferSrcPortMix(t *testing.T) {
	cfg := synth.Config{Scenario: synth.ScenarioMix, Packets: 3000, QPs: 16, MTU: 1024}
	sent, _, _, _ := genFrames(t, cfg)
	cfg.SnifferSrcPort = true
	frames, cis, lt, truth := genFrames(t, cfg)
	// The ports each flow was sent with, from the unrewritten frames.
	want := map[string][]uint16{}
	a := analyze.New(analyze.Options{})
	for i := range sent {
		p := a.Feed(cis[i], lt, sent[i])
		k := fmt.Sprintf("%v → %v QP %d", p.Src, p.Dst, p.BTH.DestQP)
		port := udpSrcPort(t, sent[i])
		if !contains(want[k], port) {
			want[k] = append(want[k], port)
		}
	}
	rep := analyzeFrames(frames, cis, lt)
	assert.Empty(t, compareTruth(t, truth, rep))
	require.NotEmpty(t, rep.Flows)
	for _, f := range rep.Flows {
		k := fmt.Sprintf("%v → %v QP %d", f.Src, f.Dst, f.DestQP)
		assert.Equal(t, want[k], f.ICRC.OriginalSrcPorts, k)
		assert.Equal(t, f.Packets, f.ICRC.PortRewritten, k)
		assert.Zero(t, f.ICRC.Bad, k)
	}
	for _, f := range rep.Findings {
		assert.NotEqual(t, analyze.KindBadICRC, f.Kind, "frame %d", f.Frame)
	}

	small := analyze.New(analyze.Options{MaxFlows: 2})
	for i, data := range frames {
		small.Feed(cis[i], lt, data)
	}
	assert.Equal(t, uint64(len(frames)), small.Report().Capture.ICRCPortRewritten, "flows not tracked still verify")
}

func contains(s []uint16, v uint16) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestSnifferSrcPortOnlyPort4791: a bad ICRC on a packet whose source
// port is not 4791 stays bad, even when some port would explain it.
func TestSnifferSrcPortOnlyPort4791(t *testing.T) {
	cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 4, MsgSize: 1024, MTU: 1024, SnifferSrcPort: true}
	frames, cis, lt, _ := genFrames(t, cfg)
	a := analyze.New(analyze.Options{})
	bad := 0
	for i, data := range frames {
		// Move the sniffer's 4791 to 4790: now no capture tool explains it.
		off := 14 + 20
		require.Equal(t, uint16(4791), binary.BigEndian.Uint16(data[off:]))
		binary.BigEndian.PutUint16(data[off:], 4790)
		p := a.Feed(cis[i], lt, data)
		assert.False(t, p.SrcPortRewritten)
		if p.ICRC.Status == layers.ICRCBad {
			bad++
		}
	}
	assert.Equal(t, len(frames), bad)
	assert.Zero(t, a.Report().Capture.ICRCPortRewritten)
}

// TestSnifferSrcPortSteadyStateAllocations: recovering the ports of a
// rewritten capture allocates nothing per packet once the flows exist:
// its second half allocates no more than that of the same capture
// unrewritten (only the amortized growth of the per-interval series
// allocates there).
func TestSnifferSrcPortSteadyStateAllocations(t *testing.T) {
	cfg := synth.Config{Scenario: synth.ScenarioMix, Packets: 40_000, QPs: 16, MTU: 1024}
	mallocs := func(sniffer bool) uint64 {
		cfg.SnifferSrcPort = sniffer
		frames, cis, lt, _ := genFrames(t, cfg)
		a := analyze.New(analyze.Options{})
		half := len(frames) / 2
		for i := range frames[:half] {
			a.Feed(cis[i], lt, frames[i])
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		rewritten := 0
		for i := half; i < len(frames); i++ {
			if a.Feed(cis[i], lt, frames[i]).SrcPortRewritten {
				rewritten++
			}
		}
		runtime.ReadMemStats(&after)
		if sniffer {
			require.Equal(t, len(frames)-half, rewritten)
		}
		return after.Mallocs - before.Mallocs
	}
	plain, rewritten := mallocs(false), mallocs(true)
	t.Logf("allocations in 20,000 packets: %d plain, %d rewritten", plain, rewritten)
	// The runtime allocates now and then on its own (its count moved by
	// one between runs under load): a few mallocs of slack, far below
	// one per rewritten packet.
	assert.LessOrEqual(t, rewritten, plain+4, "the port recovery allocates per packet")
}

// TestSnifferSrcPortChanges: a flow whose packets were sent from two
// source ports (another ECMP path) recovers each packet's own port, the
// cached one or the new one, and lists both.
func TestSnifferSrcPortChanges(t *testing.T) {
	cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 8, MsgSize: 3072, MTU: 1024, SnifferSrcPort: true}
	frames, cis, lt, _ := genFrames(t, cfg)
	const other = 50000
	a := analyze.New(analyze.Options{})
	var dataFlow string
	var first uint16
	moved := 0
	for i, data := range frames {
		p := a.Feed(cis[i], lt, append([]byte(nil), data...)) // the original port, to learn it
		require.True(t, p.SrcPortRewritten, "frame %d", i+1)
		if p.BTH.Opcode.IsRequest() && p.BTH.DestQP != 1 && i%2 == 0 {
			// Re-send this request from port 50000: the ICRC of that port,
			// then 4791 written over it.
			dataFlow = fmt.Sprintf("%v → %v QP %d", p.Src, p.Dst, p.BTH.DestQP)
			if first == 0 {
				first = p.OriginalSrcPort
			}
			const udp, ib = 14 + 20, 14 + 20 + 8
			binary.BigEndian.PutUint16(data[udp:], other)
			crc, err := layers.ComputeICRC(layers.NetworkIPv4, data[14:udp], data[udp:ib], data[ib:len(data)-4])
			require.NoError(t, err)
			binary.LittleEndian.PutUint32(data[len(data)-4:], crc)
			binary.BigEndian.PutUint16(data[udp:], 4791)
			moved++
		}
	}
	require.Positive(t, moved)
	b := analyze.New(analyze.Options{})
	for i, data := range frames {
		p := b.Feed(cis[i], lt, data)
		require.True(t, p.SrcPortRewritten, "frame %d", i+1)
		if fmt.Sprintf("%v → %v QP %d", p.Src, p.Dst, p.BTH.DestQP) == dataFlow && p.BTH.Opcode.IsRequest() {
			want := first
			if i%2 == 0 {
				want = other
			}
			assert.Equal(t, want, p.OriginalSrcPort, "frame %d", i+1)
		}
	}
	for _, f := range b.Report().Flows {
		if fmt.Sprintf("%v → %v QP %d", f.Src, f.Dst, f.DestQP) == dataFlow {
			assert.ElementsMatch(t, []uint16{first, other}, f.ICRC.OriginalSrcPorts)
			assert.Zero(t, f.ICRC.Bad)
		}
	}
}
