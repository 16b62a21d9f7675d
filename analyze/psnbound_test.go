package analyze_test

import (
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

func feedFrames(a *analyze.Analyzer, frames ...[]byte) {
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, fr := range frames {
		a.Feed(gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(fr), Length: len(fr)}, gplayers.LinkTypeEthernet, fr)
	}
}

// TestHugeREADSpan: a READ request whose DMALength is 0xFFFFFFFF (above
// the 2^31-byte IBTA maximum) on a flow whose path MTU is known (256, from
// a WRITE FIRST) reserved 2^24 PSNs, which wrapped to none: every request
// after it said "PSN n missing" for the PSN just seen. Its span is now
// settled by the next request and it is a bad_dma_length finding; a READ
// of the largest message (2^31 bytes) at PMTU 256 reserves 2^23 − 1 PSNs at
// most, within the half of the PSN space that serial comparison can tell.
func TestHugeREADSpan(t *testing.T) {
	qp := uint32(0x11)
	write := func(op layers.Opcode, psn uint32, n int, rest ...gopacket.SerializableLayer) []byte {
		return roceFrame(t, hostA, hostB, &layers.BTH{Opcode: op, PKey: 0xFFFF, DestQP: qp, PSN: psn}, append(rest, gopacket.Payload(make([]byte, n)))...)
	}
	read := func(psn, dmaLen uint32) []byte {
		return roceFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCRDMAReadRequest, PKey: 0xFFFF, DestQP: qp, AckReq: true, PSN: psn},
			&layers.RETH{VA: 0x1000, RKey: 7, DMALength: dmaLen})
	}
	tests := []struct {
		name    string
		dmaLen  uint32
		next    uint32 // PSN of the SENDs after the READ at PSN 2
		missing uint64
		kinds   map[string]int
	}{
		{"DMALength 0xFFFFFFFF", 0xFFFFFFFF, 3, 0, map[string]int{analyze.KindBadDMALength: 1}},
		{"DMALength 2^31 at PMTU 256", 1 << 31, 2 + 1<<23 - 1, 0, map[string]int{}},
		{"honest READ of 1,000 bytes", 1000, 6, 0, map[string]int{}},
		{"honest READ then a jump", 1000, 8, 2, map[string]int{analyze.KindPSNGap: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := analyze.New(analyze.Options{})
			frames := [][]byte{
				write(layers.OpcodeRCRDMAWriteFirst, 0, 256, &layers.RETH{VA: 0x1000, RKey: 7, DMALength: 300}),
				write(layers.OpcodeRCRDMAWriteLast, 1, 44),
				read(2, tt.dmaLen),
			}
			for i := range uint32(5) {
				frames = append(frames, write(layers.OpcodeRCSendOnly, tt.next+i, 8))
			}
			feedFrames(a, frames...)
			r := a.Finish()
			require.Len(t, r.Flows, 1)
			q := r.Flows[0].Requests
			assert.Equal(t, tt.missing, q.Missing)
			assert.Zero(t, q.Retransmitted)
			got := map[string]int{}
			for _, f := range r.Findings {
				got[f.Kind]++
			}
			assert.Equal(t, tt.kinds, got)
		})
	}
}

// TestMissingBounded: requests of random 24-bit PSNs jump ahead by up to
// 2^23 each; their missing PSNs summed to 2.9 × 10^12 on 1M packets, more
// than the PSN space holds. A flow misses at most 2^24 − 1 PSNs, whole or
// merged from two halves.
func TestMissingBounded(t *testing.T) {
	const n = 20_000
	frame := roceFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, DestQP: 0x11}, gopacket.Payload(make([]byte, 8)))
	const psnOff = 14 + 20 + 8 + 9
	opts := analyze.Options{NoICRC: true, MaxFindings: 10}
	whole, first, second := analyze.New(opts), analyze.New(opts), analyze.New(opts)
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rng := uint32(1)
	for i := range n {
		rng ^= rng << 13
		rng ^= rng >> 17
		rng ^= rng << 5
		frame[psnOff], frame[psnOff+1], frame[psnOff+2] = byte(rng>>16), byte(rng>>8), byte(rng)
		ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(frame), Length: len(frame)}
		whole.Feed(ci, gplayers.LinkTypeEthernet, frame)
		if i < n/2 {
			first.Feed(ci, gplayers.LinkTypeEthernet, frame)
		} else {
			second.Feed(ci, gplayers.LinkTypeEthernet, frame)
		}
	}
	r := whole.Finish()
	require.Len(t, r.Flows, 1)
	q := r.Flows[0].Requests
	assert.Equal(t, uint64(1<<24-1), q.Missing, "random PSNs over 20,000 packets miss the whole space but the PSNs seen, clamped")
	assert.LessOrEqual(t, q.MissingLost+q.MissingNotCaptured, q.Missing)
	m := first.Finish()
	m.Merge(second.Finish())
	require.Len(t, m.Flows, 1)
	assert.LessOrEqual(t, m.Flows[0].Requests.Missing, uint64(1<<24-1))
}
