package analyze

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestBatchTime: a batch gives back each timestamp as the reader gave it,
// field for field (a different location or monotonic reading would show
// in the report's times).
func TestBatchTime(t *testing.T) {
	var b batch
	for _, want := range []time.Time{
		time.Unix(1767225600, 123456789).UTC(), // pcap
		time.Unix(0, 0).UTC(),
		time.Unix(0, math.MaxInt64).UTC(), // the reader's last timestamp
		{},                                // pcapng simple packet block
		time.Unix(1767225600, 5).In(time.FixedZone("X", 3600)),
	} {
		var f batchFrame
		b.putTime(&f, want)
		got := b.time(&f)
		assert.True(t, got == want, "%v came back as %v", want, got)
	}
}

// TestBatchesPerShard: 16 batches a shard on few shards (the reader runs
// ahead of shards waiting for their core), then fewer, so that the
// batches of all shards stay within maxBatches, and never fewer than 4.
func TestBatchesPerShard(t *testing.T) {
	for _, tc := range []struct{ shards, want int }{
		{1, 16}, {2, 16}, {4, 16}, {5, 12}, {8, 6}, {13, 4}, {16, 4}, {64, 4}, {256, 4},
	} {
		got := batchesPerShard(tc.shards)
		assert.Equal(t, tc.want, got, "%d shards", tc.shards)
		assert.LessOrEqual(t, got*(tc.shards-1), max(maxBatches, 4*(tc.shards-1)), "%d shards: batches in flight", tc.shards)
	}
}
