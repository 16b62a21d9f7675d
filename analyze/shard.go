package analyze

import (
	"sync/atomic"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze/internal/toolcut"
)

// Sharding a capture by host pair.
//
// Every piece of Analyzer state that links two frames is keyed by the
// hosts at both ends of them: a flow and its reverse flow (ACKs, RTT,
// loss evidence, NIC timing), a CM connection and its data flows (the
// MADs go to QP1 between the same two hosts), the path MTU inferred per
// host pair, the flows of a direction searched for an ACK's requests or a
// CNP's sender, the datagram sources of a CNP flow. Frames of different
// (unordered) host pairs never meet, so an Analyzer fed only the frames of
// some host pairs, in capture order and numbered as in the capture,
// builds exactly their part of the sequential analysis. combineShards
// then rebuilds what is capture-wide: the order of flows and connections
// (creation order), the findings list and its cap, the totals, the cut
// finding, the dropped-flow estimate.
//
// Three things can still tie host pairs together, and combineShards
// checks each: a CM message whose CommID matches a connection of another
// host pair (CommIDs are random 32-bit numbers; a crafted capture can
// reuse them), a frame the shard's own decoding puts in another host
// pair than HostPairKey did, and the caps (the flows tracked are the
// first MaxFlows by creation frame, capture-wide: capsExact).

// shardFeed is what a shard's Analyzer records while it is fed: every
// Analyzer is a shard, its only one when not Options.shard, and the
// combiner builds every report (build.go gives it the part).
type shardFeed struct {
	// replay: one shard among others (Options.shard), which records what
	// the combiner replays across them (the CM messages, what the caps
	// refused). The only shard's own decisions are the
	// capture's: it records none of it.
	replay bool

	created   []uint64 // replay: the frame that created each flow, by flow index
	at        []uint64 // the frame being fed when each finding was listed
	misplaced uint64   // frames of a host pair other than their key's
	firstMis  uint64

	// The hosts of the last frame checked, and their key.
	lastSrc, lastDst Addr
	lastKey          uint64
	hasLast          bool

	// Capture-wide decisions a shard makes with only its own frames,
	// replayed by combineShards in frame order over all shards.
	cm       cmLog    // every CM message from shared.logFrom on (shardcmlog.go)
	pre      cmCounts // the CM messages before it: one shard's
	preLast  bool     // the last CM message noted was counted in pre
	logging  bool     // the CM messages are logged
	shared   *shardShared
	overflow bool // more events than maxShardEvents: not replayable

	// firstRefused is the frame of the first flow a cap refused (0:
	// none), for combineShards to check that the shards tracked the
	// flows one Analyzer tracks (capsExact).
	firstRefused uint64
}

// maxShardEvents bounds each list of events a shard keeps for the replay;
// past it, combineShards cannot check the shards and says so.
const maxShardEvents = 1 << 20

func (s *shardFeed) room(n int) bool {
	if n >= maxShardEvents {
		s.overflow = true
		return false
	}
	return true
}

// shardShared is what the shards of one Sharded share besides the
// budgets.
type shardShared struct {
	// logFrom is the first frame of a host pair the feeder gave another
	// shard than the capture's first such frame's (0: none yet). The
	// shards log their CM messages for the flood replay from it on: before
	// it one shard had every frame that may hold CM state (frames of no
	// host pair hold none), and its own counts are the capture's (a flood
	// of a million REQs in one host pair is then logged in no byte).
	logFrom atomic.Uint64
}

// logFrom is the first frame whose CM messages the shard logs: its
// Sharded's shardShared.logFrom (0: none yet), 1 for shards fed otherwise,
// and 0 for the only shard of a capture, whose own counts and flood are
// the capture's.
func (s *shardFeed) logFrom() uint64 {
	switch {
	case !s.replay:
		return 0
	case s.shared == nil:
		return 1
	}
	return s.shared.logFrom.Load()
}

// noteCM records a CM message: logs it (cmLog), or counts it while one
// shard has had every frame (shardShared.logFrom).
func (s *shardFeed) noteCM(p *Packet) {
	if !s.replay {
		return
	}
	if !s.logging {
		if from := s.logFrom(); from == 0 || p.Frame < from {
			s.pre.msgs++
			s.preLast = true
			return
		}
		s.logging = true
	}
	s.preLast = false
	if s.room(s.cm.n) {
		s.cm.add(p.Frame, p.Time)
	}
}

// noteConnGrew records that the CM message just noted was a REQ with a
// new CommID.
func (s *shardFeed) noteConnGrew() {
	switch {
	case !s.replay:
	case s.preLast:
		s.pre.grew++
	default:
		s.cm.markGrew()
	}
}

// noteRefusedFlow records the frame of a flow a cap refused: the first
// one (capsExact).
func (s *shardFeed) noteRefusedFlow(frame uint64) {
	if s.firstRefused == 0 {
		s.firstRefused = frame
	}
}

// noteFinding records the frame fed when a finding was listed.
func (s *shardFeed) noteFinding(frame uint64) {
	s.at = append(s.at, frame)
}

// shardInfo is what a shard's report keeps for combineShards.
type shardInfo struct {
	at         []uint64 // per Report.Findings (listed while fed, in the order listed): the frame fed then
	fedDropped uint64   // findings found while fed but not listed
	flows      int      // how many
	// findings are the findings of its flows (by index) that the
	// combiner lists in the capture's order of flows: of the few flows
	// that have any.
	findings map[int32]*shardFlowFindings
	// refsFull says a flow's loss log kept no more incomplete messages:
	// which the sequential analysis kept depends on the findings it
	// listed.
	refsFull  bool
	sketch    []uint64
	misplaced uint64
	firstMis  uint64
	feed      *shardFeed // its CM events
	cmStats   cmStats
	orphaned  uint64
	cut       *toolcut.Stage // the frames it judged cut: the capture's when it is the only shard
}

// shardFlowFindings are the findings of a shard's flow that
// Analyzer.report lists at the end, for the combiner to list in the
// capture's order of flows within the capture's cap.
type shardFlowFindings struct {
	nic  []Finding // its NIC findings
	loss *flowLoss // what its loss findings (attribute) are made of
	// marks are its incomplete_message findings listed while fed that
	// attribute makes information: indices into the findings list, then
	// (listFindings) into Report.Findings.
	marks []int
	end   []Finding // its incomplete messages still pending at the end
}

// more returns flow i's findings, allocating them.
func (sh *shardInfo) more(i int) *shardFlowFindings {
	x := sh.findings[int32(i)]
	if x == nil {
		if sh.findings == nil {
			sh.findings = make(map[int32]*shardFlowFindings)
		}
		x = &shardFlowFindings{}
		sh.findings[int32(i)] = x
	}
	return x
}

// of returns flow i's findings (nil: none).
func (sh *shardInfo) of(i int32) *shardFlowFindings { return sh.findings[i] }

// shardReport attaches the shard information to r.
func (a *Analyzer) shardReport(r *Report) *shardInfo {
	sh := &shardInfo{
		flows:     len(a.flowList),
		sketch:    append([]uint64(nil), a.dropSketch.bits...),
		misplaced: a.shard.misplaced,
		firstMis:  a.shard.firstMis,
		feed:      a.shard,
		cmStats:   a.conns.stats,
		orphaned:  a.conns.orphaned,
		cut:       a.cut.Snapshot(),
	}
	r.shard = sh
	return sh
}

// noteLoss keeps what attribute lists for flow i (its loss findings)
// and the incomplete messages it makes information.
func (sh *shardInfo) noteLoss(i int, cls *lossClass, f *flowState, file string, fed fedFindings) {
	if cls.hasFindings() {
		sh.more(i).loss = &flowLoss{cls: lossClass{notCaptured: cls.notCaptured, jumps: cls.jumps}, flow: f.flowID(), file: file}
	}
	if f.loss.log == nil {
		return
	}
	sh.refsFull = sh.refsFull || len(f.loss.log.incomplete) >= maxLossLog
	for _, ref := range f.loss.log.incomplete {
		if fed.kind(ref.idx) == KindIncomplete && cls.onlyNotCaptured(ref.from, ref.to) {
			x := sh.more(i)
			x.marks = append(x.marks, ref.idx)
		}
	}
}

// flowLoss is what a flow's loss findings are made of: its jumps and the
// PSNs the capture missed (lossClass), kept until the combiner lists them
// (findings), as they take far less memory than the findings with their
// details: a shard's flows may have hundreds of jumps each, far more
// findings than the capture lists.
type flowLoss struct {
	cls  lossClass
	flow FlowID
	file string
}

// findings returns the loss findings (nil: none).
func (l *flowLoss) findings() []Finding {
	if l == nil {
		return nil
	}
	return lossFindings(&l.cls, l.flow, l.file)
}

// listFindings sets r's findings to those listed while the shard was fed,
// in the order listed (unsorted), with the frame fed when each was listed,
// and turns the flows' marks into indices of r.Findings.
func (sh *shardInfo) listFindings(r *Report, fl *findingList) {
	sh.mapMarks(sh.listFed(r, fl))
}

// listFed is the first half of listFindings, which a stream does before
// its flows: it lists the findings listed while fed and returns where
// each of fl's went in r.Findings (-1: not listed).
//
// It takes fl's findings (findingList.take): fl is empty after, and
// fedFindings{r.Findings, pos} reads the kinds it held.
func (sh *shardInfo) listFed(r *Report, fl *findingList) []int {
	pos := make([]int, len(fl.list))
	n := 0
	for i, fd := range fl.list {
		pos[i] = -1
		if fd.Severity == 0 { // replaced
			continue
		}
		pos[i] = n
		n++
		sh.at = append(sh.at, sh.feed.at[i])
	}
	r.FindingsDropped, sh.fedDropped = fl.dropped, fl.dropped
	r.Findings = fl.take()
	return pos
}

// fedFindings are the findings listed while fed, as noteLoss reads them:
// list itself (pos nil), or, once listFed took them, the report's
// findings and where each of the list's went (pos).
type fedFindings struct {
	list []Finding
	pos  []int
}

// kind returns the kind of the finding at index idx of the list ("" for
// one replaced).
func (fed fedFindings) kind(idx int) Kind {
	if fed.pos != nil {
		if idx = fed.pos[idx]; idx < 0 {
			return ""
		}
	}
	return fed.list[idx].Kind
}

// mapMarks turns the flows' marks into indices of the report's findings.
func (sh *shardInfo) mapMarks(pos []int) {
	for _, x := range sh.findings {
		for k, idx := range x.marks {
			x.marks[k] = pos[idx]
		}
	}
}

// feedShard analyzes one frame of a shard (Options.shard): frame is its
// number in the capture, key the HostPairKey the frame was sharded by. A
// frame whose decoded hosts have another key is counted, and makes
// combineShards report the shards as not disjoint.
func (a *Analyzer) feedShard(frame, key uint64, ci gopacket.CaptureInfo, linkType gplayers.LinkType, data []byte) *Packet {
	p := a.feed(frame, ci, linkType, data)
	s := a.shard
	if s == nil || !p.IsRDMA || p.Err != nil || p.BTH == nil {
		return p
	}
	if !s.hasLast || p.Src != s.lastSrc || p.Dst != s.lastDst {
		s.lastSrc, s.lastDst, s.lastKey, s.hasLast = p.Src, p.Dst, pairHash(addrHash(p.Src), addrHash(p.Dst)), true
	}
	if s.lastKey != key {
		if s.misplaced == 0 {
			s.firstMis = frame
		}
		s.misplaced++
	}
	return p
}
