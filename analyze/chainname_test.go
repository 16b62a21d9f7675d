package analyze_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// TestChainName: a packet's wraps are named as the capture summary's
// encapsulations are, outermost first.
func TestChainName(t *testing.T) {
	for _, tc := range []struct {
		kinds []analyze.WrapKind
		want  string
	}{
		{nil, ""},
		{[]analyze.WrapKind{analyze.WrapERSPAN1}, "erspan1"},
		{[]analyze.WrapKind{analyze.WrapERSPAN3, analyze.WrapVXLAN}, "erspan3/vxlan"},
		{[]analyze.WrapKind{analyze.WrapERSPAN2, analyze.WrapQinQ, analyze.WrapMPLS}, "erspan2/qinq/mpls"},
		{[]analyze.WrapKind{analyze.WrapGRE, analyze.WrapNVGRE, analyze.WrapGENEVE, analyze.WrapGENEVE, analyze.WrapVXLAN, analyze.WrapQinQ, analyze.WrapMPLS, analyze.WrapERSPAN2},
			"gre/nvgre/geneve/geneve/vxlan/qinq/mpls/erspan2"},
	} {
		ws := make([]analyze.Wrap, len(tc.kinds))
		for i, k := range tc.kinds {
			ws[i].Kind = k
		}
		assert.Equal(t, tc.want, analyze.ChainName(ws))
	}
}

// TestPausedTime: a flow's paused time is unknown without its priority
// (no pause frames in the capture), 0 when its priority was not paused
// while it ran, else PausedNs.
func TestPausedTime(t *testing.T) {
	prio, ns := 3, int64(1500)
	for _, tc := range []struct {
		f      analyze.Flow
		wantNs int64
		wantOK bool
	}{
		{analyze.Flow{}, 0, false},
		{analyze.Flow{Priority: &prio}, 0, true},
		{analyze.Flow{Priority: &prio, PausedNs: &ns}, 1500, true},
	} {
		gotNs, ok := tc.f.PausedTime()
		assert.Equal(t, tc.wantOK, ok)
		assert.Equal(t, tc.wantNs, gotNs)
	}
}
