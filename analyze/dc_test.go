package analyze_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/layers"
)

// dcFrame wraps the bytes that follow the BTH of a real DC packet (issue
// 10: ICRC not given) in Ethernet/IPv4/UDP and a BTH of our choosing; the
// ICRC is computed with layers.ComputeICRC (the layers' golden tests check
// that function against an independent zlib computation).
func dcFrame(t *testing.T, opcode byte, destQP, psn uint32, afterBTH string) []byte {
	t.Helper()
	ib, err := hex.DecodeString(strings.ReplaceAll(afterBTH, " ", ""))
	require.NoError(t, err)
	bth := []byte{opcode, 0, 0xFF, 0xFF, 0, byte(destQP >> 16), byte(destQP >> 8), byte(destQP), 0x80, byte(psn >> 16), byte(psn >> 8), byte(psn)}
	ib = append(bth, ib...)
	udpLen := 8 + len(ib) + 4
	ip := []byte{0x45, 0x02, byte((20 + udpLen) >> 8), byte(20 + udpLen), 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2}
	udp := []byte{0xC3, 0x50, 0x12, 0xB7, byte(udpLen >> 8), byte(udpLen), 0, 0}
	crc, err := layers.ComputeICRC(layers.NetworkIPv4, ip, udp, ib)
	require.NoError(t, err)
	f := append([]byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00}, ip...)
	f = append(append(f, udp...), ib...)
	return binary.LittleEndian.AppendUint32(f, crc)
}

// TestRealDCFrames feeds the DC RDMA WRITE ONLY of 8 bytes and its ACK from
// a real ConnectX capture (the bytes after the BTH, PROTOCOL.md): the flow
// is DC, the RETH says 8 bytes and the message is 8 bytes, so there is no
// dma_length_mismatch; forcing RD reproduces the old misreading.
func TestRealDCFrames(t *testing.T) {
	write := dcFrame(t, 0x4A, 0x61E24F, 100, "11009036 007150010061e24e 0000c0dc00000000 00007fb235d09a00 00053829 00000008 0102030405060708")
	ack := dcFrame(t, 0x51, 0x61E24E, 100, "10807ff4 007150010061e24f 0000c0db00000000 1f000000")
	ack[29], ack[33] = 2, 1 // from 10.0.0.2 to 10.0.0.1
	binary.LittleEndian.PutUint32(ack[len(ack)-4:], func() uint32 {
		c, err := layers.ComputeICRC(layers.NetworkIPv4, ack[14:34], ack[34:42], ack[42:len(ack)-4])
		require.NoError(t, err)
		return c
	}())
	ci := gopacket.CaptureInfo{Timestamp: time.Unix(1, 0), CaptureLength: len(write), Length: len(write)}
	for _, mode := range []layers.RDDecoding{layers.RDDecodeAuto, layers.RDDecodeDC, layers.RDDecodeRD} {
		t.Run(mode.String(), func(t *testing.T) {
			a := analyze.New(analyze.Options{DecodeRDAs: mode})
			p := a.Feed(ci, gplayers.LinkTypeEthernet, write)
			require.NoError(t, p.Err)
			assert.Equal(t, layers.ICRCOK, p.ICRC.Status)
			if mode == layers.RDDecodeRD {
				assert.Equal(t, uint32(902863360), p.RETH.DMALength, "the issue's misreading")
				assert.Nil(t, p.DCETH)
			} else {
				require.NotNil(t, p.DCETH)
				assert.Equal(t, uint32(0xC0DC), p.DCETH.Word0)
				assert.Equal(t, uint32(8), p.RETH.DMALength)
				assert.Equal(t, uint64(0x7FB235D09A00), p.RETH.VA)
				assert.Equal(t, 8, p.PayloadLen)
			}
			ci.CaptureLength, ci.Length = len(ack), len(ack)
			p = a.Feed(ci, gplayers.LinkTypeEthernet, ack)
			require.NoError(t, p.Err)
			r := a.Report()
			require.Len(t, r.Flows, 2)
			w := findFlow(t, r, "10.0.0.1", "10.0.0.2", 0x61E24F)
			if mode == layers.RDDecodeRD {
				assert.Equal(t, "RD", w.Transport)
				assert.Equal(t, uint64(1), w.Messages.DMALengthMismatches)
				return
			}
			assert.Equal(t, "DC", w.Transport)
			assert.Equal(t, uint64(1), w.Messages.Count)
			assert.Equal(t, uint64(8), w.Messages.Bytes)
			assert.Zero(t, w.Messages.DMALengthMismatches)
			assert.Empty(t, r.Findings)
			back := findFlow(t, r, "10.0.0.2", "10.0.0.1", 0x61E24E)
			assert.Equal(t, "DC", back.Transport)
			require.NotNil(t, back.Responses)
			assert.Equal(t, uint64(1), back.Responses.ACKs)
			require.NotNil(t, w.Responses)
			require.NotNil(t, w.Responses.RTT, "the ACK answers the write")
			assert.Equal(t, uint64(1), w.Responses.RTT.Samples)
		})
	}
}

// TestDCScenarios generates DC traffic (roce-synth --dc) over every
// encapsulation, clean and impaired, whole and header-only, and compares
// the report with the generator's truth field by field: transport DC,
// payload, messages, MTU, PSN gaps and retransmissions; a clean capture has
// no findings at all.
func TestDCScenarios(t *testing.T) {
	// Impairments name request packets by index; scaleImpairments turns
	// them into PSN offsets.
	impairments := map[string]synth.Impairments{
		"clean":    {},
		"drop+nak": {Drop: rel(2), NAK: rel(8)},
		"rnr":      {RNR: rel(6)},
		"dup":      {Dup: rel(4)},
	}
	encaps := []synth.Encap{synth.EncapIPv4, synth.EncapIPv6, synth.EncapRoCEv1, synth.EncapIB, synth.EncapERF}
	n := 0
	for _, sc := range []string{synth.ScenarioWriteBW, synth.ScenarioReadBW, synth.ScenarioAtomic} {
		for _, enc := range encaps {
			for name, im := range impairments {
				// A READ of 3 path MTUs reserves 3 PSNs: impairments name
				// every third PSN.
				k, msgs, size := requestShape(sc, 1024)
				for _, snap := range []int{0, 128} {
					cfg := synth.Config{Scenario: sc, Encap: enc, MTU: 1024, Messages: msgs, MsgSize: size, SnapLen: snap, Impairments: scaleImpairments(im, k), DC: true}
					label := fmt.Sprintf("%s/%s/%s/snap%d", sc, enc, name, snap)
					truth, rep := generateAndCompare(t, cfg, label)
					require.NotNil(t, truth, label)
					checkDCReport(t, truth, rep, name == "clean", label)
					n++
				}
			}
		}
	}
	t.Logf("%d generated DC captures compared with their truth", n)
}

// checkDCReport checks what TestDCScenarios asks of a DC capture beyond
// its truth: every flow the generator wrote is DC, a clean capture has
// no findings at all, and no capture a dma_length_mismatch.
func checkDCReport(t *testing.T, truth *synth.Truth, rep *analyze.Report, clean bool, label string) {
	t.Helper()
	for _, f := range truth.Flows {
		require.Equal(t, "DC", f.Transport, label)
	}
	if clean {
		assert.Empty(t, rep.Findings, label)
	}
	for _, f := range rep.Findings {
		assert.NotEqual(t, analyze.KindDMALength, f.Kind, label)
	}
}

// TestDCZeroAllocs: once its flows exist, a DC packet is analyzed without
// allocating.
func TestDCZeroAllocs(t *testing.T) {
	var buf bytes.Buffer
	_, err := synth.Generate(synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 400, MsgSize: 1024, DC: true}, &buf, nil)
	require.NoError(t, err)
	r, err := capture.NewReader(&buf)
	require.NoError(t, err)
	type frame struct {
		ci   gopacket.CaptureInfo
		lt   gplayers.LinkType
		data []byte
	}
	var frames []frame
	for {
		ci, data, lt, err := r.Next()
		if err != nil {
			break
		}
		frames = append(frames, frame{ci, lt, append([]byte(nil), data...)})
	}
	a := analyze.New(analyze.Options{})
	for _, f := range frames[:100] {
		a.Feed(f.ci, f.lt, f.data)
	}
	i := 100
	allocs := testing.AllocsPerRun(len(frames)-110, func() {
		f := frames[i]
		if p := a.Feed(f.ci, f.lt, f.data); p.Findings != 0 || !p.BTH.DC {
			t.Fatalf("frame %d: %d findings, DC %v", i, p.Findings, p.BTH.DC)
		}
		i++
	})
	assert.Zero(t, allocs)
}
