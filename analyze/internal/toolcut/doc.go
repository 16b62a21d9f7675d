// Package toolcut is the stage of the analyzer that judges the RDMA
// frames shorter than their own length fields: a capture tool's cut, or a
// frame whose length fields lie.
//
// A header-only capture says it cut a frame: the original length of the
// record is larger than what it captured. Some capture tools cut frames
// and write original length = captured length (a real NCCL capture: 489
// frames of 243 bytes whose IPv4 total length says 4156). The IP/UDP
// (RoCE v2), GRH PayLen (RoCE v1) or LRH PktLen (native IB) lengths still
// say how long the packet was. Such a frame is a cut like a snap-length
// cut; a frame whose length fields point past its end for no such reason
// is malformed. Use it with the RDMA frames of a capture, in capture
// order, and their lengths as package decode reads them:
//
//	s := toolcut.New(toolcut.Config{})
//	for each RDMA frame that decoded {
//		switch s.Frame(number, timestamp, capLen, origLen, lens.Declared(), lens.Packet()) {
//		case toolcut.Cut: // count its wire length from its length fields
//		case toolcut.Lie: // a malformed frame
//		}
//	}
//	f := s.Facts() // how many frames the tool cut, the first, the cut length
//
// The judgement hangs on the frames before: a tool cuts every longer
// frame at one length (its snap length), so its cut frames all have the
// same captured length and no RDMA frame is captured longer (Stage.Frame
// says the rule). The stage is streaming: it judges each frame with what
// came before it, and owns that capture-wide order. The stages of shards
// of a capture (Config.Shard: each fed the frames of some host pairs, in
// capture order and numbered as in the capture) each judge with their own
// frames only and record their judgements as runs; Combine judges them
// again over all shards in frame order, and says which frame a shard
// judged otherwise than the capture-wide rule does.
//
// The stage knows neither frames' bytes nor findings: package analyze
// accounts a cut frame's length, makes a lying one malformed, and words
// Facts as the tool_cut_frames finding. Memory is bounded: a shard keeps
// at most MaxEvents runs and frames captured whole (Overflow says it
// kept fewer), a capture cut at one length being one run a shard.
package toolcut
