package fuzz_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/export"
	"github.com/roce-dissect/roce-dissect/internal/export/exporttest"
)

// maxExportFrames bounds the frames one FuzzParquetExport input feeds,
// so that minimizing an input stays cheap: the packet writer's batches of
// 1,024 rows and row groups are internal/export's tests' (every column
// over several batches and row groups), the hostile values this one's.
const maxExportFrames = 512

// FuzzParquetExport exports the analysis of a FuzzAnalyzerSequence
// input (its first 512 frames) as the command's --export does: a
// PacketWriter fed every packet as the analyzer returns it, then
// WriteReport of the report, into a temporary folder, the capture named
// name (any bytes a file name may have). Read back with Apache Arrow's
// reader (which, unlike DuckDB, does not check UTF-8), every table must
// hold the rows written, its text valid UTF-8 and the name as JSON writes
// it (a U+FFFD for each byte that is not UTF-8): the packets table a
// row per RDMA packet, in order, each column of the schema's first
// version (file, frame, time, encapsulation, addresses, VLAN, ECN,
// lengths, the BTH's fields, AETH, RETH, ICRC, findings, error) equal to
// the packet's; the flows, connections, findings and (when written)
// pause tables a row per flow, connection, finding and pause entry of
// the report, in order, with the capture's name and the identifying
// columns of each.
func FuzzParquetExport(f *testing.F) {
	for _, name := range []string{"write_bw_ipv4.pcap", "loss_nak_gobackn.pcap", "erspan3_vxlan.pcap", "pfc_storm.pcap",
		"rnr_corrupt_icrc.pcap", "ib.pcap", "header_only_snap128.pcap", "short_mad.pcap", "atomic_vlan.pcap"} {
		data, err := os.ReadFile("../testdata/" + name)
		require.NoError(f, err)
		frames := readFrames(f, name, data)
		f.Add(name, encodeSequence(frames[:min(len(frames), 12)])) // small seeds: see FuzzCapture
	}
	req, rep, read := cmSeeds(f)
	seq := encodeSequence([]seedFrame{req, rep, read, cnpSeed(f)})
	f.Add("cm <&>\"'.pcap", seq)
	cut := encodeSequence([]seedFrame{{read.linkType, read.data[:14+20+8+6]}})
	f.Add("", append(seq, cut...)) // a READ cut in its BTH: malformed, with its error
	f.Add("\xff\xfe.pcap", seq)    // a name that is not UTF-8
	f.Fuzz(func(t *testing.T, name string, in []byte) {
		defer watchdog(in)()
		frames := cutSequence(in)
		frames = frames[:min(len(frames), maxExportFrames)]
		want := jsonText(t, name) // the oracle of the name's text
		dir := t.TempDir()
		pw, err := export.NewPacketWriter(filepath.Join(dir, export.PacketsFile(0, 0)), name)
		require.NoError(t, err)
		a := analyze.New(analyze.Options{MaxFlows: 64, MaxFindings: 64, Interval: time.Microsecond})
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var rows []map[string]any
		for _, fr := range frames {
			if fr.back {
				ts = ts.Add(-time.Duration(len(fr.data)) * time.Microsecond)
			} else {
				ts = ts.Add(time.Duration(len(fr.data)) * time.Nanosecond)
			}
			ci := gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(fr.data), Length: len(fr.data) + fr.extra}
			p := a.Feed(ci, linkTypes[int(fr.linkType)%len(linkTypes)], fr.data)
			if p.IsRDMA {
				rows = append(rows, exporttest.PacketRow(want, p))
			}
			pw.Add(p, p.Frame)
		}
		require.NoError(t, pw.Close())
		rp := a.Finish()
		const capName = "run: "
		require.NoError(t, export.WriteReport(dir, capName+name, name, rp, nil))

		got := exporttest.ReadRows(t, filepath.Join(dir, export.PacketsFile(0, 0)), exporttest.PacketColumns...)
		require.Len(t, got, len(rows), "packets rows")
		for i, row := range rows {
			if !maps.Equal(row, got[i]) {
				require.Equal(t, row, got[i], "row %d (frame %v)", i, row["frame"])
			}
			requireUTF8(t, got[i], "packets row %d", i)
		}

		// The report's tables: a row per entry, in order.
		type table struct {
			rows int
			cols []string
		}
		tables := map[string]table{
			export.FlowsFile:       {len(rp.Flows), []string{"capture", "src", "dst", "dest_qp", "transport", "packets"}},
			export.ConnectionsFile: {len(rp.Connections), []string{"capture", "id", "state", "local_comm_id"}},
			export.FindingsFile:    {len(rp.Findings), []string{"capture", "file", "frame", "kind", "severity", "flow", "detail"}},
		}
		if _, err := os.Stat(filepath.Join(dir, "pause.parquet")); err == nil {
			tables["pause.parquet"] = table{len(rp.Pause), []string{"capture", "src_mac", "kind", "frames"}}
		}
		read := map[string][]map[string]any{}
		for file, tb := range tables {
			read[file] = exporttest.ReadRows(t, filepath.Join(dir, file), tb.cols...)
			require.Len(t, read[file], tb.rows, "%s rows", file)
			for i, r := range read[file] {
				require.Equal(t, capName+want, r["capture"], "%s row %d: capture", file, i)
				requireUTF8(t, r, "%s row %d", file, i)
			}
		}
		for i, fl := range rp.Flows {
			r := read[export.FlowsFile][i]
			require.Equal(t, map[string]any{"src": fl.Src, "dst": fl.Dst, "dest_qp": fl.DestQP, "transport": fl.Transport, "packets": fl.Packets},
				map[string]any{"src": r["src"], "dst": r["dst"], "dest_qp": r["dest_qp"], "transport": r["transport"], "packets": r["packets"]}, "flow %d", i)
		}
		for i, c := range rp.Connections {
			r := read[export.ConnectionsFile][i]
			require.Equal(t, []any{int32(c.ID), c.State, c.LocalCommID}, []any{r["id"], r["state"], r["local_comm_id"]}, "connection %d", i)
		}
		for i, fd := range rp.Findings {
			r := read[export.FindingsFile][i]
			file := jsonText(t, fd.File)
			if file == "" {
				file = want
			}
			require.Equal(t, []any{file, fd.Frame, string(fd.Kind), fd.Severity.String(), fd.FlowName(), fd.Detail},
				[]any{r["file"], r["frame"], r["kind"], r["severity"], r["flow"], r["detail"]}, "finding %d", i)
		}
		for i, p := range rp.Pause {
			if rows, ok := read["pause.parquet"]; ok {
				require.Equal(t, []any{p.SrcMAC, p.Kind, p.Frames}, []any{rows[i]["src_mac"], rows[i]["kind"], rows[i]["frames"]}, "pause %d", i)
			}
		}
	})
}

// jsonText is s as encoding/json writes it, read back: valid UTF-8, a
// U+FFFD for each byte that is not.
func jsonText(t *testing.T, s string) string {
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var out string
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// requireUTF8 requires every text value of a row read back to be valid
// UTF-8, as DuckDB requires it.
func requireUTF8(t *testing.T, row map[string]any, format string, args ...any) {
	for col, v := range row {
		if s, ok := v.(string); ok {
			require.True(t, utf8.ValidString(s), "%s: column %s: %q", fmt.Sprintf(format, args...), col, s)
		}
	}
}
