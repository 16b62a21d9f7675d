package analyze

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestShortRuns: a capture whose tool cut every frame at one length
// (roce-synth mix --cut-frames 128, 32 QPs) fed to 3 shards by host pair:
// each shard records its cut frames as one run, not one record each
// (3 M cut frames overflowed the records and sent -j back to a
// sequential pass), and the combined report is the sequential one.
func TestShortRuns(t *testing.T) {
	var buf bytes.Buffer
	_, err := synth.Generate(synth.Config{Scenario: synth.ScenarioMix, Packets: 20000, QPs: 32, Artefacts: synth.Artefacts{CutFrames: 128}}, &buf, nil)
	require.NoError(t, err)
	frames := readFrames(t, &buf)
	seq := New(Options{})
	shards := []*Analyzer{New(Options{shard: true}), New(Options{shard: true}), New(Options{shard: true})}
	for i, f := range frames {
		seq.Feed(f.ci, f.lt, f.data)
		key := HostPairKey(f.lt, f.data)
		shards[key%uint64(len(shards))].FeedShard(uint64(i+1), key, f.ci, f.lt, f.data)
	}
	want := seq.Finish()
	require.Greater(t, want.Capture.CutFrames, uint64(10000))
	parts := make([]*Report, len(shards))
	for s, a := range shards {
		require.Positive(t, a.cut.Runs(), "shard %d has cut frames", s)
		assert.Equal(t, 1, a.cut.Runs(), "shard %d: one run", s)
		parts[s] = a.Finish()
	}
	got, err := CombineShards(parts, Options{})
	require.NoError(t, err)
	wj, err := json.Marshal(want)
	require.NoError(t, err)
	gj, err := json.Marshal(got)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(wj, gj), "the combined report is the sequential one")
}
