package exporttest

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// PacketColumns are the packets table's columns PacketRow gives: those
// every export has had.
var PacketColumns = []string{"file", "frame", "time", "encap", "src", "dst", "vlan", "ecn", "length", "cap_length",
	"dest_qp", "opcode", "opcode_name", "psn", "ack_req", "se", "fecn", "becn", "pkey",
	"payload_len", "aeth_type", "aeth_msn", "reth_dma_length", "icrc", "icrc_port_rewritten", "truncated", "findings", "error"}

// Null is v, or nil (a null) when not ok.
func Null(ok bool, v any) any {
	if !ok {
		return nil
	}
	return v
}

// PacketRow is the row of p in the packets table as docs/parquet.md
// describes it, in the values Arrow reads (nil for null): the columns of
// PacketColumns.
func PacketRow(file string, p *analyze.Packet) map[string]any {
	m := map[string]any{
		"file": file, "frame": p.Frame, "time": arrow.Timestamp(p.Time.UnixNano()), "encap": p.Encap.String(),
		"src": p.Src.String(), "dst": p.Dst.String(), "vlan": Null(p.VLAN >= 0, int32(p.VLAN)), "ecn": p.ECN,
		"length": int32(p.Length), "cap_length": int32(p.CapLength), "payload_len": Null(p.PayloadLen >= 0, int32(p.PayloadLen)),
		"icrc_port_rewritten": p.SrcPortRewritten, "truncated": p.Truncated, "findings": int32(p.Findings), "error": nil,
		"dest_qp": nil, "opcode": nil, "opcode_name": nil, "psn": nil, "ack_req": nil, "se": nil, "fecn": nil, "becn": nil,
		"pkey": nil, "icrc": nil, "aeth_type": nil, "aeth_msn": nil, "reth_dma_length": nil,
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

// ReadRows reads the columns cols (none: every column) of a Parquet
// file: one map per row, nil for a null.
func ReadRows(t testing.TB, path string, cols ...string) []map[string]any {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	require.NoError(t, err, path)
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err, path)
	schema := pf.MetaData().Schema
	var idx []int
	for i := range schema.NumColumns() {
		if len(cols) == 0 {
			idx = append(idx, i)
		}
	}
	for _, c := range cols {
		i := schema.ColumnIndexByName(c)
		require.GreaterOrEqual(t, i, 0, "%s: no column %s", path, c)
		idx = append(idx, i)
	}
	groups := make([]int, pf.NumRowGroups())
	for i := range groups {
		groups[i] = i
	}
	tbl, err := fr.ReadRowGroups(context.Background(), idx, groups)
	require.NoError(t, err, path)
	defer tbl.Release()
	require.Equal(t, pf.NumRows(), tbl.NumRows(), "%s: rows read", path)
	rows := make([]map[string]any, tbl.NumRows())
	for i := range rows {
		rows[i] = map[string]any{}
	}
	for c := 0; c < int(tbl.NumCols()); c++ {
		col, row := tbl.Column(c), 0
		for _, chunk := range col.Data().Chunks() {
			for i := 0; i < chunk.Len(); i, row = i+1, row+1 {
				rows[row][col.Name()] = value(chunk, i)
			}
		}
	}
	return rows
}

// value is a's i-th value as Arrow reads it (nil for a null).
func value(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Timestamp:
		return a.Value(i)
	case *array.Uint64:
		return a.Value(i)
	case *array.Uint32:
		return a.Value(i)
	case *array.Uint16:
		return a.Value(i)
	case *array.Uint8:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	}
	return a.(interface{ GetOneForMarshal(int) any }).GetOneForMarshal(i)
}
