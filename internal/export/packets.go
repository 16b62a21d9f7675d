package export

import (
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// batchRows is how many rows a PacketWriter collects before handing them
// to the column writers; it divides rowGroupRows.
const batchRows = 1024

// The columns of the packets table, in PacketRow's field order.
const (
	colFile = iota
	colFrame
	colTime
	colEncap
	colSrc
	colDst
	colVLAN
	colECN
	colLength
	colCapLength
	colDestQP
	colOpcode
	colOpcodeName
	colPSN
	colAckReq
	colSE
	colFECN
	colBECN
	colPKey
	colPayloadLen
	colAETHType
	colAETHMSN
	colRETHLength
	colICRC
	colPortRewrite
	colTruncated
	colFindings
	colError
	colEncapsulation
	colMirrorSrc
	colMirrorSession
	colTunnelID
	colTunnelIDName
	colPriority
	numPacketColumns
)

// packetColumns names the columns in the order of the constants above;
// NewPacketWriter checks it against PacketRow's schema.
var packetColumns = [numPacketColumns]string{
	"file", "frame", "time", "encap", "src", "dst", "vlan", "ecn", "length", "cap_length",
	"dest_qp", "opcode", "opcode_name", "psn", "ack_req", "se", "fecn", "becn", "pkey",
	"payload_len", "aeth_type", "aeth_msn", "reth_dma_length", "icrc",
	"icrc_port_rewritten", "truncated", "findings", "error",
	"encapsulation", "mirror_src", "mirror_session", "tunnel_id", "tunnel_id_name", "priority",
}

// PacketWriter streams the packets table of one capture (or range) to a
// file. Add keeps a frame's fields in a compact record without pointers;
// every batchRows rows it hands the batch to the writer's goroutine, which
// turns it into each column's values, one column at a time, for that
// column's writer (no row struct converted by reflection, no per-value
// allocation) while the analysis goes on; there are two batches, so Add
// waits when the encoding falls behind. A row group is written every
// rowGroupRows rows: memory stays bounded whatever the capture's length.
type PacketWriter struct {
	f    *os.File
	w    *parquet.GenericWriter[PacketRow]
	cols []*parquet.ColumnWriter
	file []byte
	// frameBase is subtracted from each packet's frame (SetFirstFrame).
	frameBase uint64
	addrs     addrTable
	wraps     wrapTable
	ops       [512][]byte // opcode names by opcode (+256 for DC), made once each
	cur       *packetBatch
	work      chan *packetBatch // to the writer's goroutine
	free      chan *packetBatch // back from it
	done      chan struct{}     // closed when the goroutine has ended
	vals      []parquet.Value   // one column of a batch (the goroutine's)
	groupN    int               // rows in the row group being written (the goroutine's)
	err       error             // the first write error (the goroutine's until done)
}

// packetBatch is batchRows rows as Add keeps them.
type packetBatch struct {
	recs []packetRec
	errs []string   // the error texts of the batch's malformed frames
	text [][]byte   // the addresses' text when the batch was handed over
	wrap []wrapInfo // the encapsulations' columns, likewise
}

// packetRec is one packets row as Add keeps it until flush.
type packetRec struct {
	frame                               uint64
	time                                int64
	src, dst                            int32 // in addrTable.text
	length, capLength, payloadLen, vlan int32
	destQP, psn, msn, dmaLen            uint32
	findings                            int32
	errIdx                              int32  // in PacketWriter.errs
	wrap                                int32  // in PacketWriter.wraps (0: not wrapped)
	pkey, op                            uint16 // op: index in PacketWriter.ops
	ecn, encap, icrc, aethType          uint8
	prio                                int8 // -1: none
	flags                               uint16
}

// packetRec flags.
const (
	fBTH = 1 << iota
	fAckReq
	fSE
	fFECN
	fBECN
	fAETH
	fRETH
	fPortRewrite
	fTruncated
	fErr
)

// NewPacketWriter creates path and writes the packets of the capture file
// named file to it.
func NewPacketWriter(path, file string) (*PacketWriter, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	pw := &PacketWriter{f: f, w: parquet.NewGenericWriter[PacketRow](f, packetOptions()...), file: []byte(file), vals: make([]parquet.Value, batchRows),
		work: make(chan *packetBatch, 1), free: make(chan *packetBatch, 2), done: make(chan struct{})}
	for i, c := range pw.w.Schema().Columns() {
		if i >= numPacketColumns || len(c) != 1 || c[0] != packetColumns[i] {
			f.Close()
			return nil, fmt.Errorf("packets schema: column %d is %v, want %s", i, c, packetColumns[min(i, numPacketColumns-1)])
		}
	}
	pw.cols = pw.w.ColumnWriters()
	pw.cur = &packetBatch{recs: make([]packetRec, 0, batchRows)}
	pw.free <- &packetBatch{recs: make([]packetRec, 0, batchRows)}
	go pw.encode()
	return pw, nil
}

// packetOptions are the writer options of the packets table: those of
// every table, but Snappy at its fast level (fastSnappy: a few percent
// larger files for 5% less CPU) and without the deprecated per-page statistics in
// the page headers (the column index in the footer holds each page's
// bounds; computing them twice cost 5% of an export).
func packetOptions() []parquet.WriterOption {
	return append(options(), parquet.Compression(fastSnappy{}), parquet.DataPageStatistics(false))
}

// bytesOf is s as bytes without a copy, for a Value the column writer
// copies before s can change (strings never do).
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// SetFirstFrame says which frame number of the packets added is the
// file's first: rows number frames in the file (1, 2, …) when the
// analyzer numbered the frames of several files as one stream.
func (pw *PacketWriter) SetFirstFrame(n uint64) { pw.frameBase = max(n, 1) - 1 }

// Add writes p as a row when it is an RDMA packet, and ignores it
// otherwise. Errors are kept for Close.
func (pw *PacketWriter) Add(p *analyze.Packet) {
	if !p.IsRDMA {
		return
	}
	batch := pw.cur
	batch.recs = batch.recs[:len(batch.recs)+1]
	r := &batch.recs[len(batch.recs)-1]
	*r = packetRec{
		frame: p.Frame - pw.frameBase, time: p.Time.UnixNano(),
		src: pw.addrs.index(p.Src), dst: pw.addrs.index(p.Dst),
		length: int32(p.Length), capLength: int32(p.CapLength), payloadLen: int32(p.PayloadLen), vlan: int32(p.VLAN),
		findings: int32(p.Findings), ecn: p.ECN, encap: uint8(p.Encap), prio: p.Priority,
	}
	if len(p.Wraps) > 0 {
		r.wrap = pw.wraps.index(p.Wraps)
	}
	if b := p.BTH; b != nil {
		r.flags = fBTH | flag(b.AckReq, fAckReq) | flag(b.SolicitedEvent, fSE) | flag(b.FECN, fFECN) | flag(b.BECN, fBECN)
		r.destQP, r.psn, r.pkey, r.icrc = b.DestQP, b.PSN, b.PKey, uint8(p.ICRC.Status)
		r.op = uint16(b.Opcode)
		if b.DC {
			r.op += 256
		}
		if pw.ops[r.op] == nil {
			pw.ops[r.op] = []byte(b.OpcodeName())
		}
	}
	if a := p.AETH; a != nil {
		r.flags |= fAETH
		r.aethType, r.msn = uint8(a.Type()), a.MSN
	}
	if p.RETH != nil {
		r.flags |= fRETH
		r.dmaLen = p.RETH.DMALength
	}
	r.flags |= flag(p.SrcPortRewritten, fPortRewrite) | flag(p.Truncated, fTruncated)
	if p.Err != nil {
		r.flags |= fErr
		r.errIdx = int32(len(batch.errs))
		batch.errs = append(batch.errs, p.Err.Error())
	}
	if len(batch.recs) == batchRows {
		pw.handOver()
	}
}

// handOver sends the current batch to the writer's goroutine and takes
// the other one. The goroutine reads only the elements of the text and
// wrap slices and of ops already made, which Add never changes.
func (pw *PacketWriter) handOver() {
	pw.cur.text, pw.cur.wrap = pw.addrs.text, pw.wraps.info
	pw.work <- pw.cur
	pw.cur = <-pw.free
	pw.cur.recs, pw.cur.errs = pw.cur.recs[:0], pw.cur.errs[:0]
}

// encode is the writer's goroutine: it writes the batches it is handed,
// until the work channel is closed; after an error it only gives them
// back.
func (pw *PacketWriter) encode() {
	defer close(pw.done)
	for b := range pw.work {
		if pw.err == nil {
			pw.err = pw.flush(b)
		}
		clear(b.errs)
		pw.free <- b
	}
}

func flag(b bool, f uint16) uint16 {
	if b {
		return f
	}
	return 0
}

// flush hands the batch to the column writers, one column at a time, and
// ends the row group when it is full.
func (pw *PacketWriter) flush(b *packetBatch) error {
	for col, c := range pw.cols {
		vals := pw.columnValues(col, b, pw.vals[:len(b.recs)])
		if _, err := c.WriteRowValues(vals); err != nil {
			return err
		}
	}
	if pw.groupN += len(b.recs); pw.groupN >= rowGroupRows {
		pw.groupN = 0
		return pw.w.Flush()
	}
	return nil
}

// columnValues fills vals, one per record, with column col's values:
// a loop per column over the batch, then for an optional column the
// definition levels (nulls where a record lacks the header).
func (pw *PacketWriter) columnValues(col int, b *packetBatch, vals []parquet.Value) []parquet.Value {
	recs := b.recs
	var want uint16 // the flags a record needs for a value of an optional column
	switch col {
	case colFile:
		for i := range recs {
			vals[i] = parquet.ByteArrayValue(pw.file)
		}
	case colFrame:
		for i := range recs {
			vals[i] = parquet.Int64Value(int64(recs[i].frame))
		}
	case colTime:
		for i := range recs {
			vals[i] = parquet.Int64Value(recs[i].time)
		}
	case colEncap:
		for i := range recs {
			vals[i] = parquet.ByteArrayValue(bytesOf(analyze.Encap(recs[i].encap).String()))
		}
	case colSrc:
		for i := range recs {
			vals[i] = parquet.ByteArrayValue(b.text[recs[i].src])
		}
	case colDst:
		for i := range recs {
			vals[i] = parquet.ByteArrayValue(b.text[recs[i].dst])
		}
	case colVLAN:
		for i := range recs {
			vals[i] = optionalInt32(recs[i].vlan)
		}
	case colECN:
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].ecn))
		}
	case colLength:
		for i := range recs {
			vals[i] = parquet.Int32Value(recs[i].length)
		}
	case colCapLength:
		for i := range recs {
			vals[i] = parquet.Int32Value(recs[i].capLength)
		}
	case colDestQP:
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].destQP))
		}
		want = fBTH
	case colOpcode:
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].op & 0xff))
		}
		want = fBTH
	case colOpcodeName:
		for i := range recs {
			vals[i] = parquet.ByteArrayValue(pw.ops[recs[i].op])
		}
		want = fBTH
	case colPSN:
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].psn))
		}
		want = fBTH
	case colAckReq, colSE, colFECN, colBECN:
		bit := uint16(fAckReq) << (col - colAckReq) // the four flags are in column order
		for i := range recs {
			vals[i] = parquet.BooleanValue(recs[i].flags&bit != 0)
		}
		want = fBTH
	case colPKey:
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].pkey))
		}
		want = fBTH
	case colPayloadLen:
		for i := range recs {
			vals[i] = optionalInt32(recs[i].payloadLen)
		}
	case colAETHType:
		for i := range recs {
			vals[i] = parquet.ByteArrayValue(bytesOf(layers.AckType(recs[i].aethType).String()))
		}
		want = fAETH
	case colAETHMSN:
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].msn))
		}
		want = fAETH
	case colRETHLength:
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].dmaLen))
		}
		want = fRETH
	case colICRC:
		for i := range recs {
			vals[i] = parquet.ByteArrayValue(bytesOf(layers.ICRCStatus(recs[i].icrc).String()))
		}
		want = fBTH
	case colPortRewrite:
		for i := range recs {
			vals[i] = parquet.BooleanValue(recs[i].flags&fPortRewrite != 0)
		}
	case colTruncated:
		for i := range recs {
			vals[i] = parquet.BooleanValue(recs[i].flags&fTruncated != 0)
		}
	case colFindings:
		for i := range recs {
			vals[i] = parquet.Int32Value(recs[i].findings)
		}
	case colError:
		for i := range recs {
			if recs[i].flags&fErr != 0 {
				vals[i] = parquet.ByteArrayValue(bytesOf(b.errs[recs[i].errIdx]))
			}
		}
		want = fErr
	case colEncapsulation, colMirrorSrc, colMirrorSession, colTunnelID, colTunnelIDName:
		wrapValues(col, b, vals)
	case colPriority:
		for i := range recs {
			if p := int(recs[i].prio) + 1; uint(p) < uint(len(priorityValues)) {
				vals[i] = priorityValues[p]
			} else {
				vals[i] = optionalInt32(int32(recs[i].prio))
			}
		}
	}
	if want != 0 {
		for i := range recs {
			if recs[i].flags&want == want {
				vals[i].SetDefinitionLevel(1)
			} else {
				vals[i] = parquet.Value{}
			}
		}
	}
	return vals
}

// Close writes the rows still batched and the file's footer.
func (pw *PacketWriter) Close() error {
	if len(pw.cur.recs) > 0 {
		pw.handOver()
	}
	close(pw.work)
	<-pw.done
	if err := pw.w.Close(); err != nil && pw.err == nil {
		pw.err = err
	}
	if err := pw.f.Close(); err != nil && pw.err == nil {
		pw.err = err
	}
	return pw.err
}

// addrTable numbers the addresses of a capture and holds their text
// (String allocates; a capture has few addresses). A small direct-mapped
// cache in front of the map saves hashing the address for most frames.
type addrTable struct {
	ids   map[analyze.Addr]int32
	text  [][]byte
	cache [256]struct {
		a  analyze.Addr
		id int32
		ok bool
	}
}

// index is the number of a's text in t.text.
func (t *addrTable) index(a analyze.Addr) int32 {
	b := a.IP.As16()
	slot := &t.cache[(b[15]^b[14]<<2^b[13]<<4)+uint8(a.LID)]
	if slot.ok && slot.a == a {
		return slot.id
	}
	id, ok := t.ids[a]
	if !ok {
		if t.ids == nil {
			t.ids = map[analyze.Addr]int32{}
		}
		id = int32(len(t.text))
		t.text = append(t.text, []byte(a.String()))
		t.ids[a] = id
	}
	slot.a, slot.id, slot.ok = a, id, true
	return id
}

// priorityValues are the priority column's values by priority + 1, null
// first: a packet's is copied, not made (optionalInt32 is not inlined:
// 66 instructions a packet under callgrind, 27 copied).
var priorityValues = func() (vs [9]parquet.Value) {
	for p := range 8 {
		vs[p+1] = optionalInt32(int32(p))
	}
	return vs
}()

// optionalInt32 is the value of an optional INT32 column: v, or null when
// negative (absent).
func optionalInt32(v int32) parquet.Value {
	if v < 0 {
		return parquet.Value{}
	}
	x := parquet.Int32Value(v)
	x.SetDefinitionLevel(1)
	return x
}
