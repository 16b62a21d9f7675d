package synth

import (
	"bytes"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/layers"
)

// TestDCTraffic: --dc writes the data connection on the RD opcodes with the
// DC headers (decoded back by gopacket as DC, ICRC ok), no CM, and a truth
// whose flows are DC.
func TestDCTraffic(t *testing.T) {
	for _, sc := range []string{ScenarioWriteBW, ScenarioReadBW, ScenarioAtomic} {
		t.Run(sc, func(t *testing.T) {
			var buf bytes.Buffer
			truth, err := Generate(Config{Scenario: sc, Messages: 4, MsgSize: 2048, DC: true}, &buf, nil)
			require.NoError(t, err)
			assert.Empty(t, truth.Connections)
			require.NotEmpty(t, truth.Flows)
			for _, f := range truth.Flows {
				assert.Equal(t, "DC", f.Transport)
			}
			r, err := capture.NewReader(&buf)
			require.NoError(t, err)
			n := 0
			for {
				_, data, lt, err := r.Next()
				if err != nil {
					break
				}
				n++
				pkt := gopacket.NewPacket(data, lt, gopacket.Default) // a LinkType is a Decoder
				if el := pkt.ErrorLayer(); el != nil {
					t.Fatalf("frame %d: %v", n, el.Error())
				}
				bth := pkt.Layer(layers.LayerTypeBTH).(*layers.BTH)
				assert.True(t, bth.DC, "frame %d", n)
				assert.Equal(t, layers.TransportRD, bth.Opcode.Transport(), "frame %d", n)
				assert.False(t, bth.IsMAD(), "frame %d", n)
				d, ok := pkt.Layer(layers.LayerTypeDCETH).(*layers.DCETH)
				require.True(t, ok, "frame %d", n)
				assert.Equal(t, uint32(dcETHWord0), d.Word0)
				assert.Equal(t, layers.ICRCOK, pkt.Layer(layers.LayerTypeICRC).(*layers.ICRC).Status, "frame %d", n)
			}
			assert.Equal(t, int(truth.Frames), n)
		})
	}
}

func TestDCConfig(t *testing.T) {
	for _, sc := range []string{ScenarioSendBW, ScenarioUD, ScenarioMix} {
		_, err := Generate(Config{Scenario: sc, DC: true}, &bytes.Buffer{}, nil)
		assert.ErrorIs(t, err, ErrConfig, sc)
		assert.ErrorContains(t, err, "DC traffic needs write-bw, read-bw or atomic", sc)
	}
	cfg, _, _, err := ParseArgs([]string{"write-bw", "--dc"})
	require.NoError(t, err)
	assert.True(t, cfg.DC)
}
