package analyze

import (
	"math/bits"
	"slices"
	"strconv"

	"github.com/roce-dissect/roce-dissect/layers"
)

// opClass is the operation a packet carries as Ops counts it.
type opClass uint8

// The classes of Ops, in its field order.
const (
	opSend opClass = iota
	opWrite
	opWriteImm
	opReadRequest
	opReadResponse
	opAtomic
	opAtomicACK
	opACK
	opCNP
	opOther
	nOpClasses
)

// opClassOf returns the class of an opcode: the one place a flow's
// operation mix is derived from the BTH opcode.
func opClassOf(op layers.Opcode) opClass {
	switch {
	case !op.Known():
		return opOther
	case op.IsCNP():
		return opCNP
	}
	switch op.Operation() {
	case layers.OperationSendFirst, layers.OperationSendMiddle, layers.OperationSendLast,
		layers.OperationSendLastWithImmediate, layers.OperationSendOnly, layers.OperationSendOnlyWithImmediate,
		layers.OperationSendLastWithInvalidate, layers.OperationSendOnlyWithInvalidate:
		return opSend
	case layers.OperationRDMAWriteFirst, layers.OperationRDMAWriteMiddle, layers.OperationRDMAWriteLast,
		layers.OperationRDMAWriteOnly:
		return opWrite
	case layers.OperationRDMAWriteLastWithImmediate, layers.OperationRDMAWriteOnlyWithImmediate:
		return opWriteImm
	case layers.OperationRDMAReadRequest:
		return opReadRequest
	case layers.OperationRDMAReadResponseFirst, layers.OperationRDMAReadResponseMiddle,
		layers.OperationRDMAReadResponseLast, layers.OperationRDMAReadResponseOnly:
		return opReadResponse
	case layers.OperationCompareSwap, layers.OperationFetchAdd:
		return opAtomic
	case layers.OperationAtomicAcknowledge:
		return opAtomicACK
	case layers.OperationAcknowledge:
		return opACK
	}
	return opOther
}

// Ops counts a flow's packets by the operation of their BTH opcode, on
// every transport: each packet in exactly one, so they add up to
// Flow.Packets. A multi-packet RDMA WRITE with immediate counts its FIRST
// and MIDDLE packets in Write and its LAST in WriteImm, as the opcodes
// say.
type Ops struct {
	// Send counts SEND packets (with immediate or invalidate too).
	Send uint64 `json:"send"`
	// Write counts RDMA WRITE packets without immediate data.
	Write uint64 `json:"write"`
	// WriteImm counts RDMA WRITE LAST and ONLY with immediate.
	WriteImm uint64 `json:"write_imm"`
	// ReadRequest counts RDMA READ requests; ReadResponse the packets of
	// their responses.
	ReadRequest  uint64 `json:"read_request"`
	ReadResponse uint64 `json:"read_response"`
	// Atomic counts COMPARE_SWAP and FETCH_ADD requests; AtomicACK their
	// ATOMIC_ACKNOWLEDGE responses.
	Atomic    uint64 `json:"atomic"`
	AtomicACK uint64 `json:"atomic_ack"`
	// ACK counts ACKNOWLEDGE packets: ACKs and NAKs (RNR NAKs too).
	ACK uint64 `json:"ack"`
	// CNP counts congestion notification packets.
	CNP uint64 `json:"cnp"`
	// Other counts FLUSH, ATOMIC_WRITE and RESYNC packets and opcodes
	// outside the IBTA table.
	Other uint64 `json:"other"`
}

// counts returns the counters of o in opClass order.
func (o *Ops) counts() [nOpClasses]*uint64 {
	return [nOpClasses]*uint64{&o.Send, &o.Write, &o.WriteImm, &o.ReadRequest, &o.ReadResponse,
		&o.Atomic, &o.AtomicACK, &o.ACK, &o.CNP, &o.Other}
}

// add adds the counts of b to o.
func (o *Ops) add(b *Ops) {
	bs := b.counts()
	for i, p := range o.counts() {
		*p += *bs[i]
	}
}

// SizeBucket counts the messages of sizes Min to Max bytes: 0, then the
// powers of two (1, 2–3, 4–7, … 2^k to 2^(k+1)−1).
type SizeBucket struct {
	Min   uint64 `json:"min"`
	Max   uint64 `json:"max"`
	Count uint64 `json:"count"`
}

// sizeBucketOf returns the bucket number of a message size: its bit
// length, at most 64, so a flow has at most 65 buckets.
func sizeBucketOf(size uint64) uint8 { return uint8(bits.Len64(size)) }

// sizeBucketRange returns the sizes bucket b holds.
func sizeBucketRange(b uint8) (lo, hi uint64) {
	if b == 0 {
		return 0, 0
	}
	lo = 1 << (b - 1)
	return lo, lo<<1 - 1 // for b = 64 the shift wraps to 0: hi is 2^64−1
}

// addSizeBucket adds n messages of bucket b to the sorted list bs.
func addSizeBucket(bs []SizeBucket, b uint8, n uint64) []SizeBucket {
	lo, hi := sizeBucketRange(b)
	i, found := slices.BinarySearchFunc(bs, lo, func(s SizeBucket, lo uint64) int {
		switch {
		case s.Min < lo:
			return -1
		case s.Min > lo:
			return 1
		}
		return 0
	})
	if found {
		bs[i].Count += n
		return bs
	}
	return slices.Insert(bs, i, SizeBucket{Min: lo, Max: hi, Count: n})
}

// removeSizeBucket takes one message of size bytes out of bs: one the
// part before a seam counted already (Merge).
func removeSizeBucket(bs []SizeBucket, size uint64) []SizeBucket {
	lo, _ := sizeBucketRange(sizeBucketOf(size))
	for i := range bs {
		if bs[i].Min == lo && bs[i].Count > 0 {
			if bs[i].Count--; bs[i].Count == 0 {
				return slices.Delete(bs, i, i+1)
			}
			break
		}
	}
	return bs
}

// sizeCount is a flow's count of messages in one size bucket.
type sizeCount struct {
	n      uint64
	bucket uint8
}

// flowMix is what a flow carried: its packets by operation class and its
// messages by size bucket. Most flows use one or two sizes: those are
// held inline, the list grows (at most 65) only for more.
type flowMix struct {
	ops     [nOpClasses]uint64
	sizes   []sizeCount
	inSizes [2]sizeCount
}

// mixState returns the flow's mix: made with the flow (flowFor), or
// here for a flow made otherwise.
func (f *flowState) mixState() *flowMix {
	if f.mix == nil {
		f.mix = &flowMix{}
	}
	return f.mix
}

// addSize counts a completed message of size bytes.
func (m *flowMix) addSize(size uint64) {
	if m.sizes == nil {
		m.sizes = m.inSizes[:0]
	}
	b := sizeBucketOf(size)
	for i := range m.sizes {
		if m.sizes[i].bucket == b {
			m.sizes[i].n++
			return
		}
	}
	m.sizes = append(m.sizes, sizeCount{n: 1, bucket: b})
}

// report returns the mix as Flow.Ops and Messages.SizeBuckets (nil
// without messages).
func (m *flowMix) report() (ops Ops, buckets []SizeBucket) {
	if m == nil {
		return Ops{}, nil
	}
	for i, p := range ops.counts() {
		*p = m.ops[i]
	}
	for _, s := range m.sizes {
		buckets = addSizeBucket(buckets, s.bucket, s.n)
	}
	return ops, buckets
}

// SizeBucketsText returns the buckets as the CSV and Parquet flow tables
// write them: "min-max:count" for each, space-separated; "" for none.
func SizeBucketsText(bs []SizeBucket) string {
	var b []byte
	for i, s := range bs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendUint(b, s.Min, 10)
		b = append(b, '-')
		b = strconv.AppendUint(b, s.Max, 10)
		b = append(b, ':')
		b = strconv.AppendUint(b, s.Count, 10)
	}
	return string(b)
}
