package decode

import (
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// TestExtTable: each extension header type of the IBTA finds the
// Decoder's layer of that type, and shows it in the Packet field of its
// name; the other layer types find nothing.
func TestExtTable(t *testing.T) {
	d := New(Options{})
	ib, p := d.ib, &d.pkt
	tests := []struct {
		typ   gopacket.LayerType
		layer gopacket.DecodingLayer
		shown func() bool
	}{
		{layers.LayerTypeRDETH, &ib.RDETH, func() bool { return p.RDETH == &ib.RDETH }},
		{layers.LayerTypeDETH, &ib.DETH, func() bool { return p.DETH == &ib.DETH }},
		{layers.LayerTypeXRCETH, &ib.XRCETH, func() bool { return p.XRCETH == &ib.XRCETH }},
		{layers.LayerTypeRETH, &ib.RETH, func() bool { return p.RETH == &ib.RETH }},
		{layers.LayerTypeAtomicETH, &ib.AtomicETH, func() bool { return p.AtomicETH == &ib.AtomicETH }},
		{layers.LayerTypeAETH, &ib.AETH, func() bool { return p.AETH == &ib.AETH }},
		{layers.LayerTypeAtomicAckETH, &ib.AtomicAckETH, func() bool { return p.AtomicAckETH == &ib.AtomicAckETH }},
		{layers.LayerTypeImmDt, &ib.ImmDt, func() bool { return p.ImmDt == &ib.ImmDt }},
		{layers.LayerTypeIETH, &ib.IETH, func() bool { return p.IETH == &ib.IETH }},
		{layers.LayerTypeFETH, &ib.FETH, func() bool { return p.FETH == &ib.FETH }},
		{layers.LayerTypeDCETH, &ib.DCETH, func() bool { return p.DCETH == &ib.DCETH }},
		{layers.LayerTypeCNP, &ib.CNP, func() bool { return p.CNP == &ib.CNP }},
	}
	for _, tt := range tests {
		t.Run(tt.typ.String(), func(t *testing.T) {
			*p = Packet{}
			x := d.ext.lookup(tt.typ)
			require.NotNil(t, x)
			assert.Same(t, tt.layer, x.layer)
			assert.False(t, tt.shown())
			x.show()
			assert.True(t, tt.shown())
		})
	}
	for _, typ := range []gopacket.LayerType{
		gopacket.LayerTypeZero, gopacket.LayerTypePayload, gplayers.LayerTypeUDP,
		layers.LayerTypeLRH, layers.LayerTypeGRH, layers.LayerTypeBTH, layers.LayerTypeICRC,
		layers.LayerTypeVCRC, layers.LayerTypeERF, layers.LayerTypeMAD,
	} {
		assert.Nil(t, d.ext.lookup(typ), "%s", typ)
	}
}
