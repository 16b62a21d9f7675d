package analyze

import "sync/atomic"

// Budget caps the flows and the CM connections that several Analyzers
// track together. Options.MaxFlows and MaxConnections cap each Analyzer
// alone; a run that analyzes several files each on its own (in parallel,
// their reports merged with Report.Merge) makes their Analyzers with one
// Budget's New, so that the run holds no more flows and connections than
// one Analyzer of them all would, whatever the number of files. The flows
// and connections it refuses are counted like those beyond the
// Analyzer's own caps (Capture.FlowsDropped, PacketsOfDroppedFlows,
// ConnectionsDropped). A Sharded needs none: its shards share a budget of
// their own. A Budget is safe for concurrent use.
type Budget struct {
	flows, conns *flowBudget
}

// NewBudget returns a budget of maxFlows flows and maxConnections
// connections (zero or less: Options' defaults, 1,000,000 and 100,000).
func NewBudget(maxFlows, maxConnections int) *Budget {
	o := Options{MaxFlows: maxFlows, MaxConnections: maxConnections}.withDefaults()
	return &Budget{flows: newFlowBudget(o.MaxFlows), conns: newFlowBudget(o.MaxConnections)}
}

// New returns an Analyzer with opts that tracks a new flow (connection)
// only while both its own cap and the budget allow. A nil Budget caps
// nothing: New is then the package's New.
func (b *Budget) New(opts Options) *Analyzer {
	if b != nil {
		opts.flowBudget, opts.connBudget = b.flows, b.conns
	}
	return New(opts)
}

// Refused reports whether the budget refused a flow or a connection.
// Which Analyzer it refused depends on their speed when they run at
// once: a run that needs the same flows tracked every time analyzes its
// files again one after another (nil: never).
func (b *Budget) Refused() bool {
	return b != nil && (b.flows.refused.Load() || b.conns.refused.Load())
}

// flowBudget is a cap on the flows (or connections) tracked by several
// Analyzers together: a Budget's, or the shards' of a Sharded.
type flowBudget struct {
	left    atomic.Int64
	refused atomic.Bool
}

// newFlowBudget returns a budget of n flows.
func newFlowBudget(n int) *flowBudget {
	b := &flowBudget{}
	b.left.Store(int64(n))
	return b
}

// take spends one flow of the budget, reporting whether there was one. A
// nil budget has no limit.
func (b *flowBudget) take() bool {
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
func (b *flowBudget) remaining() int64 {
	if b == nil {
		return 1<<63 - 1
	}
	return b.left.Load()
}
