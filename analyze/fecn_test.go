package analyze_test

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/layers"
)

// bthOffset is where the BTH of a generated frame starts: after Ethernet,
// IPv4 and UDP (14+20+8) for RoCE v2, after Ethernet and the GRH (14+40)
// for RoCE v1, after the LRH (8) on native InfiniBand.
var bthOffset = map[synth.Encap]int{synth.EncapIPv4: 42, synth.EncapRoCEv1: 54, synth.EncapIB: 8}

// TestFECNBECN: the FECN and BECN bits (IBTA 9.2: the top two bits of BTH
// byte 4, outside the ICRC) set on chosen frames of generated traffic are
// counted in the flow of each frame, and nowhere else.
func TestFECNBECN(t *testing.T) {
	const fecn, becn = 0x80, 0x40
	tests := []struct {
		name  string
		encap synth.Encap
		bits  map[int]byte // frame index → bits set
	}{
		{"rocev2 none", synth.EncapIPv4, nil},
		{"rocev2 fecn", synth.EncapIPv4, map[int]byte{4: fecn, 5: fecn, 9: fecn}},
		{"rocev2 becn on acks", synth.EncapIPv4, map[int]byte{6: becn, 8: fecn | becn}},
		{"rocev1", synth.EncapRoCEv1, map[int]byte{4: fecn, 7: becn}},
		{"infiniband", synth.EncapIB, map[int]byte{4: fecn, 6: fecn | becn, 10: becn}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Encap: tc.encap, Messages: 6, MsgSize: 2048, MTU: 1024}
			cis, frames, linkType, _ := generatedFrames(t, cfg)
			require.Greater(t, len(frames), 10)
			// Expected counts by DestQP (the two QP1 flows of the CM
			// share one; the data flows of a connection differ in it).
			wantFECN, wantBECN := map[uint32]uint64{}, map[uint32]uint64{}
			off := bthOffset[tc.encap]
			for i, f := range frames {
				qp := binary.BigEndian.Uint32(f[off+4:]) & 0xFFFFFF
				wantFECN[qp] += 0
				bits := tc.bits[i]
				if bits == 0 {
					continue
				}
				f[off+4] |= bits
				if bits&fecn != 0 {
					wantFECN[qp]++
				}
				if bits&becn != 0 {
					wantBECN[qp]++
				}
				if tc.encap == synth.EncapIB { // the VCRC covers the bits
					binary.LittleEndian.PutUint16(f[len(f)-2:], layers.ComputeVCRC(f[:len(f)-2]))
				}
			}
			a := analyze.New(analyze.Options{})
			for i, f := range frames {
				a.Feed(cis[i], linkType, f)
			}
			r := a.Report()
			gotFECN, gotBECN := map[uint32]uint64{}, map[uint32]uint64{}
			for _, f := range r.Flows {
				gotFECN[f.DestQP] += f.Congestion.FECN
				gotBECN[f.DestQP] += f.Congestion.BECN
				assert.Zero(t, f.ICRC.Bad, "the bits are outside the ICRC")
			}
			assert.Equal(t, wantFECN, gotFECN, "FECN by destination QP")
			for qp := range wantFECN {
				wantBECN[qp] += 0 // same keys: every flow
			}
			assert.Equal(t, wantBECN, gotBECN, "BECN by destination QP")
			for _, fd := range r.Findings {
				assert.NotEqual(t, analyze.KindBadICRC, fd.Kind, "%+v", fd)
			}
		})
	}
}
