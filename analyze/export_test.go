package analyze

import (
	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// The combiner's steps, which users reach through Sharded only, for the
// package's tests that shard a capture by hand.

// AsShard returns opts for one shard of a capture among others, as a
// Sharded's shards have them.
func AsShard(opts Options) Options {
	opts.shard = true
	return opts
}

// FeedShard is feedShard.
func (a *Analyzer) FeedShard(frame, key uint64, ci gopacket.CaptureInfo, linkType gplayers.LinkType, data []byte) *Packet {
	return a.feedShard(frame, key, ci, linkType, data)
}

// CombineShards and CombineShardStreams are combineShards and
// combineShardStreams.
var (
	CombineShards       = combineShards
	CombineShardStreams = combineShardStreams
)

// Report is report: the rest of the stream built into one Report.
func (s *ReportStream) Report() *Report { return s.report() }
