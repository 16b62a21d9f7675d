package synth

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/roce-dissect/roce-dissect/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type record struct {
	ci   gopacket.CaptureInfo
	data []byte
}

// readCapture reads a pcap or pcapng file.
func readCapture(t testing.TB, b []byte) (gplayers.LinkType, []record) {
	t.Helper()
	var recs []record
	type src interface {
		ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	}
	var r src
	var lt gplayers.LinkType
	if len(b) >= 4 && binary.LittleEndian.Uint32(b) == 0x0A0D0D0A {
		ng, err := pcapgo.NewNgReader(bytes.NewReader(b), pcapgo.DefaultNgReaderOptions)
		require.NoError(t, err)
		r, lt = ng, ng.LinkType()
	} else {
		pr, err := pcapgo.NewReader(bytes.NewReader(b))
		require.NoError(t, err)
		r, lt = pr, pr.LinkType()
	}
	for {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		recs = append(recs, record{ci, append([]byte(nil), data...)})
	}
	return lt, recs
}

// generate runs the generator and keeps the frame infos.
func generate(t testing.TB, cfg Config) ([]byte, *Truth, []FrameInfo) {
	t.Helper()
	var infos []FrameInfo
	cfg.OnFrame = func(fi *FrameInfo) {
		c := *fi
		c.Data = nil
		infos = append(infos, c)
	}
	var capBuf, truthBuf bytes.Buffer
	tr, err := Generate(cfg, &capBuf, &truthBuf)
	require.NoError(t, err)
	var back Truth
	require.NoError(t, json.Unmarshal(truthBuf.Bytes(), &back))
	return capBuf.Bytes(), tr, infos
}

// checkPauseDecode compares a pause frame decoded by gopacket and the
// project's MAC Control layer with what the generator says it wrote.
func checkPauseDecode(t *testing.T, pkt gopacket.Packet, fi FrameInfo, msg string) {
	t.Helper()
	require.Nil(t, pkt.ErrorLayer(), msg)
	mc, ok := pkt.Layer(layers.LayerTypeMACControl).(*layers.MACControl)
	require.True(t, ok, "%s: no MAC Control in %v", msg, pkt)
	assert.Equal(t, fi.Pause.Opcode, uint16(mc.Opcode), msg)
	if fi.Pause.Kind == Pause8023x {
		assert.Equal(t, fi.Pause.Quanta[0], mc.PauseTime, msg)
		return
	}
	assert.Equal(t, fi.Pause.ClassEnable, mc.ClassEnableVector, msg)
	assert.Equal(t, fi.Pause.Quanta, mc.PauseTimes, msg)
}

var allEncaps = []Encap{EncapIPv4, EncapIPv6, EncapVLAN, EncapRoCEv1, EncapIB, EncapERF}

// checkDecode decodes every frame with gopacket and the project's layers
// and compares it with what the generator says it wrote.
func checkDecode(t *testing.T, capture []byte, infos []FrameInfo, encap Encap) {
	t.Helper()
	lt, recs := readCapture(t, capture)
	require.Equal(t, linkType(encap), lt)
	require.Len(t, recs, len(infos))
	for i, rec := range recs {
		fi := infos[i]
		encap := fi.Encap // a V1Requester capture mixes two
		msg := fmt.Sprintf("frame %d (%s PSN %d)", i+1, fi.Opcode, fi.PSN)
		require.Equal(t, fi.CaptureLength, rec.ci.CaptureLength, msg)
		require.Equal(t, fi.Length, rec.ci.Length, msg)
		require.Equal(t, fi.Timestamp.UnixNano()/1000, rec.ci.Timestamp.UnixNano()/1000, msg)
		pkt := gopacket.NewPacket(rec.data, lt, gopacket.Default)
		if fi.Pause != nil {
			checkPauseDecode(t, pkt, fi, msg)
			continue
		}
		truncated := rec.ci.CaptureLength < rec.ci.Length || fi.ToolCut
		switch {
		case fi.Malformed:
			require.NotNil(t, pkt.ErrorLayer(), "%s: written malformed", msg)
		case !truncated:
			require.Nil(t, pkt.ErrorLayer(), "%s: %v", msg, pkt.ErrorLayer())
		}
		if fi.Malformed {
			continue // what it holds is not what a well-formed frame holds
		}
		bl := pkt.Layer(layers.LayerTypeBTH)
		require.NotNil(t, bl, "%s: no BTH in %v", msg, pkt)
		bth := bl.(*layers.BTH)
		assert.Equal(t, fi.Opcode, bth.Opcode, msg)
		assert.Equal(t, fi.PSN, bth.PSN, msg)
		assert.Equal(t, fi.DestQP, bth.DestQP, msg)
		assert.Equal(t, fi.AckReq, bth.AckReq, msg)
		checkTrailersAndLink(t, pkt, fi, encap, truncated, msg)
		if truncated {
			continue
		}
		checkHeadersAfterBTH(t, pkt, bth, fi, msg)
	}
}

// checkTrailersAndLink checks what a frame carries outside the transport
// headers as the generator says: its ICRC (with the sniffer's port where
// it rewrote it), the VCRC of native IB frames it did not cut, the ECN
// field of RoCE v2 and the VLAN tag.
func checkTrailersAndLink(t *testing.T, pkt gopacket.Packet, fi FrameInfo, encap Encap, truncated bool, msg string) {
	t.Helper()
	// ICRC as the generator says.
	if il := pkt.Layer(layers.LayerTypeICRC); il != nil && fi.SrcPortRewritten && fi.ICRC == layers.ICRCOK {
		checkSnifferPort(t, pkt, il.(*layers.ICRC), fi, msg)
	} else if il != nil {
		assert.Equal(t, fi.ICRC, il.(*layers.ICRC).Status, msg)
	} else {
		assert.Equal(t, layers.ICRCUnverifiable, fi.ICRC, msg)
	}
	if encap.Native() && !truncated {
		vl := pkt.Layer(layers.LayerTypeVCRC)
		require.NotNil(t, vl, msg)
		assert.Equal(t, layers.ICRCOK, vl.(*layers.VCRC).Status, msg)
	}
	if encap.RoCEv2() {
		var ecn uint8
		if ip4, ok := pkt.Layer(gplayers.LayerTypeIPv4).(*gplayers.IPv4); ok {
			ecn = ip4.TOS & 3
		} else if ip6, ok := pkt.Layer(gplayers.LayerTypeIPv6).(*gplayers.IPv6); ok {
			ecn = ip6.TrafficClass & 3
		} else {
			t.Fatalf("%s: no IP layer", msg)
		}
		assert.Equal(t, fi.ECNCE, ecn == 3, msg)
	}
	if encap == EncapVLAN {
		d, ok := pkt.Layer(gplayers.LayerTypeDot1Q).(*gplayers.Dot1Q)
		require.True(t, ok, msg)
		assert.Equal(t, uint16(vlanID), d.VLANIdentifier)
	}
}

// checkHeadersAfterBTH checks the extension headers of a frame the
// capture holds whole, its payload length and, for a CM MAD, the MAD's
// class, method and attribute, as the generator says.
func checkHeadersAfterBTH(t *testing.T, pkt gopacket.Packet, bth *layers.BTH, fi FrameInfo, msg string) {
	t.Helper()
	if l, ok := pkt.Layer(layers.LayerTypeRETH).(*layers.RETH); ok {
		assert.Equal(t, fi.DMALength, l.DMALength, msg)
		assert.Equal(t, fi.VA, l.VA, msg)
		assert.Equal(t, fi.RKey, l.RKey, msg)
	}
	if l, ok := pkt.Layer(layers.LayerTypeAETH).(*layers.AETH); ok {
		assert.Equal(t, fi.Syndrome, l.Syndrome, msg)
		assert.Equal(t, fi.MSN, l.MSN, msg)
	}
	if l, ok := pkt.Layer(layers.LayerTypeDETH).(*layers.DETH); ok {
		assert.Equal(t, fi.QKey, l.QKey, msg)
		assert.Equal(t, fi.SrcQP, l.SrcQP, msg)
	}
	if l, ok := pkt.Layer(layers.LayerTypeAtomicETH).(*layers.AtomicETH); ok {
		assert.Equal(t, fi.VA, l.VA, msg)
	}
	if l, ok := pkt.Layer(layers.LayerTypeImmDt).(*layers.ImmDt); ok {
		assert.Equal(t, fi.Immediate, l.Immediate, msg)
	}
	if l, ok := pkt.Layer(layers.LayerTypeIETH).(*layers.IETH); ok {
		assert.Equal(t, fi.Immediate, l.RKey, msg)
	}
	assert.Equal(t, fi.PayloadLen, bth.PayloadLen(), msg)
	if fi.CM != "" {
		// The MAD: a CM Send of the right attribute (the bytes after
		// the extension headers).
		mad := bth.LayerPayload()[bth.Opcode.HeaderLen():]
		require.Len(t, mad, madLen, msg)
		assert.Equal(t, []byte{1, 0x07, 2, 0x03}, mad[:4], msg)
		attr := map[string]uint16{"REQ": attrREQ, "REP": attrREP, "RTU": attrRTU, "DREQ": attrDREQ, "DREP": attrDREP}[fi.CM]
		assert.Equal(t, attr, binary.BigEndian.Uint16(mad[16:18]), msg)
		assert.Equal(t, uint32(layers.QKeyGSI), fi.QKey, msg)
		assert.Equal(t, uint32(1), fi.DestQP, msg)
	}
}

// checkTruthTotals checks the truth adds up, and its ICRC counts against
// an independent count: the ICRC status that gopacket and the project's
// layers find in the bytes of capture (the ICRC layer's verdict, or
// unverifiable when the capture cut the ICRC off), not the status the
// generator recorded for each frame.
func checkTruthTotals(t *testing.T, tr *Truth, infos []FrameInfo, capture []byte) {
	t.Helper()
	assert.Equal(t, len(infos), tr.Frames)
	good, pauses := 0, 0 // RDMA frames not written malformed (those in flows), pause frames
	for _, fi := range infos {
		switch {
		case fi.Pause != nil:
			pauses++
		case !fi.Malformed:
			good++
		}
	}
	assert.Equal(t, len(infos)-good-pauses, tr.Malformed)
	assert.Equal(t, good, tr.RoCEPackets)
	pk, bad, unv := 0, 0, 0
	var pay int64
	for _, f := range tr.Flows {
		pk += f.Packets
		pay += f.PayloadBytes
		bad += f.ICRC.Bad
		unv += f.ICRC.Unverifiable
		assert.Equal(t, f.Packets, f.ICRC.OK+f.ICRC.Bad+f.ICRC.Unverifiable)
		var gapSum int64
		for _, g := range f.Requests.Gaps {
			gapSum += g.Count
		}
		assert.Equal(t, f.Requests.Missing, gapSum)
	}
	assert.Equal(t, good, pk)
	var wantPay int64
	for _, fi := range infos {
		if fi.Malformed || fi.Pause != nil {
			continue
		}
		wantPay += int64(fi.PayloadLen)
	}
	assert.Equal(t, wantPay, pay)
	lt, recs := readCapture(t, capture)
	require.Len(t, recs, len(infos))
	wantBad, wantUnv := 0, 0
	for i, rec := range recs {
		if infos[i].Pause != nil {
			continue // no ICRC
		}
		pkt := gopacket.NewPacket(rec.data, lt, gopacket.NoCopy)
		if infos[i].SrcPortRewritten {
			// The NIC sniffer's 4791 hides the port the ICRC covers: put
			// the real one back and decode again.
			udp, ok := pkt.Layer(gplayers.LayerTypeUDP).(*gplayers.UDP)
			require.True(t, ok, "frame %d: a rewritten port needs UDP", i+1)
			binary.BigEndian.PutUint16(udp.Contents[0:2], infos[i].SrcPort)
			pkt = gopacket.NewPacket(rec.data, lt, gopacket.NoCopy)
		}
		il, ok := pkt.Layer(layers.LayerTypeICRC).(*layers.ICRC)
		switch {
		case !ok || il.Status == layers.ICRCUnverifiable:
			wantUnv++
		case il.Status == layers.ICRCBad:
			wantBad++
		}
	}
	assert.Equal(t, wantBad, bad, "frames with a bad ICRC")
	assert.Equal(t, wantUnv, unv, "frames whose ICRC cannot be checked")
}

func TestScenariosDecode(t *testing.T) {
	for _, sc := range []string{ScenarioWriteBW, ScenarioReadBW, ScenarioSendBW, ScenarioAtomic, ScenarioUD, ScenarioMix} {
		for _, enc := range allEncaps {
			t.Run(sc+"/"+enc.String(), func(t *testing.T) {
				cfg := Config{Scenario: sc, Encap: enc, Messages: 5, MsgSize: 2500, MTU: 1024, Packets: 300, QPs: 6}
				if sc == ScenarioUD {
					cfg.MsgSize = 700
				}
				capture, tr, infos := generate(t, cfg)
				checkDecode(t, capture, infos, enc)
				checkTruthTotals(t, tr, infos, capture)
				if sc == ScenarioMix {
					assert.Len(t, infos, 300)
					assert.Len(t, tr.Connections, 6)
				}
			})
		}
	}
}

func TestImpairmentsDecode(t *testing.T) {
	start := uint32(100)
	all := Impairments{
		Drop: []PSNRef{{Value: 2, Relative: true}}, NAK: []PSNRef{{Value: 104}}, RNR: []PSNRef{{Value: 106}},
		Dup: []PSNRef{{Value: 108}}, Reorder: []PSNRef{{Value: 109}}, CorruptICRC: []PSNRef{{Value: 110}},
	}
	for _, sc := range []string{ScenarioWriteBW, ScenarioReadBW, ScenarioSendBW, ScenarioAtomic, ScenarioUD} {
		for _, enc := range allEncaps {
			for _, snap := range []int{0, 100} {
				t.Run(fmt.Sprintf("%s/%s/snap%d", sc, enc, snap), func(t *testing.T) {
					cfg := Config{Scenario: sc, Encap: enc, Messages: 12, MsgSize: 1500, MTU: 1024, StartPSN: &start, Impairments: all, SnapLen: snap}
					switch sc {
					case ScenarioUD:
						cfg.MsgSize, cfg.NAK, cfg.RNR = 600, nil, nil
					case ScenarioReadBW:
						cfg.MsgSize = 1000 // one PSN per READ
					}
					if enc.RoCEv2() {
						cfg.ECN = []PSNRef{{Value: 101}, {Value: 111}}
					}
					capture, tr, infos := generate(t, cfg)
					checkDecode(t, capture, infos, enc)
					checkTruthTotals(t, tr, infos, capture)
				})
			}
		}
	}
}

// dataFlow returns the flow of the data requests (A → B, not QP1).
func dataFlow(t *testing.T, tr *Truth) *Flow {
	t.Helper()
	for _, f := range tr.Flows {
		if f.DestQP != 1 && f.Requests.Packets > 0 {
			return f
		}
	}
	t.Fatal("no data flow")
	return nil
}

// respFlow returns the flow of the responses (B → A, not QP1).
func respFlow(t *testing.T, tr *Truth) *Flow {
	t.Helper()
	for _, f := range tr.Flows {
		if f.DestQP != 1 && f.Requests.Packets == 0 {
			return f
		}
	}
	t.Fatal("no response flow")
	return nil
}

func psnp(v uint32) *uint32 { return &v }

func TestTruthByConstruction(t *testing.T) {
	start := uint32(1000)
	base := Config{Scenario: ScenarioWriteBW, Messages: 6, MsgSize: 3072, MTU: 1024, StartPSN: &start}
	// 6 messages × 3 packets: request PSNs 1000…1017.
	t.Run("clean", func(t *testing.T) {
		_, tr, _ := generate(t, base)
		f := dataFlow(t, tr)
		assert.Equal(t, 18, f.Requests.Packets)
		assert.Equal(t, psnp(1000), f.Requests.PSNFirst)
		assert.Equal(t, psnp(1017), f.Requests.PSNLast)
		assert.Equal(t, 6, f.Messages.Count)
		assert.Equal(t, int64(6*3072), f.Messages.Bytes)
		assert.Equal(t, int64(6*3072), f.PayloadBytes)
		assert.Equal(t, 1024, *f.MTU.Inferred)
		assert.Equal(t, "RC", f.Transport)
		r := respFlow(t, tr)
		assert.Equal(t, 6, r.Responses.ACKs)
		assert.Equal(t, 6, r.Packets)
		require.Len(t, tr.Connections, 1)
		assert.Equal(t, psnp(1000), tr.Connections[0].Requester.SendPSN, "the requester sends from the REP's StartingPSN")
		assert.Equal(t, ptrTo(uint32(1000)), tr.Connections[0].Responder.StartingPSN)
		assert.Equal(t, ptrTo(1024), tr.Connections[0].PathMTU)
	})
	t.Run("drop", func(t *testing.T) {
		cfg := base
		cfg.Drop = []PSNRef{{Value: 1002}, {Value: 1004}, {Value: 1005}}
		_, tr, _ := generate(t, cfg)
		f := dataFlow(t, tr)
		assert.Equal(t, 15, f.Requests.Packets)
		assert.Equal(t, int64(3), f.Requests.Missing)
		assert.Equal(t, []PSNGap{{1002, 1002, 1}, {1004, 1005, 2}}, f.Requests.Gaps)
		assert.Equal(t, 4, f.Messages.Count) // messages 0 and 1 lost a packet
	})
	t.Run("nak go-back-N", func(t *testing.T) {
		cfg := base
		cfg.NAK = []PSNRef{{Value: 1007}}
		_, tr, infos := generate(t, cfg)
		f := dataFlow(t, tr)
		// 1007 (lost after the tap), 1008, 1009 in flight, NAK 1007, resend 1007…
		assert.Equal(t, 18+3, f.Requests.Packets)
		assert.Equal(t, 3, f.Requests.Retransmitted)
		assert.Equal(t, 0, f.Requests.Duplicates)
		assert.Equal(t, 0, f.Requests.OutOfOrder)
		assert.Equal(t, int64(0), f.Requests.Missing)
		assert.Equal(t, 6, f.Messages.Count)
		r := respFlow(t, tr)
		assert.Equal(t, 1, r.Responses.NAKs)
		var nak *FrameInfo
		for i := range infos {
			if infos[i].Syndrome == synNAKSeq {
				nak = &infos[i]
			}
		}
		require.NotNil(t, nak)
		assert.Equal(t, uint32(1007), nak.PSN)
		assert.Equal(t, uint32(2), nak.MSN) // messages 0 and 1 done
	})
	t.Run("drop and nak", func(t *testing.T) {
		cfg := base
		cfg.Drop = []PSNRef{{Value: 1007}}
		cfg.NAK = []PSNRef{{Value: 1007}}
		_, tr, _ := generate(t, cfg)
		f := dataFlow(t, tr)
		assert.Equal(t, 2, f.Requests.Retransmitted) // 1008, 1009
		assert.Equal(t, 1, f.Requests.OutOfOrder)    // 1007 fills the hole
		assert.Equal(t, int64(0), f.Requests.Missing)
		assert.Equal(t, 6, f.Messages.Count)
	})
	t.Run("dup reorder", func(t *testing.T) {
		cfg := base
		cfg.Dup = []PSNRef{{Value: 1003}}
		cfg.Reorder = []PSNRef{{Value: 1010}}
		_, tr, _ := generate(t, cfg)
		f := dataFlow(t, tr)
		assert.Equal(t, 19, f.Requests.Packets)
		assert.Equal(t, 1, f.Requests.Duplicates)
		assert.Equal(t, 1, f.Requests.OutOfOrder)
		assert.Equal(t, 0, f.Requests.Retransmitted)
		assert.Equal(t, int64(0), f.Requests.Missing)
		assert.Equal(t, 6, f.Messages.Count)
	})
	t.Run("rnr", func(t *testing.T) {
		cfg := base
		cfg.RNR = []PSNRef{{Value: 1003}}
		_, tr, infos := generate(t, cfg)
		f := dataFlow(t, tr)
		assert.Equal(t, 2, f.Requests.Retransmitted)
		assert.Equal(t, 1, respFlow(t, tr).Responses.RNRNAKs)
		// The resend waits for the RNR timer.
		for i := 1; i < len(infos); i++ {
			if infos[i-1].Syndrome == synRNR {
				assert.GreaterOrEqual(t, infos[i].Timestamp.Sub(infos[i-1].Timestamp).Nanoseconds(), int64(rnrDelayNs))
			}
		}
	})
	t.Run("ecn", func(t *testing.T) {
		cfg := base
		cfg.ECN = []PSNRef{{Value: 1001}, {Value: 1002}}
		_, tr, _ := generate(t, cfg)
		assert.Equal(t, 2, dataFlow(t, tr).Congestion.ECNCE)
		r := respFlow(t, tr)
		assert.Equal(t, 2, r.Congestion.CNPs)
		assert.Equal(t, 8, r.Packets)
	})
	t.Run("corrupt", func(t *testing.T) {
		cfg := base
		cfg.CorruptICRC = []PSNRef{{Value: 1001}, {Value: 1016}}
		_, tr, _ := generate(t, cfg)
		f := dataFlow(t, tr)
		assert.Equal(t, 2, f.ICRC.Bad)
		assert.Equal(t, 16, f.ICRC.OK)
	})
	t.Run("wrap", func(t *testing.T) {
		cfg := base
		s := uint32(0xFFFFF8)
		cfg.StartPSN = &s
		cfg.Drop = []PSNRef{{Value: 0xFFFFFF}, {Value: 0}}
		_, tr, _ := generate(t, cfg)
		f := dataFlow(t, tr)
		assert.Equal(t, psnp(0xFFFFF8), f.Requests.PSNFirst)
		assert.Equal(t, psnp(9), f.Requests.PSNLast)
		assert.Equal(t, []PSNGap{{0xFFFFFF, 0, 2}}, f.Requests.Gaps)
	})
	t.Run("read", func(t *testing.T) {
		cfg := base
		cfg.Scenario = ScenarioReadBW
		cfg.Drop = []PSNRef{{Value: 1003}} // the second READ REQUEST: 3 PSNs
		_, tr, _ := generate(t, cfg)
		f := dataFlow(t, tr)
		assert.Equal(t, 5, f.Requests.Packets)
		assert.Equal(t, psnp(1015), f.Requests.PSNLast)
		assert.Equal(t, []PSNGap{{1003, 1005, 3}}, f.Requests.Gaps)
		r := respFlow(t, tr)
		assert.Equal(t, 18, r.Responses.ReadResponses)
		assert.Equal(t, 6, r.Messages.Count)
		assert.Equal(t, int64(6*3072), r.Messages.Bytes)
		assert.Equal(t, 1024, *r.MTU.Inferred)
		assert.Equal(t, 0, f.Messages.Count)
	})
	t.Run("header-only", func(t *testing.T) {
		cfg := base
		cfg.SnapLen = 128
		_, tr, _ := generate(t, cfg)
		f := dataFlow(t, tr)
		assert.Equal(t, 18, f.ICRC.Unverifiable)
		assert.Equal(t, int64(6*3072), f.PayloadBytes)
		r := respFlow(t, tr)
		assert.Equal(t, 6, r.ICRC.OK) // 62-byte ACKs fit in the snap length
	})
	t.Run("ud", func(t *testing.T) {
		cfg := base
		cfg.Scenario, cfg.MsgSize = ScenarioUD, 512
		_, tr, _ := generate(t, cfg)
		require.Len(t, tr.Flows, 1)
		f := tr.Flows[0]
		assert.Equal(t, "UD", f.Transport)
		assert.Equal(t, 6, f.Messages.Count)
		assert.Empty(t, tr.Connections)
	})
}

func TestDeterministic(t *testing.T) {
	for _, cfg := range []Config{
		{Scenario: ScenarioWriteBW, Encap: EncapIPv6, Format: FormatPcapNG},
		{Scenario: ScenarioReadBW, Encap: EncapERF, Nanos: true},
		{Scenario: ScenarioMix, Packets: 2000, QPs: 10, SnapLen: 128},
	} {
		a, _, _ := generate(t, cfg)
		b, _, _ := generate(t, cfg)
		require.Equal(t, a, b, cfg.Scenario)
		cfg.Seed = 2
		c, _, _ := generate(t, cfg)
		require.NotEqual(t, a, c, cfg.Scenario)
	}
}

// TestFastICRC checks that the ICRC mix computes after serialization
// equals the one the BTH computes while serializing.
func TestFastICRC(t *testing.T) {
	for _, enc := range []Encap{EncapIPv4, EncapIPv6, EncapVLAN} {
		cfg := Config{Scenario: ScenarioSendBW, Encap: enc}
		cfg.CorruptICRC = []PSNRef{{Value: 3, Relative: true}}
		cfg.ECN = []PSNRef{{Value: 1, Relative: true}}
		require.NoError(t, cfg.normalize())
		g, err := newGenerator(&cfg, io.Discard)
		require.NoError(t, err)
		g.hosts = []*host{newHost(0, enc, g.rng), newHost(1, enc, g.rng)}
		c := newConn(0, g.hosts[0], g.hosts[1], kindSend, 1024, g.rng, qpBase)
		gen := newConnGen(c, g.rng, 10, 3000)
		var list []pkt
		var p pkt
		for gen.next(&p) {
			list = append(list, p)
		}
		list, err = applyImpairments(list, &cfg.Impairments, c.psnA, &cfg.NIC)
		require.NoError(t, err)
		slow, fast := newBuilder(enc, false), newBuilder(enc, true)
		for i := range list {
			a, err := slow.build(&list[i], StartTime)
			require.NoError(t, err)
			b, err := fast.build(&list[i], StartTime)
			require.NoError(t, err)
			require.Equal(t, a, b, "%s packet %d", enc, i)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for name, cfg := range map[string]Config{
		"scenario":  {Scenario: "nope"},
		"mtu":       {MTU: 1000},
		"ud size":   {Scenario: ScenarioUD, MsgSize: 2048, MTU: 1024},
		"mix imp":   {Scenario: ScenarioMix, Impairments: Impairments{Drop: []PSNRef{{Value: 1}}}}, // no connection sends PSN 1
		"ecn ib":    {Encap: EncapIB, Impairments: Impairments{ECN: []PSNRef{{Value: 1}}}},
		"ud nak":    {Scenario: ScenarioUD, Impairments: Impairments{NAK: []PSNRef{{Value: 1}}}},
		"mix small": {Scenario: ScenarioMix, Packets: 10, QPs: 4},
		"no psn":    {Impairments: Impairments{Dup: []PSNRef{{Value: 500, Relative: true}}}},
		// Impairments that would leave no trace: refused, not ignored.
		"reorder last": {Impairments: Impairments{Reorder: []PSNRef{{Value: 63, Relative: true}}}}, // 16 × 4 packets
		"dup dropped":  {Impairments: Impairments{Dup: []PSNRef{{Value: 5, Relative: true}}, Drop: []PSNRef{{Value: 5, Relative: true}}}},
	} {
		_, err := Generate(cfg, io.Discard, nil)
		assert.ErrorIs(t, err, ErrConfig, name)
	}
}

func TestParseArgs(t *testing.T) {
	cfg, out, truth, err := ParseArgs([]string{"read-bw", "-o", "x.pcapng", "--format", "pcapng", "--encap", "ib",
		"--drop", "5,+7", "--start-psn", "3", "--snaplen", "64"})
	require.NoError(t, err)
	assert.Equal(t, "x.pcapng", out)
	assert.Equal(t, "x.pcapng.truth.json", truth)
	assert.Equal(t, EncapIB, cfg.Encap)
	assert.Equal(t, FormatPcapNG, cfg.Format)
	assert.Equal(t, []PSNRef{{Value: 5}, {Value: 7, Relative: true}}, cfg.Drop)
	assert.Equal(t, uint32(3), *cfg.StartPSN)
	assert.Equal(t, 64, cfg.SnapLen)
	for _, bad := range [][]string{nil, {"--mtu", "1"}, {"write-bw", "--mtu", "1000"}, {"write-bw", "--drop", "x"},
		{"write-bw", "--encap", "atm"}, {"write-bw", "extra"}, {"write-bw", "--start-psn", "99999999"}} {
		_, _, _, err := ParseArgs(bad)
		assert.Error(t, err, "%q", bad)
	}
	var so, se bytes.Buffer
	assert.Equal(t, 2, Run([]string{"write-bw", "--format", "tar"}, &so, &se))
	assert.Contains(t, se.String(), "unknown format")
}

func TestRunWritesFiles(t *testing.T) {
	dir := t.TempDir()
	var so, se bytes.Buffer
	out := dir + "/a.pcap"
	require.Equal(t, 0, Run([]string{"atomic", "-o", out, "--messages", "4"}, &so, &se), se.String())
	assert.FileExists(t, out)
	assert.FileExists(t, out+".truth.json")
}

// TestTapDrop: --tap-drop names packets the tap missed that the responder
// still got: no NAK, no resend, and the ACKs that follow cover them. The
// truth counts them as not captured and expects one capture_gap finding.
func TestTapDrop(t *testing.T) {
	cfg, _, _, err := ParseArgs([]string{"write-bw", "--messages", "4", "--msg-size", "2048", "--mtu", "1024",
		"--start-psn", "100", "--tap-drop", "+0,+3", "--drop", "105"})
	require.NoError(t, err)
	require.Equal(t, []PSNRef{{Value: 105}, {Value: 0, Relative: true}, {Value: 3, Relative: true}}, cfg.Drop)
	_, tr, infos := generate(t, cfg)
	for _, fi := range infos {
		if fi.Opcode.IsRequest() && fi.CM == "" {
			assert.NotContains(t, []uint32{100, 103, 105}, fi.PSN, "frame %d: the tap missed it", fi.Index)
		}
		assert.NotEqual(t, uint8(synNAKSeq), fi.Syndrome, "frame %d: nobody NAKs a packet the responder got", fi.Index)
	}
	f := dataFlow(t, tr)
	assert.Equal(t, int64(3), f.Requests.Missing, "PSN 100 is missing too: the requester starts at the REP's StartingPSN")
	assert.Equal(t, int64(3), f.Requests.MissingNotCaptured)
	assert.Zero(t, f.Requests.MissingLost)
	assert.Zero(t, f.Requests.Retransmitted)
	assert.Equal(t, int64(3), tr.Capture.NotCaptured)
	var gaps []Finding
	for _, fd := range tr.Findings {
		if fd.Kind == "capture_gap" || fd.Kind == "psn_gap" {
			gaps = append(gaps, fd)
		}
	}
	require.Len(t, gaps, 1)
	assert.Equal(t, Finding{Kind: "capture_gap", Severity: "info", Frame: gaps[0].Frame}, gaps[0])
}
