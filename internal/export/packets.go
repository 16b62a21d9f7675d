package export

import (
	"fmt"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/filename"
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
	colICRCValue
	colIPID
	colTTL
	colICRCOrigPort
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
	"icrc_value", "ip_id", "ttl", "icrc_original_src_port",
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
	out    *outFile
	w      *parquet.GenericWriter[PacketRow]
	cols   []*parquet.ColumnWriter
	file   []byte
	addrs  addrTable
	wraps  wrapTable
	ops    [512][]byte // opcode names by opcode (+256 for DC), made once each
	cur    *packetBatch
	work   chan *packetBatch // to the writer's goroutine
	free   chan *packetBatch // back from it
	done   chan struct{}     // closed when the goroutine has ended
	vals   []parquet.Value   // one column of a batch (the goroutine's)
	groupN int               // rows in the row group being written (the goroutine's)
	err    error             // the first write error (the goroutine's until done)
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
	icrcVal, ipID                       uint32 // ipID: the IPv4 ID, else the flow label
	findings                            int32
	errIdx                              int32  // in PacketWriter.errs
	wrap                                int32  // in PacketWriter.wraps (0: not wrapped)
	pkey, op                            uint16 // op: index in PacketWriter.ops
	origPort                            uint16 // the source port the ICRC verified with (fPortRewrite)
	ecn, encap, icrc, aethType          uint8
	prio                                int8 // -1: none
	ttl                                 uint8
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
	fICRCValue // the ICRC was captured
	fNet       // an IP header or GRH: ipID and ttl are set
)

// NewPacketWriter writes the packets of the capture file named file (as
// valid UTF-8, filename.UTF8) to path: to a file of its own in path's
// directory, renamed to path by a successful Close (outFile).
func NewPacketWriter(path, file string) (*PacketWriter, error) {
	out, err := createOut(path)
	if err != nil {
		return nil, err
	}
	pw := &PacketWriter{out: out, w: parquet.NewGenericWriter[PacketRow](out.w, packetOptions()...), file: []byte(filename.UTF8(file)), vals: make([]parquet.Value, batchRows),
		work: make(chan *packetBatch, 1), free: make(chan *packetBatch, 2), done: make(chan struct{})}
	for i, c := range pw.w.Schema().Columns() {
		if i >= numPacketColumns || len(c) != 1 || c[0] != packetColumns[i] {
			err := fmt.Errorf("packets schema: column %d is %v, want %s", i, c, packetColumns[min(i, numPacketColumns-1)])
			return nil, out.Commit(err)
		}
	}
	pw.cols = pw.w.ColumnWriters()
	pw.cur = &packetBatch{recs: make([]packetRec, 0, batchRows)}
	pw.free <- &packetBatch{recs: make([]packetRec, 0, batchRows)}
	go pw.encode()
	return pw, nil
}

// packetOptions are the writer options of the packets table: those of
// every table, but Snappy at its fast level (fastSnappy: slightly larger
// files for less CPU) and without the deprecated per-page statistics in
// the page headers (the column index in the footer holds each page's
// bounds, which would otherwise be computed twice).
func packetOptions() []parquet.WriterOption {
	return append(options(), parquet.Compression(fastSnappy{}), parquet.DataPageStatistics(false))
}

// bytesOf is s as bytes without a copy, for a Value the column writer
// copies before s can change (strings never do).
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// Add writes p, frame number frame of its file, as a row when it is an
// RDMA packet, and ignores it otherwise (the analyzer numbers the frames
// of several files read as one stream one after another; a row names the
// frame by its number in its file). Errors are kept for Close.
func (pw *PacketWriter) Add(p *analyze.Packet, frame uint64) {
	if !p.IsRDMA {
		return
	}
	batch := pw.cur
	batch.recs = batch.recs[:len(batch.recs)+1]
	r := &batch.recs[len(batch.recs)-1]
	*r = packetRec{
		frame: frame, time: p.Time.UnixNano(),
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
		if v, ok := b.ICRCValue(); ok {
			r.flags |= fICRCValue
			r.icrcVal = layers.ICRCWireValue(v)
		}
	}
	if p.Encap == analyze.EncapRoCEv2 || p.GRH != nil {
		r.flags |= fNet
		r.ipID, r.ttl = uint32(p.IPID)|p.FlowLabel, p.HopLimit
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
	r.origPort = p.OriginalSrcPort
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

// Close writes the rows still batched and the file's footer, and puts
// the file under its name; after an error it removes it instead.
func (pw *PacketWriter) Close() error {
	if len(pw.cur.recs) > 0 {
		pw.handOver()
	}
	close(pw.work)
	<-pw.done
	if err := pw.w.Close(); err != nil && pw.err == nil {
		pw.err = err
	}
	pw.err = pw.out.Commit(pw.err)
	return pw.err
}
