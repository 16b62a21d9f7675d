package export

import (
	"github.com/parquet-go/parquet-go"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// columnValues fills vals, one per record, with column col's values:
// the column's fill (a loop over the batch), then for an optional
// column the definition levels (nulls where a record lacks the header).
func (pw *PacketWriter) columnValues(col int, b *packetBatch, vals []parquet.Value) []parquet.Value {
	c := &packetColumnFills[col]
	c.fill(pw, b, vals)
	if c.want != 0 {
		setPresent(b.recs, c.want, vals)
	}
	return vals
}

// setPresent gives vals[i] a definition level of 1 where record i has
// all the flags want, and makes it null where it does not.
func setPresent(recs []packetRec, want uint16, vals []parquet.Value) {
	for i := range recs {
		if recs[i].flags&want == want {
			vals[i].SetDefinitionLevel(1)
		} else {
			vals[i] = parquet.Value{}
		}
	}
}

// columnFill is how columnValues makes one column's values.
type columnFill struct {
	// fill sets vals[i] for each record i of the batch (a loop per
	// column, not a call per value).
	fill func(pw *PacketWriter, b *packetBatch, vals []parquet.Value)
	// want is, for an optional column, the flags a record needs for a
	// value; 0 for a column whose fill sets its nulls itself.
	want uint16
}

// packetColumnFills is the fill of each column of the packets table, by
// column; a new column needs its entry here (TestPacketColumnFills).
var packetColumnFills = [numPacketColumns]columnFill{
	colFile: {fill: func(pw *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.ByteArrayValue(pw.file)
		}
	}},
	colFrame: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int64Value(int64(recs[i].frame))
		}
	}},
	colTime: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int64Value(recs[i].time)
		}
	}},
	colEncap: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.ByteArrayValue(bytesOf(analyze.Encap(recs[i].encap).String()))
		}
	}},
	colSrc: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.ByteArrayValue(b.text[recs[i].src])
		}
	}},
	colDst: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.ByteArrayValue(b.text[recs[i].dst])
		}
	}},
	colVLAN: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = optionalInt32(recs[i].vlan)
		}
	}},
	colECN: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].ecn))
		}
	}},
	colLength: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int32Value(recs[i].length)
		}
	}},
	colCapLength: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int32Value(recs[i].capLength)
		}
	}},
	colDestQP: {want: fBTH, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].destQP))
		}
	}},
	colOpcode: {want: fBTH, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].op & 0xff))
		}
	}},
	colOpcodeName: {want: fBTH, fill: func(pw *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.ByteArrayValue(pw.ops[recs[i].op])
		}
	}},
	colPSN: {want: fBTH, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].psn))
		}
	}},
	colAckReq: {want: fBTH, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) { flagValues(b.recs, fAckReq, vals) }},
	colSE:     {want: fBTH, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) { flagValues(b.recs, fSE, vals) }},
	colFECN:   {want: fBTH, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) { flagValues(b.recs, fFECN, vals) }},
	colBECN:   {want: fBTH, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) { flagValues(b.recs, fBECN, vals) }},
	colPKey: {want: fBTH, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].pkey))
		}
	}},
	colPayloadLen: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = optionalInt32(recs[i].payloadLen)
		}
	}},
	colAETHType: {want: fAETH, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.ByteArrayValue(bytesOf(layers.AckType(recs[i].aethType).String()))
		}
	}},
	colAETHMSN: {want: fAETH, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].msn))
		}
	}},
	colRETHLength: {want: fRETH, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].dmaLen))
		}
	}},
	colICRC: {want: fBTH, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.ByteArrayValue(bytesOf(layers.ICRCStatus(recs[i].icrc).String()))
		}
	}},
	colPortRewrite: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) { flagValues(b.recs, fPortRewrite, vals) }},
	colTruncated:   {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) { flagValues(b.recs, fTruncated, vals) }},
	colFindings: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int32Value(recs[i].findings)
		}
	}},
	colError: {want: fErr, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			if recs[i].flags&fErr != 0 {
				vals[i] = parquet.ByteArrayValue(bytesOf(b.errs[recs[i].errIdx]))
			}
		}
	}},
	colEncapsulation: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) { wrapValues(colEncapsulation, b, vals) }},
	colMirrorSrc:     {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) { wrapValues(colMirrorSrc, b, vals) }},
	colMirrorSession: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) { wrapValues(colMirrorSession, b, vals) }},
	colTunnelID:      {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) { wrapValues(colTunnelID, b, vals) }},
	colTunnelIDName:  {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) { wrapValues(colTunnelIDName, b, vals) }},
	colPriority: {fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			if p := int(recs[i].prio) + 1; uint(p) < uint(len(priorityValues)) {
				vals[i] = priorityValues[p]
			} else {
				vals[i] = optionalInt32(int32(recs[i].prio))
			}
		}
	}},
	colICRCValue: {want: fICRCValue, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].icrcVal))
		}
	}},
	colIPID: {want: fNet, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].ipID))
		}
	}},
	colTTL: {want: fNet, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].ttl))
		}
	}},
	colICRCOrigPort: {want: fPortRewrite, fill: func(_ *PacketWriter, b *packetBatch, vals []parquet.Value) {
		recs := b.recs
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].origPort))
		}
	}},
}

// flagValues fills vals with a boolean column holding the record flag
// bit: true where the record has it.
func flagValues(recs []packetRec, bit uint16, vals []parquet.Value) {
	for i := range recs {
		vals[i] = parquet.BooleanValue(recs[i].flags&bit != 0)
	}
}
