package analyze

import "fmt"

// Bounds of what a flow's 24-bit PSN space allows.
//
// A READ request reserves ceil(DMALength / PMTU) PSNs for its responses.
// The IBTA caps a message at 2^31 bytes, so at the smallest path MTU (256)
// a READ spans at most 2^23 PSNs, half the PSN space, beyond which the
// 24-bit serial comparison can no longer tell ahead from behind. A span is
// therefore at most maxReadSpan (2^23 − 1), and a READ whose DMALength is
// above maxDMALength is not believed at all: it is a bad_dma_length
// finding and its span is settled by the PSN of the next request, as when
// the path MTU is unknown. (A DMALength of 0xFFFFFFFF at PMTU 256 reserved
// 2^24 PSNs, which wrapped to none: every later request said the PSN just
// seen was missing.)
//
// A flow's missing PSNs are at most maxMissing (2^24 − 1): no more PSNs
// can be missing from one 24-bit space than it holds less the one seen.
// Random PSNs made each forward jump (up to 2^23) count, 2.9 × 10^12 in
// all; the count is clamped, in the flow and when parts are merged.
const (
	maxReadSpan  = 1<<23 - 1
	maxDMALength = 1 << 31
	maxMissing   = psnMask
)

// KindBadDMALength: an RDMA READ request's DMALength is above 2^31 bytes,
// the largest IBTA message.
const KindBadDMALength = "bad_dma_length"

// clampMissing bounds a count of missing PSNs by maxMissing.
func clampMissing(n uint64) uint64 { return min(n, maxMissing) }

// subSat is a − b, 0 when b > a.
func subSat(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// checkDMALength reports a READ request whose DMALength no message can
// have; its span is then not believed.
func (a *Analyzer) checkDMALength(f *flowState, p *Packet) bool {
	if p.RETH == nil || uint64(p.RETH.DMALength) <= maxDMALength {
		return true
	}
	a.addFinding(p, KindBadDMALength, SeverityWarning, f.name(),
		fmt.Sprintf("RDMA READ PSN %d asks for DMALength %d, above 2^31 bytes (the largest message): its PSN span is taken from the next request", p.BTH.PSN, p.RETH.DMALength))
	return false
}
