package cli_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const shared = "../../../shared/captures"

// run runs the command and returns its exit status, stdout and stderr.
func run(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.RunWithStdin(context.Background(), args, bytes.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func needShared(t *testing.T, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s absent: shared captures not available", path)
	}
	return path
}

func TestReportText(t *testing.T) {
	file := needShared(t, filepath.Join(shared, "softroce/rping.pcap"))
	code, out, errs := run(t, nil, "--color=never", file)
	require.Equal(t, 0, code, errs)
	for _, want := range []string{
		"65 frames: 65 RDMA, 0 other, 0 malformed",
		"Connections (CM)",
		// The oracle is the data itself: .62's requests to QP 0x2b start at
		// 16694589 (the REP's StartingPSN), .61's at 15782 (the REQ's).
		"10.1.16.62  0x00002c        16694589  ↔  10.1.16.61  0x00002b           15782  1024  disconnected",
		"RDMA-CM TCP port 7174",
		"65535 (placeholder)",
		"frames REQ 1 REP 2 RTU 3 DREQ 64 DREP 65",
		"10.1.16.62 → 10.1.16.61  0x00002b  RC",
		"No problems found.",
	} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "\x1b[", "no colour when not asked and not a terminal")
}

// TestGoldenText compares whole outputs, colour off, with the files of
// testdata/ (go test -run TestGoldenText -update rewrites them). The
// captures of ../../testdata are committed and always there; the shared
// ones are skipped when absent.
func TestGoldenText(t *testing.T) {
	for _, tc := range []struct {
		golden string
		args   []string
		file   string
		shared bool
	}{
		{"rping.txt", nil, "softroce/rping.pcap", true},
		{"rdma_read_bw.txt", nil, "softroce/rdma_read_bw.pcap", true},
		{"infiniband.txt", nil, "ib-erf/infiniband.pcap", true},
		{"loss_nak_gobackn.txt", nil, "../../testdata/loss_nak_gobackn.pcap", false},
		{"ecn_cnp.txt", nil, "../../testdata/ecn_cnp.pcap", false},
		{"rnr_corrupt_icrc.txt", nil, "../../testdata/rnr_corrupt_icrc.pcap", false},
		{"loss_nak_gobackn.P.txt", []string{"-P"}, "../../testdata/loss_nak_gobackn.pcap", false},
		{"rnr_corrupt_icrc.P.txt", []string{"-P"}, "../../testdata/rnr_corrupt_icrc.pcap", false},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			file := tc.file
			if tc.shared {
				file = needShared(t, filepath.Join(shared, tc.file))
			}
			args := append(append([]string{"--color=never"}, tc.args...), file)
			code, out, errs := run(t, nil, args...)
			require.Equal(t, 0, code, errs)
			golden := filepath.Join("testdata", tc.golden)
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), out)
		})
	}
}

func TestColour(t *testing.T) {
	file := needShared(t, filepath.Join(shared, "softroce/rping.pcap"))
	_, out, _ := run(t, nil, "--color=always", file)
	assert.Contains(t, out, "\x1b[32m", "healthy counts are green")
	t.Setenv("NO_COLOR", "1")
	_, out, _ = run(t, nil, file)
	assert.NotContains(t, out, "\x1b[")
	_, out, _ = run(t, nil, "--color=always", file)
	assert.Contains(t, out, "\x1b[", "an explicit --color=always wins over NO_COLOR")
}

func TestJSONReport(t *testing.T) {
	file := needShared(t, filepath.Join(shared, "softroce/rdma_cm.pcap"))
	code, out, _ := run(t, nil, "-o", "json", file)
	require.Equal(t, 0, code)
	var rep struct {
		Capture struct {
			Frames      int `json:"frames"`
			RoCEPackets int `json:"roce_packets"`
			Malformed   int `json:"malformed"`
		} `json:"capture"`
		Connections []struct {
			Requester struct {
				QPN         uint32 `json:"qpn"`
				StartingPSN uint32 `json:"starting_psn"`
				GID         string `json:"gid"`
				LID         uint16 `json:"lid"`
			} `json:"requester"`
			PathMTU int    `json:"path_mtu"`
			State   string `json:"state"`
		} `json:"connections"`
		Flows []struct {
			Src      string `json:"src"`
			DestQP   uint32 `json:"dest_qp"`
			Requests struct {
				Missing uint64 `json:"missing"`
			} `json:"requests"`
			MTU struct {
				Inferred *int `json:"inferred"`
			} `json:"mtu"`
		} `json:"flows"`
		Findings []json.RawMessage `json:"findings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, 96, rep.Capture.Frames)
	assert.Equal(t, 96, rep.Capture.RoCEPackets)
	require.Len(t, rep.Connections, 2)
	assert.Equal(t, uint32(61), rep.Connections[0].Requester.QPN)
	assert.Equal(t, "10.1.16.62", rep.Connections[0].Requester.GID)
	assert.Equal(t, 1024, rep.Connections[0].PathMTU)
	assert.Equal(t, "disconnected", rep.Connections[0].State)
	assert.Len(t, rep.Flows, 6)
	assert.Empty(t, rep.Findings)
}

func TestCSV(t *testing.T) {
	file := needShared(t, filepath.Join(shared, "softroce/rdma_write_bw.pcap"))
	code, out, _ := run(t, nil, "-o", "csv", file)
	require.Equal(t, 0, code)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, []string{"src", "dst", "dest_qp", "transport"}, rows[0][:4])
	assert.Equal(t, []string{"10.1.16.62", "10.1.16.61", "27", "RC"}, rows[1][:4])

	code, out, _ = run(t, nil, "-P", "-o", "csv", file)
	require.Equal(t, 0, code)
	rows, err = csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 21, "a header and the 20 RoCE packets")
	assert.Equal(t, "frame", rows[0][0])
	assert.Equal(t, "RC_RDMA_WRITE_FIRST", rows[1][5])
}

func TestPacketLines(t *testing.T) {
	file := needShared(t, filepath.Join(shared, "softroce/rping.pcap"))
	code, out, _ := run(t, nil, "-P", "--color=never", file)
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.Len(t, lines, 65)
	assert.Equal(t, "     1 0.000000000 10.1.16.62 → 10.1.16.61 UD_SEND_ONLY QP=0x000001 PSN=6 A QKey=0x80010000 SrcQP=0x000001 MAD CM Send REQ LocalQPN=0x00002c StartPSN=15782 MTU=1024 len=256 ICRC=ok", lines[0])
	assert.Contains(t, lines[5], "RC_RDMA_READ_REQUEST QP=0x00002c PSN=15782 A VA=0x00005b269382e5e0 RKey=0x00002095 DMALen=64")

	code, out, _ = run(t, nil, "-P", "--qp", "0x2b", file)
	require.Equal(t, 0, code)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		assert.Contains(t, l, "QP=0x00002b")
	}
	code, out, _ = run(t, nil, "-P", "-c", "3", file)
	require.Equal(t, 0, code)
	assert.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 3)
}

func TestVerboseTree(t *testing.T) {
	file := needShared(t, filepath.Join(shared, "softroce/rping.pcap"))
	code, out, _ := run(t, nil, "-V", "-c", "1", file)
	require.Equal(t, 0, code)
	for _, want := range []string{"Frame 1: 322 bytes on wire", "\nBase Transport Header, UD_SEND_ONLY, QP 0x000001, PSN ", "    Destination QP: 0x000001 (1)\n",
		"\nDETH - Datagram Extended Transport Header\n", "    Queue Key: 0x80010000 (GSI well-known Q_Key)\n", "\nMAD - Management Datagram, CM Send REQ\n",
		"    Local QPN: 0x00002c\n", "    Path MTU: 1024 bytes (3)\n", "\nInvariant CRC: 0x64e63802 [correct]\n"} {
		assert.Contains(t, out, want)
	}
}

func TestNDJSONKeys(t *testing.T) {
	file := needShared(t, filepath.Join(shared, "softroce/rping.pcap"))
	code, out, _ := run(t, nil, "-P", "-o", "json", file)
	require.Equal(t, 0, code)
	sc := bufio.NewScanner(strings.NewReader(out))
	var objs []map[string]any
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		objs = append(objs, m)
	}
	require.Len(t, objs, 65)
	req := objs[0]
	for _, k := range []string{"frame", "time", "src", "dst", "bth", "deth", "payload_len", "icrc", "mad"} {
		assert.Contains(t, req, k)
	}
	bth := req["bth"].(map[string]any)
	for _, k := range []string{"opcode", "opcode_name", "dest_qp", "psn", "ack_req", "fecn", "becn", "pkey"} {
		assert.Contains(t, bth, k)
	}
	mad := req["mad"].(map[string]any)
	assert.Contains(t, mad, "mgmt_class")
	assert.Contains(t, mad, "attribute_id")
	cmObj := mad["cm"].(map[string]any)
	for _, k := range []string{"type", "local_qpn", "starting_psn", "primary_local_gid", "primary_remote_gid", "primary_local_lid", "primary_remote_lid"} {
		assert.Contains(t, cmObj, k)
	}
	assert.Equal(t, "REQ", cmObj["type"])
	assert.Equal(t, float64(44), cmObj["local_qpn"])
	reth := objs[5]["reth"].(map[string]any)
	for _, k := range []string{"va", "rkey", "dma_length"} {
		assert.Contains(t, reth, k)
	}
	aeth := objs[4]["aeth"].(map[string]any)
	assert.Contains(t, aeth, "syndrome")
	assert.Contains(t, aeth, "msn")
	assert.Equal(t, "ok", objs[0]["icrc"].(map[string]any)["status"])
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(garbage, []byte("this is not a capture file\n"), 0o644))
	empty := filepath.Join(dir, "empty.pcap")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	// A pcap of link type 105 (802.11).
	wifi := filepath.Join(dir, "wifi.pcap")
	require.NoError(t, os.WriteFile(wifi, pcapBytes(105, [][]byte{make([]byte, 40)}), 0o644))

	tests := []struct {
		name    string
		args    []string
		code    int
		message string
	}{
		{"missing file", []string{filepath.Join(dir, "nope.pcap")}, 1, "nope.pcap: no such file or directory"},
		{"not a capture", []string{garbage}, 1, "notes.txt: capture: not a pcap or pcapng file"},
		{"empty file", []string{empty}, 1, "empty.pcap: "},
		{"unsupported link type", []string{wifi}, 1, "wifi.pcap: unsupported link type 105"},
		{"no file", nil, 2, "no capture file given"},
		{"stdin twice", []string{"-", "-"}, 2, `"-" (standard input) given more than once`},
		{"stdin twice among files", []string{"-", garbage, "-"}, 2, `"-" (standard input) given more than once`},
		{"bad flag", []string{"--bogus", garbage}, 2, "flag provided but not defined: -bogus"},
		{"bad output", []string{"-o", "xml", garbage}, 2, `-o "xml"`},
		{"bad qp", []string{"--qp", "0x1000000", garbage}, 2, "bad QP"},
		{"bad decode-as", []string{"--decode-as", "tcp.port=1", garbage}, 2, "udp.port=N"},
		{"bad progress", []string{"--progress", "always", garbage}, 2, `--progress "always": want auto or never`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := run(t, nil, tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, errs, tc.message)
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(errs), "roce-dissect:"), "one clear line: %q", errs)
		})
	}
}

// TestReadErrorInReport: a capture that could not be read to the end
// still gets its report, which says so instead of "No problems found.".
func TestReadErrorInReport(t *testing.T) {
	data, err := os.ReadFile("../../testdata/write_bw_ipv4.pcap")
	require.NoError(t, err)
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.pcap")
	require.NoError(t, os.WriteFile(cut, data[:5000], 0o644))
	missing := filepath.Join(dir, "nope.pcap")
	whole := "../../testdata/write_bw_ipv4.pcap"

	code, out, errs := run(t, nil, "--color=never", cut)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "cut.pcap: capture: truncated record at byte offset 4348")
	assert.Contains(t, out, "  6 frames: 6 RDMA")
	assert.Contains(t, out, "\n  error: capture: truncated record at byte offset 4348: packet data has 636 of 1082 bytes\n")
	assert.Contains(t, out, "\nNo problems found in what could be read.\n")
	assert.NotContains(t, out, "No problems found.")

	// A file that cannot be opened has no report (not an empty one);
	// the files that can are reported as if given alone.
	code, out, errs = run(t, nil, "--color=never", missing)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, "roce-dissect: "+missing+": capture: open "+missing+": no such file or directory\n", errs)

	code, out, errs = run(t, nil, "--color=never", whole, missing)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, missing)
	_, alone, _ := run(t, nil, "--color=never", whole)
	assert.Equal(t, alone, out)

	_, out, _ = run(t, nil, "--color=never", whole)
	assert.NotContains(t, out, "error:")
	assert.Contains(t, out, "\nNo problems found.\n")
}

// TestFindingCounts: the findings header writes its counts in good English.
func TestFindingCounts(t *testing.T) {
	code, out, _ := run(t, nil, "--color=never", "--qp", "0x5669", "../../testdata/loss_nak_gobackn.pcap")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "Findings (worst first): 0 errors, 3 warnings, 2 info\n")
	_, out, _ = run(t, nil, "--color=never", "../../testdata/loss_nak_gobackn.pcap")
	assert.Contains(t, out, "Findings (worst first): 1 error, 3 warnings, 2 info\n")
}

// TestICRCAsOnTheWire: -P, -V and -o json all show an ICRC as its bytes
// on the wire, as Wireshark does (tshark shows infiniband.invariant.crc
// 0x6d15e0db for this frame).
func TestICRCAsOnTheWire(t *testing.T) {
	file := "../../testdata/rnr_corrupt_icrc.pcap"
	_, out, _ := run(t, nil, "-P", "--color=never", file)
	assert.Contains(t, out, "PSN=304 A SE Imm=0x00001004 len=1024 ICRC=bad(0x6d15e0db, expected 0xc8b0457e) !\n")
	_, out, _ = run(t, nil, "-V", "--color=never", file)
	assert.Contains(t, out, "\nInvariant CRC: 0x6d15e0db [incorrect, should be 0xc8b0457e]\n")
	assert.Contains(t, out, "Frame 15: 1086 bytes on wire, 1086 captured, 0.000642000 s\n")
	assert.Contains(t, out, "Findings of this frame (1)\n    bad_icrc (error): ICRC 0x6d15e0db on the wire, 0xc8b0457e expected (RC_SEND_ONLY_WITH_IMMEDIATE PSN 304) [10.0.0.1 → 10.0.0.2 QP 0x005669]\n")
	assert.NotRegexp(t, `(?m) $`, out, "no line ends in a space (empty byte fields)")
	_, out, _ = run(t, nil, "-P", "-o", "json", file)
	assert.Contains(t, out, `"icrc":{"status":"bad","value":"0x6d15e0db","expected":"0xc8b0457e"}`)
}

func TestTruncatedCaptureStillReports(t *testing.T) {
	src := needShared(t, filepath.Join(shared, "softroce/rping.pcap"))
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	require.NoError(t, os.WriteFile(cut, data[:len(data)-50], 0o644))
	code, out, errs := run(t, nil, "--color=never", cut)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "cut.pcap: capture: truncated record at byte offset")
	assert.Contains(t, out, "64 frames: 64 RDMA", "the frames before the cut are reported")
	assert.Contains(t, out, "Connections (CM)")
}

func TestHelp(t *testing.T) {
	code, out, _ := run(t, nil, "--help")
	assert.Equal(t, 0, code)
	for _, f := range []string{"--packets", "--verbose", "--output", "--color", "-c N", "--qp", "--flow", "--decode-as", "--no-icrc", "--interval", "--plot", "--max-flows", "--progress", "Examples:"} {
		assert.Contains(t, out, f)
	}
	// Each example's command and its description are apart.
	assert.Contains(t, out, "roce-dissect -o json roce.pcap | jq .flows   the report as JSON\n")
}

func TestStdinAndGzip(t *testing.T) {
	src := needShared(t, filepath.Join(shared, "softroce/rdma_write_bw.pcap"))
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(data)
	require.NoError(t, zw.Close())
	for _, in := range [][]byte{data, gz.Bytes()} {
		code, out, errs := run(t, in, "--color=never", "-")
		require.Equal(t, 0, code, errs)
		assert.Contains(t, out, "Capture <stdin>")
		assert.Contains(t, out, "60 frames: 20 RDMA, 40 other")
	}
}

// TestSeveralFiles: two captures of one pair of hosts, one after the
// other (their time ranges follow one another, and they share no
// packet), are read as one capture: one report, a line per file, frames
// named by their file.
func TestSeveralFiles(t *testing.T) {
	a := needShared(t, filepath.Join(shared, "softroce/rdma_write_bw.pcap"))
	b := needShared(t, filepath.Join(shared, "softroce/rdma_read_bw.pcap"))
	code, out, _ := run(t, nil, "--color=never", b, a)
	require.Equal(t, 0, code)
	assert.Equal(t, 1, strings.Count(out, "Capture "), "one report")
	// Two perftest runs 2m16s apart, each of about a second: not the
	// pieces of one capture, but merged by time into one, with a note.
	assert.Contains(t, out, "Capture 2 files merged by time\n  120 frames: 40 RDMA, 80 other")
	assert.Regexp(t, `(?m)^    `+regexp.QuoteMeta(b)+` +60 frames  2026-06-16T14:58:17.319865Z to .*\n    `+regexp.QuoteMeta(a)+` +60 frames  2026-06-16T14:56:00.173707Z`, out)
	assert.Contains(t, out, "2m15.868s after "+a+" ends at 2026-06-16T14:56:01.451715Z, a longer pause than the 1.278s the files before it cover")
	code, out, _ = run(t, nil, "-o", "json", a, b)
	require.Equal(t, 0, code)
	var rep struct {
		Capture struct{ Frames int } `json:"capture"`
		Flows   []any                `json:"flows"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, 120, rep.Capture.Frames)
	assert.Len(t, rep.Flows, 4)
}

func TestPlot(t *testing.T) {
	file := needShared(t, filepath.Join(shared, "softroce/rdma_write_bw.pcap"))
	for _, name := range []string{"tput.svg", "tput.png"} {
		out := filepath.Join(t.TempDir(), name)
		code, _, errs := run(t, nil, "--plot", out, file)
		require.Equal(t, 0, code, errs)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		if strings.HasSuffix(name, ".svg") {
			assert.Contains(t, string(b), "<svg")
			assert.Contains(t, string(b), "10.1.16.62 → 10.1.16.61 QP 0x00001b")
		} else {
			assert.Equal(t, "\x89PNG", string(b[:4]))
		}
	}
}
