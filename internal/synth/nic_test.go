package synth

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseNICFlags(t *testing.T) {
	cfg, _, _, err := ParseArgs([]string{"write-bw", "--tap", "responder", "--link-delay", "5000", "--nak-delay", "300",
		"--rnr-delay", "1000", "--timeout", "+3", "--timeout-ns", "2000000", "--gbn-skip", "2", "--cnp-interval", "4000",
		"--ecn", "+4", "--cnp-extra", "+4", "--rate-cut", "0.5"})
	require.NoError(t, err)
	assert.Equal(t, NICKnobs{Tap: TapResponder, LinkDelayNs: 5000, NAKDelayNs: 300, RNRDelayNs: 1000,
		Timeout: []PSNRef{{Value: 3, Relative: true}}, TimeoutNs: 2_000_000, GoBackNSkip: 2, CNPIntervalNs: 4000,
		CNPExtra: []PSNRef{{Value: 4, Relative: true}}, RateCut: 0.5}, cfg.NIC)

	for _, bad := range [][]string{
		{"write-bw", "--tap", "switch"},
		{"write-bw", "--rate-cut", "1.5"},
		{"write-bw", "--nak-delay", "-1"},
		{"mix", "--tap", "requester"},
		{"write-bw", "--cnp-extra", "+4"}, // no ECN mark on +4
	} {
		cfg, _, _, err := ParseArgs(bad)
		if err == nil {
			_, err = Generate(cfg, discard{}, nil)
		}
		assert.Error(t, err, "%v", bad)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
