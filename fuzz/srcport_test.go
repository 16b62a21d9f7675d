package fuzz_test

import (
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// checkSrcPortRewritten checks a packet whose ICRC the analyzer verified
// with a source port recovered from it: gopacket finds the ICRC bad with
// the captured source port 4791, and the port the layers solve from
// gopacket's result is the analyzer's.
func checkSrcPortRewritten(t *testing.T, pkt gopacket.Packet, icrc *layers.ICRC, p *analyze.Packet) {
	t.Helper()
	udp, ok := pkt.Layer(gplayers.LayerTypeUDP).(*gplayers.UDP)
	require.True(t, ok, "a recovered source port without UDP")
	require.Equal(t, layers.UDPPortRoCEv2, udp.SrcPort, "source port recovered from a packet not captured with 4791")
	require.Equal(t, layers.ICRCBad, icrc.Status, "ICRC as captured")
	require.Equal(t, layers.ICRCResult{Status: layers.ICRCOK, Value: icrc.Value, Expected: icrc.Value}, p.ICRC, "ICRC")
	bth := pkt.Layer(layers.LayerTypeBTH).(*layers.BTH)
	port, ok := layers.SolveICRCSrcPort(layers.ICRCResult{Status: icrc.Status, Value: icrc.Value, Expected: icrc.Expected}, udp.Contents, bth)
	require.True(t, ok)
	require.Equal(t, port, p.OriginalSrcPort)
}
