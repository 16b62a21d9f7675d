package analyze_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// TestFlowAddrs: Flow.SrcAddr/DstAddr read back what Addr.String wrote,
// and Flow.Name is the name findings give the flow.
func TestFlowAddrs(t *testing.T) {
	for _, a := range []analyze.Addr{
		{IP: netip.MustParseAddr("10.0.0.1")},
		{IP: netip.MustParseAddr("fe80::1")},
		{LID: 7, IsLID: true},
	} {
		f := analyze.Flow{Src: a.String(), Dst: a.String(), DestQP: 0x11}
		got, err := f.SrcAddr()
		require.NoError(t, err)
		assert.Equal(t, a, got)
		got, err = f.DstAddr()
		require.NoError(t, err)
		assert.Equal(t, a, got)
	}
	_, err := analyze.ParseAddr("LID x")
	assert.Error(t, err)
	rep := analyzeCapture(t, "../testdata/loss_nak_gobackn.pcap", analyze.Options{})
	names := map[string]bool{}
	for i := range rep.Flows {
		names[rep.Flows[i].Name()] = true
	}
	for _, fd := range rep.Findings {
		assert.True(t, names[fd.Flow], "finding flow %q is a flow's Name", fd.Flow)
	}
}
