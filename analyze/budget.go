package analyze

import "sync/atomic"

// FlowBudget is a cap on the flows tracked by all the Analyzers of one
// run together, so that analyzing many files (in parallel, their reports
// merged) holds no more flows than one file would: with Options.FlowBudget
// set, an Analyzer tracks a new flow only while both its own MaxFlows and
// the shared budget allow. The flows it refuses are counted like those
// beyond MaxFlows (Capture.FlowsDropped, PacketsOfDroppedFlows). A
// FlowBudget is safe for concurrent use.
type FlowBudget struct {
	left    atomic.Int64
	refused atomic.Bool
}

// NewFlowBudget returns a budget of n flows.
func NewFlowBudget(n int) *FlowBudget {
	b := &FlowBudget{}
	b.left.Store(int64(n))
	return b
}

// take spends one flow of the budget, reporting whether there was one. A
// nil budget has no limit.
func (b *FlowBudget) take() bool {
	if b == nil {
		return true
	}
	if b.left.Load() <= 0 || b.left.Add(-1) < 0 {
		b.refused.Store(true)
		return false
	}
	return true
}

// remaining returns the flows left to take (max int64: a nil budget has
// no limit).
func (b *FlowBudget) remaining() int64 {
	if b == nil {
		return 1<<63 - 1
	}
	return b.left.Load()
}

// Refused reports whether the budget refused a flow. Which Analyzer it
// refused depends on their speed when they run at once: a run that needs
// the same flows tracked every time analyzes its files again one after
// another (nil: never).
func (b *FlowBudget) Refused() bool { return b != nil && b.refused.Load() }
