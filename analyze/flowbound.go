package analyze

// The state of one flow is bounded, whatever its packets, so that the
// flow cap (Options.MaxFlows) bounds the analyzer's memory. Each list is
// capped, and the caps are chosen so that their sum stays about 100 KiB (TestWorstFlowMemory builds the worst flow the analyzer knows
// and checks it stays under maxFlowBytes; docs/robustness.md gives the
// measured figure):
//
//	list                                  cap   bytes each   at most
//	throughput series (maxSeries)          512          48    24 KiB
//	PSN gaps (maxGaps)                     256          16     4 KiB
//	loss log: jumps (maxLossLog)           256          40    10 KiB
//	loss log: go-back episodes             256           8     2 KiB
//	loss log: incomplete messages          256          16     4 KiB
//	loss log: NAK PSNs                     256           4     1 KiB
//	pending messages (maxPending/stream)    64          40   2.5 KiB
//	head log (headLen) requests + messages  64     40 + 16   3.5 KiB
//	requests awaiting an ACK (pendingLen)   64          16     1 KiB
//	RTT histogram                            1        4 KiB    4 KiB
//	source ports recovered (maxOriginalPorts) 8          2     16 B
//	NAK codes, RNR timers (maps)          ≤ 32 each             ~2 KiB
//	NIC timing (package nic): ring of 8, 8 figures, each a 4 KiB
//	  histogram past 15 samples (nic.MaxFlowBytes)              ~36 KiB
//
// With every NIC figure full the worst flow holds about 100 KiB
// (TestWorstFlowMemory counts them at nic.MaxFlowBytes; maxFlowBytes is
// 112 KiB).
// Without them a hostile capture could make each of its flows hold far
// more, and many flows the memory of the machine.
//
// State added per flow by other parts of the analyzer must keep to this:
// a bounded list, a few KiB at most, allocated when first needed.

// growSeries returns s one sample longer (the new sample's contents are
// left to the caller), growing its capacity by doubling from one sample
// but never past maxSeries+1: append would double a full series of 512
// samples to 1,024 before addSample coarsens it back. A series starts
// with room for one sample, not four: a flow of one interval does not
// hold three empty (a capture of one-packet flows holds one each).
func growSeries(s []Sample) []Sample {
	if len(s) < cap(s) {
		return s[:len(s)+1]
	}
	ns := make([]Sample, len(s)+1, min(max(2*cap(s), 1), maxSeries+1))
	copy(ns, s)
	return ns
}
