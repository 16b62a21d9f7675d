package synth

import (
	"io"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// checkSnifferPort checks a frame whose source port the "sniffer"
// rewrote: it shows 4791, its ICRC fails as captured, and solving the
// ICRC gives back the port the generator sent it with.
func checkSnifferPort(t *testing.T, pkt gopacket.Packet, icrc *layers.ICRC, fi FrameInfo, msg string) {
	t.Helper()
	udp, ok := pkt.Layer(gplayers.LayerTypeUDP).(*gplayers.UDP)
	require.True(t, ok, msg)
	assert.Equal(t, layers.UDPPortRoCEv2, udp.SrcPort, msg)
	assert.Equal(t, layers.ICRCBad, icrc.Status, msg)
	bth := pkt.Layer(layers.LayerTypeBTH).(*layers.BTH)
	port, ok := layers.SolveICRCSrcPort(layers.ICRCResult{Status: icrc.Status, Value: icrc.Value, Expected: icrc.Expected}, udp.Contents, bth)
	assert.True(t, ok, msg)
	assert.Equal(t, fi.SrcPort, port, msg)
}

// TestSnifferSrcPort generates every RoCE v2 encapsulation and scenario
// with the source port rewritten and checks each frame, and the truth:
// every verifiable packet but the corrupted one counts as rewritten,
// with its connection's entropy port (never 4791).
func TestSnifferSrcPort(t *testing.T) {
	for _, enc := range []Encap{EncapIPv4, EncapIPv6, EncapVLAN} {
		for _, sc := range []string{ScenarioWriteBW, ScenarioReadBW, ScenarioUD, ScenarioMix} {
			cfg := Config{Scenario: sc, Encap: enc, Messages: 6, Packets: 300, QPs: 4, SnifferSrcPort: true}
			if sc == ScenarioWriteBW {
				cfg.CorruptICRC = []PSNRef{{Value: 2, Relative: true}}
			}
			capture, tr, infos := generate(t, cfg)
			checkDecode(t, capture, infos, enc)
			ok, bad := 0, 0
			for _, fi := range infos {
				assert.True(t, fi.SrcPortRewritten)
				assert.NotEqual(t, uint16(4791), fi.SrcPort)
				switch fi.ICRC {
				case layers.ICRCOK:
					ok++
				case layers.ICRCBad:
					bad++
				}
			}
			assert.Equal(t, ok, tr.Capture.ICRCPortRewritten, "%s/%s", sc, enc)
			assert.Equal(t, len(cfg.CorruptICRC), bad, "%s/%s", sc, enc)
			sum := 0
			for _, f := range tr.Flows {
				sum += f.ICRC.PortRewritten
				assert.Equal(t, f.ICRC.OK, f.ICRC.PortRewritten)
				assert.Len(t, f.ICRC.OriginalSrcPorts, 1, "one entropy port per flow")
			}
			assert.Equal(t, ok, sum)
		}
	}
	_, err := Generate(Config{Encap: EncapRoCEv1, SnifferSrcPort: true}, io.Discard, nil)
	assert.ErrorIs(t, err, ErrConfig, "RoCE v1 has no UDP port")
	cfg, _, _, err := ParseArgs([]string{"write-bw", "--sniffer-src-port"})
	require.NoError(t, err)
	assert.True(t, cfg.SnifferSrcPort)
}
