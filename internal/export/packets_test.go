package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// variedPackets are benchPackets(n) with, every few frames, what the
// columns' nulls and other values come from: a VLAN tag, a LID address,
// a frame without BTH (malformed, with its error), a truncated one, a
// NIC-rewritten source port, an unknown payload length, a NAK.
func variedPackets(n int) []analyze.Packet {
	ps := benchPackets(n)
	for i := range ps {
		p := &ps[i]
		switch i % 97 {
		case 3:
			p.VLAN = 100 + i%7
		case 5:
			p.Src, p.Dst, p.Encap = analyze.Addr{LID: uint16(i % 300), IsLID: true}, analyze.Addr{LID: 7, IsLID: true}, analyze.EncapIB
		case 11:
			p.BTH, p.AETH, p.RETH, p.PayloadLen = nil, nil, nil, -1
			p.Err = errors.New("short BTH: " + time.Duration(i).String())
		case 13:
			p.Truncated, p.CapLength, p.ICRC.Status = true, 128, layers.ICRCUnverifiable
		case 17:
			p.SrcPortRewritten = true
		case 19:
			p.PayloadLen = -1
		case 23:
			p.AETH = &layers.AETH{Syndrome: 0x60 | 1, MSN: uint32(i)} // NAK
			p.BTH.Opcode, p.BTH.FECN = layers.OpcodeRCAcknowledge, true
		case 31:
			p.BTH.BECN, p.BTH.AckReq = true, true
		case 37:
			p.BTH.SolicitedEvent, p.ECN = true, 3
		case 29:
			p.IsRDMA = false // not a row
		}
	}
	return ps
}

// want is the row of p as docs/parquet.md describes it, in the values
// Arrow reads (nil for null).
func want(file string, p *analyze.Packet) map[string]any {
	null := func(ok bool, v any) any {
		if !ok {
			return nil
		}
		return v
	}
	m := map[string]any{
		"file": file, "frame": p.Frame, "time": arrow.Timestamp(p.Time.UnixNano()), "encap": p.Encap.String(),
		"src": p.Src.String(), "dst": p.Dst.String(), "vlan": null(p.VLAN >= 0, int32(p.VLAN)), "ecn": p.ECN,
		"length": int32(p.Length), "cap_length": int32(p.CapLength), "payload_len": null(p.PayloadLen >= 0, int32(p.PayloadLen)),
		"icrc_port_rewritten": p.SrcPortRewritten, "truncated": p.Truncated, "findings": int32(p.Findings), "error": nil,
		"dest_qp": nil, "opcode": nil, "opcode_name": nil, "psn": nil, "ack_req": nil, "se": nil, "fecn": nil, "becn": nil, "pkey": nil, "icrc": nil,
		"aeth_type": nil, "aeth_msn": nil, "reth_dma_length": nil,
	}
	if b := p.BTH; b != nil {
		m["dest_qp"], m["opcode"], m["opcode_name"], m["psn"] = b.DestQP, uint8(b.Opcode), b.OpcodeName(), b.PSN
		m["ack_req"], m["se"], m["fecn"], m["becn"], m["pkey"], m["icrc"] = b.AckReq, b.SolicitedEvent, b.FECN, b.BECN, b.PKey, p.ICRC.Status.String()
	}
	if a := p.AETH; a != nil {
		m["aeth_type"], m["aeth_msn"] = a.Type().String(), a.MSN
	}
	if p.RETH != nil {
		m["reth_dma_length"] = p.RETH.DMALength
	}
	if p.Err != nil {
		m["error"] = p.Err.Error()
	}
	return m
}

// readBack reads path with Apache Arrow's Parquet reader (not the
// library that wrote it): one map per row, nil for a null.
func readBack(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	tbl, err := pqarrow.ReadTable(context.Background(), f, parquet.NewReaderProperties(memory.DefaultAllocator), pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	defer tbl.Release()
	rows := make([]map[string]any, tbl.NumRows())
	for i := range rows {
		rows[i] = map[string]any{}
	}
	for c := 0; c < int(tbl.NumCols()); c++ {
		col, row := tbl.Column(c), 0
		for _, chunk := range col.Data().Chunks() {
			for i := 0; i < chunk.Len(); i, row = i+1, row+1 {
				var v any
				if !chunk.IsNull(i) {
					v = chunk.(interface{ GetOneForMarshal(int) any }).GetOneForMarshal(i)
					switch a := chunk.(type) {
					case *array.Timestamp:
						v = a.Value(i)
					case *array.Uint64:
						v = a.Value(i)
					case *array.Uint32:
						v = a.Value(i)
					case *array.Uint16:
						v = a.Value(i)
					case *array.Uint8:
						v = a.Value(i)
					case *array.Int32:
						v = a.Value(i)
					}
				}
				rows[row][col.Name()] = v
			}
		}
	}
	return rows
}

// TestPacketWriterReadBack: every column of every row, over several
// batches and row groups, read back by Arrow, is the packet's field the
// schema documents, nulls included; non-RDMA frames leave no row.
func TestPacketWriterReadBack(t *testing.T) {
	for _, n := range []int{0, 1, batchRows, rowGroupRows + 3*batchRows + 5} {
		ps := variedPackets(n)
		path := filepath.Join(t.TempDir(), "sub", PacketsFile(0, 1))
		pw, err := NewPacketWriter(path, "cap.pcapng")
		require.NoError(t, err)
		var rows []map[string]any
		for i := range ps {
			pw.Add(&ps[i])
			if ps[i].IsRDMA {
				rows = append(rows, want("cap.pcapng", &ps[i]))
			}
		}
		require.NoError(t, pw.Close())
		got := readBack(t, path)
		require.Len(t, got, len(rows), "%d packets", n)
		for i := range rows {
			if !assert.Equal(t, rows[i], got[i], "%d packets: row %d", n, i) {
				break
			}
		}
	}
}
