package analyze

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// psnStep is one request given to a psnTracker: settleRead(psn) first
// when settle is set, then observe(psn, span), then a guessed READ span
// when guess is set (as request does). Frames count from 1 over pre and
// steps together.
type psnStep struct {
	psn, span uint32
	settle    bool
	wantMTU   int // settleRead's result
	guess     uint32
	want      observation
	wantGap   psnGap // the gap an obsGap opened
}

// every returns the PSNs from, from+step, … (n of them): the in-order or
// gapped requests that set a case up, fed unchecked.
func every(from, step uint32, n int) []uint32 {
	s := make([]uint32, n)
	for i := range s {
		s[i] = psnAdd(from, int64(i)*int64(step))
	}
	return s
}

// TestPSNTracker: request PSN sequences with every value worked out by
// hand from the rules of PROTOCOL.md (24-bit serial PSNs, a READ reserving
// ceil(DMALength/PMTU) PSNs) and the bounds of psnbound.go.
func TestPSNTracker(t *testing.T) {
	tests := []struct {
		name  string
		pre   []uint32 // fed first with span 1, observations unchecked
		steps []psnStep

		wantGaps        []psnGap // nil: checked by count, first and last only
		nGaps           int
		firstGap        psnGap
		lastGap         psnGap
		low, high, next uint32
		missing         uint64
		untracked       uint64
	}{
		{
			name: "in order",
			steps: []psnStep{
				{psn: 10, span: 1, want: obsInOrder},
				{psn: 11, span: 1, want: obsInOrder},
				{psn: 12, span: 1, want: obsInOrder},
			},
			wantGaps: []psnGap{}, low: 10, high: 12, next: 13,
		},
		{
			name: "gap",
			steps: []psnStep{
				{psn: 10, span: 1, want: obsInOrder},
				{psn: 13, span: 1, want: obsGap, wantGap: psnGap{from: 11, to: 12, frame: 2}},
			},
			wantGaps: []psnGap{{11, 12, 2}}, low: 10, high: 13, next: 14, missing: 2,
		},
		{
			name: "24-bit wrap in order",
			steps: []psnStep{
				{psn: 0xFFFFFE, span: 1, want: obsInOrder},
				{psn: 0xFFFFFF, span: 1, want: obsInOrder},
				{psn: 0, span: 1, want: obsInOrder},
				{psn: 1, span: 1, want: obsInOrder},
			},
			wantGaps: []psnGap{}, low: 0xFFFFFE, high: 1, next: 2,
		},
		{
			name: "gap across the wrap",
			steps: []psnStep{
				{psn: 0xFFFFFE, span: 1, want: obsInOrder},
				// 0xFFFFFF, 0 and 1 missing.
				{psn: 2, span: 1, want: obsGap, wantGap: psnGap{from: 0xFFFFFF, to: 1, frame: 2}},
				{psn: 0, span: 1, want: obsFill},
			},
			wantGaps: []psnGap{{0xFFFFFF, 0xFFFFFF, 2}, {1, 1, 2}}, low: 0xFFFFFE, high: 2, next: 3, missing: 2,
		},
		{
			name: "gap split and closed by fills",
			steps: []psnStep{
				{psn: 10, span: 1, want: obsInOrder},
				{psn: 20, span: 1, want: obsGap, wantGap: psnGap{from: 11, to: 19, frame: 2}},
				{psn: 15, span: 1, want: obsFill}, // 11–14, 16–19
				{psn: 11, span: 1, want: obsFill}, // 12–14, 16–19
				{psn: 19, span: 1, want: obsFill}, // 12–14, 16–18
				{psn: 13, span: 1, want: obsFill}, // 12, 14, 16–18
				{psn: 16, span: 1, want: obsFill}, // 12, 14, 17–18
				{psn: 12, span: 1, want: obsFill}, // 14, 17–18
				{psn: 15, span: 1, want: obsOld},  // seen: a retransmission
				{psn: 21, span: 1, want: obsInOrder},
			},
			wantGaps: []psnGap{{14, 14, 2}, {17, 18, 2}}, low: 10, high: 21, next: 22, missing: 3,
		},
		{
			name: "READ fill clamped to the gap's end",
			steps: []psnStep{
				{psn: 10, span: 1, want: obsInOrder},
				{psn: 20, span: 1, want: obsGap, wantGap: psnGap{from: 11, to: 19, frame: 2}},
				// A READ at 17 spanning 17–21 fills 17–19 only.
				{psn: 17, span: 5, want: obsFill},
			},
			wantGaps: []psnGap{{11, 16, 2}}, low: 10, high: 20, next: 21, missing: 6,
		},
		{
			name: "reordering below the lowest PSN",
			steps: []psnStep{
				{psn: 10, span: 1, want: obsInOrder},
				{psn: 11, span: 1, want: obsInOrder},
				// Before every PSN seen: 6–9 become a hole.
				{psn: 5, span: 1, want: obsFill},
				{psn: 7, span: 1, want: obsFill}, // 6, 8–9
				// Right below the lowest: no hole.
				{psn: 4, span: 1, want: obsFill},
				{psn: 12, span: 1, want: obsInOrder},
			},
			wantGaps: []psnGap{{6, 6, 3}, {8, 9, 3}}, low: 4, high: 12, next: 13, missing: 3,
		},
		{
			name: "reordering below the lowest PSN, a hole in front of a gap",
			steps: []psnStep{
				{psn: 10, span: 1, want: obsInOrder},
				{psn: 15, span: 1, want: obsGap, wantGap: psnGap{from: 11, to: 14, frame: 2}},
				{psn: 7, span: 1, want: obsFill}, // 8–9 listed first
			},
			wantGaps: []psnGap{{8, 9, 3}, {11, 14, 2}}, low: 7, high: 15, next: 16, missing: 6,
		},
		{
			name: "reordering below the lowest PSN across the wrap",
			steps: []psnStep{
				{psn: 1, span: 1, want: obsInOrder},
				// 0xFFFFFD is 4 behind 1: 0xFFFFFE, 0xFFFFFF and 0 are a hole.
				{psn: 0xFFFFFD, span: 1, want: obsFill},
			},
			wantGaps: []psnGap{{0xFFFFFE, 0, 2}}, low: 0xFFFFFD, high: 1, next: 2, missing: 3,
		},
		{
			name: "READ span known",
			steps: []psnStep{
				{psn: 10, span: 4, want: obsInOrder}, // reserves 10–13
				{psn: 12, span: 1, want: obsOld},     // inside the READ's span
				{psn: 14, span: 1, want: obsInOrder},
				{psn: 16, span: 1, want: obsGap, wantGap: psnGap{from: 15, to: 15, frame: 4}},
			},
			wantGaps: []psnGap{{15, 15, 4}}, low: 10, high: 16, next: 17, missing: 1,
		},
		{
			// 8,192 bytes: 2 PSNs at PMTU 4096, 4 at 2048, 8 at 1024, 16 at 512, 32 at 256.
			name: "READ span guessed, settled by a path MTU",
			steps: []psnStep{
				{psn: 10, span: 1, guess: 8192, want: obsInOrder},
				{psn: 14, span: 1, settle: true, wantMTU: 2048, want: obsInOrder},
			},
			wantGaps: []psnGap{}, low: 10, high: 14, next: 15,
		},
		{
			name: "READ span guessed, a jump no path MTU explains",
			steps: []psnStep{
				// 20 PSNs: more than 16 (PMTU 512), less than 32 (256): a
				// gap after the longest span that fits, 10–25.
				{psn: 10, span: 1, guess: 8192, want: obsInOrder},
				{psn: 30, span: 1, settle: true, wantMTU: 0, want: obsGap, wantGap: psnGap{from: 26, to: 29, frame: 2}},
			},
			wantGaps: []psnGap{{26, 29, 2}}, low: 10, high: 30, next: 31, missing: 4,
		},
		{
			name: "READ span guessed, the next PSN right after",
			steps: []psnStep{
				{psn: 10, span: 1, guess: 8192, want: obsInOrder},
				{psn: 11, span: 1, settle: true, wantMTU: 0, want: obsInOrder},
			},
			wantGaps: []psnGap{}, low: 10, high: 11, next: 12,
		},
		{
			name: "READ span guessed, shorter than any path MTU's jump",
			steps: []psnStep{
				// 100 bytes: 1 PSN at every path MTU; a jump of 3 is a gap
				// after that 1.
				{psn: 10, span: 1, guess: 100, want: obsInOrder},
				{psn: 13, span: 1, settle: true, wantMTU: 0, want: obsGap, wantGap: psnGap{from: 11, to: 12, frame: 2}},
			},
			wantGaps: []psnGap{{11, 12, 2}}, low: 10, high: 13, next: 14, missing: 2,
		},
		{
			// The span clamp: 2^23 − 1 PSNs still compare ahead.
			name: "READ of the largest span",
			steps: []psnStep{
				{psn: 0, span: maxReadSpan, want: obsInOrder},
				{psn: 0x7FFFFF, span: 1, want: obsInOrder},
			},
			wantGaps: []psnGap{}, low: 0, high: 0x7FFFFF, next: 0x800000,
		},
		{
			// The missing clamp: jumps of 2^23 − 2 each, three of them,
			// 25,165,818 PSNs, more than the 2^24 − 1 a flow can miss.
			name: "missing clamped",
			steps: []psnStep{
				{psn: 0, span: 1, want: obsInOrder},
				{psn: 0x7FFFFF, span: 1, want: obsGap, wantGap: psnGap{from: 1, to: 0x7FFFFE, frame: 2}},
				{psn: 0xFFFFFE, span: 1, want: obsGap, wantGap: psnGap{from: 0x800000, to: 0xFFFFFD, frame: 3}},
				{psn: 0x7FFFFD, span: 1, want: obsGap, wantGap: psnGap{from: 0xFFFFFF, to: 0x7FFFFC, frame: 4}},
			},
			wantGaps: []psnGap{{1, 0x7FFFFE, 2}, {0x800000, 0xFFFFFD, 3}, {0xFFFFFF, 0x7FFFFC, 4}},
			low:      0, high: 0x7FFFFD, next: 0x7FFFFE, missing: 0xFFFFFF,
		},
		{
			// 0, 2, …, 512: 256 gaps of one PSN (1, 3, …, 511), the list full.
			name: "maxGaps: a further gap is counted untracked",
			pre:  every(0, 2, 257),
			steps: []psnStep{
				{psn: 516, span: 1, want: obsGap, wantGap: psnGap{from: 513, to: 515, frame: 258}},
				// An untracked PSN cannot be filled: seen, as far as the list knows.
				{psn: 514, span: 1, want: obsOld},
				{psn: 511, span: 1, want: obsFill}, // a listed one can
			},
			nGaps: 255, firstGap: psnGap{1, 1, 2}, lastGap: psnGap{509, 509, 256},
			low: 0, high: 516, next: 517, missing: 255 + 3, untracked: 3,
		},
		{
			// 0, 10, 12, …, 520: gaps 1–9 and 255 of one PSN (11, …, 519).
			name: "maxGaps: the tail of a split counted untracked",
			pre:  append([]uint32{0}, every(10, 2, 256)...),
			steps: []psnStep{
				{psn: 5, span: 1, want: obsFill}, // 1–4 kept, 6–9 untracked
			},
			nGaps: 256, firstGap: psnGap{1, 4, 2}, lastGap: psnGap{519, 519, 257},
			low: 0, high: 520, next: 521, missing: 4 + 255 + 4, untracked: 4,
		},
		{
			// 1000, 1002, …, 1512: 256 gaps of one PSN (1001, …, 1511).
			name: "maxGaps: a hole below the lowest PSN counted untracked",
			pre:  every(1000, 2, 257),
			steps: []psnStep{
				{psn: 990, span: 1, want: obsFill}, // 991–999 untracked
			},
			nGaps: 256, firstGap: psnGap{1001, 1001, 2}, lastGap: psnGap{1511, 1511, 257},
			low: 990, high: 1512, next: 1513, missing: 256 + 9, untracked: 9,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tr psnTracker
			frame := uint64(0)
			for _, psn := range tt.pre {
				frame++
				tr.observe(psn, 1, frame)
			}
			for i, s := range tt.steps {
				frame++
				if s.settle {
					assert.Equal(t, s.wantMTU, tr.settleRead(s.psn), "step %d: settleRead", i)
				}
				obs, gap := tr.observe(s.psn, s.span, frame)
				assert.Equal(t, s.want, obs, "step %d: PSN %#x", i, s.psn)
				assert.Equal(t, s.wantGap, gap, "step %d: PSN %#x", i, s.psn)
				if s.guess > 0 {
					tr.more().guess = readGuess{active: true, psn: s.psn, dmaLen: s.guess}
				}
			}
			if tt.wantGaps != nil {
				assert.Equal(t, tt.wantGaps, append([]psnGap{}, tr.gaps()...))
			} else {
				gaps := tr.gaps()
				require.Len(t, gaps, tt.nGaps)
				assert.Equal(t, tt.firstGap, gaps[0])
				assert.Equal(t, tt.lastGap, gaps[len(gaps)-1])
			}
			assert.Equal(t, tt.low, tr.low, "low")
			assert.Equal(t, tt.high, tr.high, "high")
			assert.Equal(t, tt.next, tr.next, "next")
			assert.Equal(t, tt.missing, tr.missing(), "missing")
			var untracked uint64
			if tr.rare != nil {
				untracked = tr.rare.untracked
			}
			assert.Equal(t, tt.untracked, untracked, "untracked")
		})
	}
}

// TestPSNTrackerAnyIn: whether a PSN of a range is still missing, the gaps
// being 11–19 and 0xFFFFFF–1 (across the wrap).
func TestPSNTrackerAnyIn(t *testing.T) {
	tr := psnTracker{rare: &psnRare{gaps: []psnGap{{from: 11, to: 19}, {from: 0xFFFFFF, to: 1}}}}
	tests := []struct {
		from, to uint32
		want     bool
	}{
		{5, 10, false},
		{5, 11, true},
		{12, 12, true},
		{19, 25, true},
		{20, 30, false},
		{0, 0, true},
		{0xFFFFFE, 0xFFFFFE, false},
		{0xFFFFFE, 0xFFFFFF, true},
		{2, 5, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tr.anyIn(tt.from, tt.to), "%#x–%#x", tt.from, tt.to)
	}
}

// TestPSNTrackerNote: a stream whose gaps mean nothing keeps its first,
// lowest and highest PSN, and nothing missing.
func TestPSNTrackerNote(t *testing.T) {
	var tr psnTracker
	for _, psn := range []uint32{10, 5, 20, 0xFFFFFF, 15} { // 0xFFFFFF is behind 10
		tr.note(psn)
	}
	assert.Equal(t, uint32(10), tr.first)
	assert.Equal(t, uint32(0xFFFFFF), tr.low)
	assert.Equal(t, uint32(20), tr.high)
	assert.Equal(t, uint32(21), tr.next)
	assert.Empty(t, tr.gaps())
	assert.Zero(t, tr.missing())
}

// TestSpanOf: ceil(DMALength / PMTU), at least 1, at most 2^23 − 1.
func TestSpanOf(t *testing.T) {
	tests := []struct {
		dmaLen uint32
		pmtu   int
		want   uint32
	}{
		{0, 4096, 1},
		{1, 4096, 1},
		{4096, 4096, 1},
		{4097, 4096, 2},
		{8192, 256, 32},
		{1<<31 - 256, 256, 1<<23 - 1},
		{1 << 31, 256, 1<<23 - 1},    // 2^23 clamped
		{0xFFFFFFFF, 256, 1<<23 - 1}, // 2^24 clamped
		{0xFFFFFFFF, 4096, 1 << 20},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, spanOf(tt.dmaLen, tt.pmtu), "%d at %d", tt.dmaLen, tt.pmtu)
	}
}
