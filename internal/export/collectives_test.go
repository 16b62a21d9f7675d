package export

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/export/exporttest"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// TestWriteReportCollectives: the collectives tables, read back with
// Arrow, hold what the JSON would say of a collective of a whole job (a
// link straggler with its receiver and why) and of one a host saw alone
// (unknown ranks, no first CTS, no S, busy time or straggler: nulls), in
// the values written by hand below; and no rows without NCCL.
func TestWriteReportCollectives(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 12661, time.UTC)
	at := func(ns int64) *time.Time { v := t0.Add(time.Duration(ns)); return &v }
	one, two := 1, 2
	res := &nccl.Result{Collectives: []nccl.Collective{
		{Index: 1, Kind: "all_reduce", Algorithm: "ring", Protocol: "simple", SizeBytes: ptr(uint64(1 << 20)),
			Links: []nccl.Link{{SenderRank: &one, ReceiverRank: &two, Bytes: 700000, Messages: 12, Steps: 12}},
			Start: t0, End: *at(131800), DurationNs: 131800, BusyNs: ptr(int64(131000)), AlgBWBps: ptr(64.5e9), BusBWBps: ptr(96.75e9),
			Arrivals:  []nccl.Arrival{{Rank: 1, FirstCTS: at(0), FirstData: at(800), LateNs: ptr(int64(0))}},
			Straggler: &nccl.Straggler{Rank: 1, ReceiverRank: &two, Kind: "link", LateNs: 90000, Why: "12 resent"}},
		{Index: 2, Kind: "unknown", Algorithm: "unknown", Protocol: "simple",
			Links: []nccl.Link{{SenderRank: &one, Bytes: 5, Messages: 1, Steps: 1}},
			Start: *at(5000000), End: *at(5002000), DurationNs: 2000,
			Arrivals: []nccl.Arrival{{Rank: 2}}},
	}}
	ts := func(ns int64) arrow.Timestamp { return arrow.Timestamp(t0.UnixNano() + ns) }
	for _, tc := range []struct {
		name                   string
		res                    *nccl.Result
		colls, links, arrivals []map[string]any
	}{
		{"no NCCL", nil, nil, nil, nil},
		{"two collectives", res,
			[]map[string]any{
				{"capture": "h.pcap", "index": int32(1), "kind": "all_reduce", "algorithm": "ring", "protocol": "simple",
					"size_bytes": uint64(1 << 20), "start": ts(0), "end": ts(131800), "duration_ns": int64(131800),
					"busy_ns": int64(131000), "algbw_bps": 64.5e9, "busbw_bps": 96.75e9,
					"straggler_rank": int32(1), "straggler_kind": "link", "straggler_late_ns": int64(90000),
					"straggler_receiver_rank": int32(2), "straggler_why": "12 resent"},
				{"capture": "h.pcap", "index": int32(2), "kind": "unknown", "algorithm": "unknown", "protocol": "simple",
					"size_bytes": nil, "start": ts(5000000), "end": ts(5002000), "duration_ns": int64(2000),
					"busy_ns": nil, "algbw_bps": nil, "busbw_bps": nil,
					"straggler_rank": nil, "straggler_kind": nil, "straggler_late_ns": nil,
					"straggler_receiver_rank": nil, "straggler_why": nil},
			},
			[]map[string]any{
				{"capture": "h.pcap", "index": int32(1), "sender_rank": int32(1), "receiver_rank": int32(2),
					"bytes": uint64(700000), "messages": uint64(12), "steps": uint64(12)},
				{"capture": "h.pcap", "index": int32(2), "sender_rank": int32(1), "receiver_rank": nil,
					"bytes": uint64(5), "messages": uint64(1), "steps": uint64(1)},
			},
			[]map[string]any{
				{"capture": "h.pcap", "index": int32(1), "rank": int32(1), "first_cts": ts(0), "first_data": ts(800), "late_ns": int64(0)},
				{"capture": "h.pcap", "index": int32(2), "rank": int32(2), "first_cts": nil, "first_data": nil, "late_ns": nil},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, WriteReport(dir, "h.pcap", "h.pcap", &analyze.Report{}, tc.res))
			assert.Equal(t, tc.colls, rowsOrNil(exporttest.ReadRows(t, filepath.Join(dir, CollectivesFile))))
			assert.Equal(t, tc.links, rowsOrNil(exporttest.ReadRows(t, filepath.Join(dir, CollectiveLinksFile))))
			assert.Equal(t, tc.arrivals, rowsOrNil(exporttest.ReadRows(t, filepath.Join(dir, CollectiveArrivalsFile))))
		})
	}
}

// rowsOrNil is rows, nil for none.
func rowsOrNil(rows []map[string]any) []map[string]any {
	if len(rows) == 0 {
		return nil
	}
	return rows
}
