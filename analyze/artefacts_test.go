package analyze_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// feedAll analyzes a capture in memory, calling each with every frame's
// decoded view.
func feedAll(t *testing.T, capBytes []byte, each func(p *analyze.Packet)) *analyze.Report {
	t.Helper()
	r, err := capture.NewReader(bytes.NewReader(capBytes))
	require.NoError(t, err)
	a := analyze.New(analyze.Options{})
	for {
		ci, data, lt, err := r.Next()
		if err != nil {
			break
		}
		p := a.Feed(ci, lt, data)
		if each != nil {
			each(p)
		}
	}
	return a.Report()
}

func generateBytes(t *testing.T, cfg synth.Config) ([]byte, []byte) {
	t.Helper()
	var capBuf, truthBuf bytes.Buffer
	_, err := synth.Generate(cfg, &capBuf, &truthBuf)
	require.NoError(t, err)
	return capBuf.Bytes(), truthBuf.Bytes()
}

// TestToolCutFrames: frames cut with original length = captured length
// are counted as cut, with the wire length, payload and throughput of the
// same capture written whole, and one info finding.
func TestToolCutFrames(t *testing.T) {
	encaps := []synth.Encap{synth.EncapIPv4, synth.EncapIPv6, synth.EncapVLAN, synth.EncapRoCEv1, synth.EncapIB, synth.EncapERF}
	for _, enc := range encaps {
		for _, sc := range []string{synth.ScenarioWriteBW, synth.ScenarioReadBW, synth.ScenarioSendBW} {
			for _, cut := range []int{128, 243, 600} {
				label := fmt.Sprintf("%s/%s/cut%d", sc, enc, cut)
				cfg := synth.Config{Scenario: sc, Encap: enc, MTU: 1024, Messages: 6, MsgSize: 3000, Artefacts: synth.Artefacts{CutFrames: cut}}
				capCut, truth := generateBytes(t, cfg)
				cfg.CutFrames = 0
				capWhole, _ := generateBytes(t, cfg)

				var lens []int
				whole := feedAll(t, capWhole, func(p *analyze.Packet) { lens = append(lens, p.Length) })
				i := 0
				cutRep := feedAll(t, capCut, func(p *analyze.Packet) {
					assert.Equal(t, lens[i], p.Length, "%s frame %d: the wire length from the headers", label, p.Frame)
					if p.CapLength < lens[i] {
						assert.True(t, p.Truncated, "%s frame %d", label, p.Frame)
					}
					i++
				})
				diffs := compareTruth(t, truth, cutRep)
				assert.Empty(t, diffs, "%s: report differs from the truth:\n%v", label, diffs)
				require.NotZero(t, cutRep.Capture.CutFrames, label)
				assert.Equal(t, whole.Capture.Bytes, cutRep.Capture.Bytes, label)
				require.Len(t, cutRep.Flows, len(whole.Flows), label)
				for k, f := range cutRep.Flows {
					w := whole.Flows[k]
					assert.Equal(t, w.WireBytes, f.WireBytes, label)
					assert.Equal(t, w.PayloadBytes, f.PayloadBytes, label)
					assert.Equal(t, w.WireBps, f.WireBps, label)
					assert.Equal(t, w.ThroughputBps, f.ThroughputBps, label)
					assert.Zero(t, f.ICRC.Bad, label)
				}
				n := 0
				for _, f := range cutRep.Findings {
					if f.Kind == analyze.KindToolCutFrames {
						n++
						assert.Equal(t, analyze.SeverityInfo, f.Severity)
					}
					assert.NotEqual(t, analyze.SeverityError, f.Severity, "%s: %s", label, f.Detail)
				}
				assert.Equal(t, 1, n, "%s: one finding for all the cut frames", label)
			}
		}
	}
}

// TestV1RequesterV2Responder: a requester speaking RoCE v1 with
// IPv4-mapped GIDs and a responder answering RoCE v2 are two hosts, named
// by their IPv4 addresses; the directions pair (RTT measured as on an
// all-v2 capture), the connection links both flows, and every ICRC
// (computed over the GRH as captured) verifies.
func TestV1RequesterV2Responder(t *testing.T) {
	for _, sc := range []string{synth.ScenarioWriteBW, synth.ScenarioReadBW, synth.ScenarioSendBW, synth.ScenarioAtomic} {
		cfg := synth.Config{Scenario: sc, MTU: 1024, Messages: 6, MsgSize: 3000, Artefacts: synth.Artefacts{V1Requester: true}}
		capMixed, truth := generateBytes(t, cfg)
		encaps := map[analyze.Encap]int{}
		mixed := feedAll(t, capMixed, func(p *analyze.Packet) { encaps[p.Encap]++ })
		assert.Empty(t, compareTruth(t, truth, mixed), sc)
		assert.NotZero(t, encaps[analyze.EncapRoCEv1], sc)
		assert.NotZero(t, encaps[analyze.EncapRoCEv2], sc)

		cfg.V1Requester = false
		capV2, _ := generateBytes(t, cfg)
		v2 := feedAll(t, capV2, nil)
		require.Len(t, mixed.Flows, len(v2.Flows), sc)
		for k, f := range mixed.Flows {
			w := v2.Flows[k]
			assert.Equal(t, [3]any{w.Src, w.Dst, w.DestQP}, [3]any{f.Src, f.Dst, f.DestQP}, "%s: one host, one name", sc)
			assert.Equal(t, w.Connection, f.Connection, sc)
			require.Equal(t, w.Responses.RTT == nil, f.Responses.RTT == nil, sc)
			if w.Responses.RTT != nil {
				assert.Equal(t, w.Responses.RTT.Samples, f.Responses.RTT.Samples, "%s %s → %s", sc, f.Src, f.Dst)
			}
			assert.Equal(t, f.Packets, f.ICRC.OK, sc)
		}
		require.Len(t, mixed.Connections, 1)
		c := mixed.Connections[0]
		assert.Equal(t, v2.Connections[0].Requester, c.Requester, sc)
		assert.Equal(t, v2.Connections[0].Responder, c.Responder, sc)
		for _, f := range mixed.Findings {
			assert.NotContains(t, f.Flow, "::ffff:", sc)
		}
	}
}

// TestShortMAD: a REQ MAD under 256 bytes in a frame whose lengths agree
// with it is malformed and makes no CM connection; the REP that follows
// is an orphan, and the RC pair its flows show is the one connection,
// inferred.
func TestShortMAD(t *testing.T) {
	for _, enc := range []synth.Encap{synth.EncapIPv4, synth.EncapIPv6, synth.EncapRoCEv1, synth.EncapIB} {
		for _, n := range []int{1, 24, 28, 100, 200, 255} {
			label := fmt.Sprintf("%s/%d", enc, n)
			capBytes, truth := generateBytes(t, synth.Config{Scenario: synth.ScenarioWriteBW, Encap: enc, Messages: 3, Artefacts: synth.Artefacts{ShortMAD: n}})
			r := feedAll(t, capBytes, nil)
			assert.Empty(t, compareTruth(t, truth, r), label)
			assert.Equal(t, uint64(1), r.Capture.Malformed, label)
			require.Len(t, r.Capture.MalformedFrames, 1, label)
			assert.Equal(t, uint64(1), r.Capture.MalformedFrames[0].Frame, label)
			assert.Contains(t, r.Capture.MalformedFrames[0].Reason, fmt.Sprintf("%d-byte MAD", n), label)
			require.Len(t, r.Connections, 1, label)
			assert.Equal(t, analyze.StateInferred, r.Connections[0].State, label)
			for _, f := range r.Findings {
				assert.NotEqual(t, analyze.KindBadICRC, f.Kind, label)
			}
		}
	}
}

// TestHeaderOnlyCM: a header-only capture cuts the CM MADs; what was not
// captured is null, never zero, and the connection says which message was
// cut. The truth computes what is visible from the offsets of
// PROTOCOL.md.
func TestHeaderOnlyCM(t *testing.T) {
	for _, enc := range []synth.Encap{synth.EncapIPv4, synth.EncapIPv6, synth.EncapVLAN, synth.EncapRoCEv1, synth.EncapIB, synth.EncapERF} {
		for _, snap := range []int{96, 112, 128, 160} {
			label := fmt.Sprintf("%s/snap%d", enc, snap)
			capBytes, truth := generateBytes(t, synth.Config{Scenario: synth.ScenarioWriteBW, Encap: enc, Messages: 3, SnapLen: snap})
			r := feedAll(t, capBytes, nil)
			assert.Empty(t, compareTruth(t, truth, r), label)
			for _, c := range r.Connections {
				if c.State == analyze.StateInferred {
					continue // the pair the flows show, its CM handshake's QPNs cut
				}
				if c.Requester.QPN == nil || c.Requester.StartingPSN == nil || c.PathMTU == nil || c.Requester.GID == nil {
					assert.True(t, c.Truncated, label)
					assert.Contains(t, c.CutMessages, "REQ", label)
				}
			}
		}
	}
	// snap 96 over IPv4: the REQ's data starts at byte 86, so only its
	// LocalCommID (and VendorID) is captured.
	capBytes, _ := generateBytes(t, synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 3, SnapLen: 96})
	r := feedAll(t, capBytes, nil)
	require.Len(t, r.Connections, 2, "the CM connection, and the RC pair inferred as its QPNs were cut")
	assert.Equal(t, analyze.StateInferred, r.Connections[1].State)
	c := r.Connections[0]
	assert.Nil(t, c.Requester.QPN)
	assert.Nil(t, c.Requester.StartingPSN)
	assert.Nil(t, c.Requester.GID)
	assert.Nil(t, c.Requester.LID)
	assert.Nil(t, c.ServiceID)
	assert.Nil(t, c.PathMTU)
	assert.Nil(t, c.Transport)
	assert.Equal(t, "10.0.0.1", c.Requester.IP, "from the packet")
	assert.Equal(t, []string{"REQ", "REP"}, c.CutMessages)
	for _, f := range r.Flows {
		assert.Nil(t, f.MTU.Negotiated, "no negotiated MTU was captured")
	}
}

// TestFrameLengths feeds one RDMA WRITE frame with its length fields
// rewritten: lengths past a frame recorded whole are a tool's cut; a UDP
// length past the IP payload is malformed; a snap-length cut is no tool
// cut.
func TestFrameLengths(t *testing.T) {
	frameOf := func(enc synth.Encap) []byte {
		var frame []byte
		cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Encap: enc, Messages: 1, MsgSize: 1024}
		cfg.OnFrame = func(fi *synth.FrameInfo) {
			if frame == nil && fi.CM == "" {
				frame = bytes.Clone(fi.Data)
			}
		}
		_, err := synth.Generate(cfg, io.Discard, nil)
		require.NoError(t, err)
		return frame
	}
	be16 := func(b []byte, v int) { b[0], b[1] = byte(v>>8), byte(v) }
	tests := []struct {
		name      string
		enc       synth.Encap
		patch     func(f []byte) []byte
		snapped   bool // recorded with original length > captured length
		wantLen   int  // Packet.Length
		wantCut   uint64
		malformed string
	}{
		{name: "whole", enc: synth.EncapIPv4, patch: func(f []byte) []byte { return f }, wantLen: 14 + 20 + 8 + 12 + 16 + 1024 + 4},
		{name: "IPv4 and UDP lengths past the frame", enc: synth.EncapIPv4, patch: func(f []byte) []byte {
			be16(f[16:], 4156-14)
			be16(f[38:], 4156-14-20)
			return f[:243]
		}, wantLen: 4156, wantCut: 1},
		{name: "snap-length cut", enc: synth.EncapIPv4, patch: func(f []byte) []byte { return f[:128] }, snapped: true, wantLen: 14 + 20 + 8 + 12 + 16 + 1024 + 4},
		{name: "UDP length past the IP payload", enc: synth.EncapIPv4, patch: func(f []byte) []byte {
			be16(f[38:], 65535)
			return f
		}, wantLen: 14 + 20 + 8 + 12 + 16 + 1024 + 4, malformed: "UDP length 65535, IP payload 1064 bytes"},
		{name: "IPv6 payload length past the frame", enc: synth.EncapIPv6, patch: func(f []byte) []byte {
			be16(f[18:], 3000)
			be16(f[54+4:], 3000)
			return f[:200]
		}, wantLen: 14 + 40 + 3000, wantCut: 1},
		{name: "GRH PayLen past the frame", enc: synth.EncapRoCEv1, patch: func(f []byte) []byte {
			be16(f[14+4:], 4096+32)
			return f[:243]
		}, wantLen: 14 + 40 + 4096 + 32, wantCut: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frame := frameOf(tt.enc)
			orig := len(frame)
			data := tt.patch(frame)
			ci := gopacket.CaptureInfo{Timestamp: synth.StartTime, CaptureLength: len(data), Length: len(data)}
			if tt.snapped {
				ci.Length = orig
			}
			a := analyze.New(analyze.Options{})
			p := a.Feed(ci, gplayers.LinkTypeEthernet, data)
			assert.Equal(t, tt.wantLen, p.Length)
			r := a.Report()
			assert.Equal(t, tt.wantCut, r.Capture.CutFrames)
			assert.Equal(t, uint64(tt.wantLen), r.Capture.Bytes)
			if tt.malformed != "" {
				require.Equal(t, uint64(1), r.Capture.Malformed)
				assert.Contains(t, r.Capture.MalformedFrames[0].Reason, tt.malformed)
				return
			}
			require.Zero(t, r.Capture.Malformed, "%v", r.Capture.MalformedFrames)
			require.Len(t, r.Flows, 1)
			assert.Equal(t, uint64(1024+max(0, tt.wantLen-orig)), r.Flows[0].PayloadBytes, "payload from the length fields")
			if len(data) < tt.wantLen {
				assert.Equal(t, uint64(1), r.Flows[0].ICRC.Unverifiable)
			}
		})
	}
}
