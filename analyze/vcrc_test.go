package analyze_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestBadVCRCFinding: on native InfiniBand, a frame whose VCRC (the last
// two bytes, IBTA 7.8.2) was damaged is an error finding at that frame,
// apart from the ICRC: its ICRC still checks. A damaged ICRC (the
// generator recomputes the VCRC after it) is a bad ICRC, not a VCRC
// finding.
func TestBadVCRCFinding(t *testing.T) {
	tests := []struct {
		name        string
		corruptICRC []synth.PSNRef
		damageVCRC  []int // frame indexes (0-based)
		wantBadICRC uint64
	}{
		{name: "clean"},
		{name: "one VCRC", damageVCRC: []int{5}},
		{name: "VCRCs of a request and an ACK", damageVCRC: []int{4, 6, 9}},
		{name: "ICRC only", corruptICRC: []synth.PSNRef{{Value: 1, Relative: true}}, wantBadICRC: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Encap: synth.EncapIB, Messages: 6, MsgSize: 2048, MTU: 1024,
				Impairments: synth.Impairments{CorruptICRC: tc.corruptICRC}}
			cis, frames, linkType, _ := generatedFrames(t, cfg)
			var wantFrames []uint64
			for _, i := range tc.damageVCRC {
				f := frames[i]
				v := binary.LittleEndian.Uint16(f[len(f)-2:])
				binary.LittleEndian.PutUint16(f[len(f)-2:], v^0x5A5A)
				wantFrames = append(wantFrames, uint64(i+1))
			}
			a := analyze.New(analyze.Options{})
			for i, f := range frames {
				a.Feed(cis[i], linkType, f)
			}
			r := a.Report()
			var vcrcAt, icrcAt []uint64
			for _, fd := range r.Findings {
				if fd.Kind != analyze.KindBadICRC {
					continue
				}
				assert.Equal(t, analyze.SeverityError, fd.Severity)
				if strings.HasPrefix(fd.Detail, "VCRC") {
					vcrcAt = append(vcrcAt, fd.Frame)
				} else {
					icrcAt = append(icrcAt, fd.Frame)
				}
			}
			assert.Equal(t, wantFrames, vcrcAt, "VCRC findings")
			var bad uint64
			for _, f := range r.Flows {
				bad += uint64(f.ICRC.Bad)
			}
			assert.Equal(t, tc.wantBadICRC, bad, "bad ICRCs")
			require.Len(t, icrcAt, int(tc.wantBadICRC), "ICRC findings")
		})
	}
}
