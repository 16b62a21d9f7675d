package analyze

import "fmt"

// The caps of sharded analysis.
//
// One Analyzer tracks the first MaxFlows flows in creation order, and the
// first MaxConnections REQs with a new CommID. The shards of a Sharded
// share budgets of those caps, so that they track at most that many
// together and memory is one Analyzer's whatever the number of shards;
// and Sharded keeps the frames in flight no more than a budget has left
// (checkBudgets), so that they take the budget's last flows in the order
// one Analyzer does. combineShards checks that they did (capsExact):
// shards fed otherwise may have raced for the last flows, or held a cap
// each.

// capsExact checks that tracked (the creation frames of what the shards
// tracked, sorted) is what one Analyzer tracks under limit, given the
// frame of the first flow (connection) each shard's cap refused (0:
// none): no more than limit, and none refused before the last tracked.
func capsExact(what string, tracked, refused []uint64, limit int) error {
	if len(tracked) > limit {
		return fmt.Errorf("%w: the shards tracked %d %s, more than the cap of %d: they did not share a budget", ErrNotDisjoint, len(tracked), what, limit)
	}
	if len(tracked) == 0 {
		return nil
	}
	last := tracked[len(tracked)-1]
	for _, r := range refused {
		if r != 0 && r < last {
			return fmt.Errorf("%w: a shard's cap refused the %s of frame %d, before the %s of frame %d another tracked: the shards raced for the cap's last %s", ErrNotDisjoint, what, r, what, last, what)
		}
	}
	return nil
}
