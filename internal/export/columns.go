package export

import (
	"github.com/parquet-go/parquet-go"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

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
	case colICRCValue:
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].icrcVal))
		}
		want = fICRCValue
	case colIPID:
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].ipID))
		}
		want = fNet
	case colTTL:
		for i := range recs {
			vals[i] = parquet.Int32Value(int32(recs[i].ttl))
		}
		want = fNet
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
