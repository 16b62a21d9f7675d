package analyze

import (
	"errors"
	"slices"
)

// The caps of sharded analysis.
//
// The sequential analysis tracks the first MaxFlows flows in creation
// order, and the first MaxConnections REQs with a new CommID. Shards that
// share the run's budgets (Options.FlowBudget, ConnectionBudget) track
// at most that many together, so that memory is the sequential
// analysis's whatever the number of shards; but which shard got the
// last flows of the budget depends on their speed. Each shard therefore
// records what a cap refused it (capRefusals), and CombineShards decides
// from the flows tracked and refused whether they are the sequential
// analysis's (capDecision); when not, its FlowCapError gives the frame up
// to which the sequential analysis tracks them, which a second run with
// FlowFrameLimit (ConnFrameLimit) reproduces exactly.

// maxRefusals bounds the refusals a shard records of each kind: the
// shards race for the last flows of a budget only while the reader is
// ahead of the slowest of them, a few thousand frames (48 batches of
// 256). Refusals beyond Options.FlowFrameLimit (ConnFrameLimit) are only
// noted: the caller knows where the cap stops.
const maxRefusals = 1 << 14

// capRefusals records what a cap refused in one shard: the frame at which
// each refused flow first asked (a connection: each refused REQ), in
// frame order, up to maxRefusals; past that only that more came later.
type capRefusals struct {
	seen   map[uint64]struct{} // the keys recorded
	frames []uint64
	full   bool // refusals after the last of frames were not recorded
	// beyond: refusals past the frame limit the caller set
	// (Options.FlowFrameLimit, ConnFrameLimit), not recorded: the caller
	// knows where the cap stops.
	beyond bool
}

// note records a refusal of key at frame, beyond the caller's frame
// limit or not.
func (r *capRefusals) note(key, frame uint64, beyond bool) {
	if beyond {
		r.beyond = true
		return
	}
	if r.full {
		return
	}
	if _, ok := r.seen[key]; ok {
		return
	}
	if len(r.frames) == maxRefusals {
		r.full = true
		return
	}
	if r.seen == nil {
		r.seen = make(map[uint64]struct{})
	}
	r.seen[key] = struct{}{}
	r.frames = append(r.frames, frame)
}

// errCapUndecided says the shards refused more flows or connections than
// they recorded before the frame the sequential analysis stops at: only
// the sequential analysis can tell which it tracks.
var errCapUndecided = errors.New("analyze: the shards raced for the cap beyond what they recorded: only the sequential analysis knows which flows or connections it tracks")

// capDecision decides whether tracked (the creation frames of what the
// shards tracked, sorted) is what the sequential analysis tracks under
// limit, given what each shard's cap refused. When it is not, frame is
// the creation frame of the limit-th of all (0: all of them), up to which
// the sequential analysis tracks them; err when the shards' records
// cannot tell.
func capDecision(tracked []uint64, refused []*capRefusals, limit int) (exact bool, frame uint64, err error) {
	var first uint64 // the first refusal of all
	any := false
	for _, r := range refused {
		if len(r.frames) > 0 && (!any || r.frames[0] < first) {
			first, any = r.frames[0], true
		}
	}
	beyond := false
	for _, r := range refused {
		beyond = beyond || r.beyond
	}
	switch {
	case len(tracked) > limit:
	case beyond && len(tracked) < limit && !any:
		// The caller's frame limit stopped the shards before the cap:
		// the limit was not the cap's frame.
		return false, 0, errCapUndecided
	case !any:
		return true, 0, nil
	case len(tracked) == limit && tracked[len(tracked)-1] < first:
		return true, 0, nil
	}
	all := slices.Clone(tracked)
	for _, r := range refused {
		all = append(all, r.frames...)
	}
	slices.Sort(all)
	if len(all) >= limit {
		frame = all[limit-1]
	}
	for _, r := range refused {
		// A refusal not recorded came after the shard's last recorded.
		if r.full && (frame == 0 || frame > r.frames[len(r.frames)-1]) {
			return false, 0, errCapUndecided
		}
	}
	return false, frame, nil
}
