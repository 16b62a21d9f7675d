package cli_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// writeManyQPs writes a pcap of n RoCE v2 RC SEND ONLY frames, each to a
// distinct destination QP (1, 2, …, n; n < 2^24) between the same two
// hosts, with correct ICRCs: n flows of one packet each.
func writeManyQPs(w io.Writer, n int) error { return writeQPs(w, 1, n) }

// writeQPs is writeManyQPs to QPs first, first+1, …, first+n-1.
func writeQPs(w io.Writer, first, n int) error {
	return writeEach(w, first, n, nil, func(i int) []gopacket.SerializableLayer {
		return []gopacket.SerializableLayer{&layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, DestQP: uint32(i), PSN: uint32(i)}, gopacket.Payload("0123456789abcdef")}
	})
}

// TestMaxFlows checks that --max-flows caps the flow table and that the
// report states what it dropped: 5,000 flows with --max-flows 1000.
func TestMaxFlows(t *testing.T) {
	file := filepath.Join(t.TempDir(), "qps.pcap")
	f, err := os.Create(file)
	require.NoError(t, err)
	require.NoError(t, writeManyQPs(f, 5000))
	require.NoError(t, f.Close())

	code, out, errs := run(t, nil, "--color=never", "--max-flows", "1000", file)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "5000 frames: 5000 RDMA, 0 other, 0 malformed")
	m := regexp.MustCompile(`flow table full: about (\d+) more flows \((\d+) packets\) counted but not tracked \(--max-flows\)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	dropped, _ := strconv.Atoi(m[1])
	assert.InEpsilon(t, 4000, dropped, 0.02, "linear counting is within about 1 %%")
	assert.Equal(t, "4000", m[2])

	code, out, _ = run(t, nil, "-o", "json", "--max-flows", "1000", file)
	require.Equal(t, 0, code)
	var rep struct {
		Capture struct {
			FlowsDropped          int `json:"flows_dropped"`
			PacketsOfDroppedFlows int `json:"packets_of_dropped_flows"`
		} `json:"capture"`
		Flows []json.RawMessage `json:"flows"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Len(t, rep.Flows, 1000)
	assert.Equal(t, 4000, rep.Capture.PacketsOfDroppedFlows)
	assert.InEpsilon(t, 4000, rep.Capture.FlowsDropped, 0.02)

	code, out, _ = run(t, nil, "--color=never", file)
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "flow table full", "the default cap (1,000,000) is not reached")
}

// TestMaxFlowsPerRun: --max-flows caps the flows of the run, not of each
// file: ten files of 2,000 distinct QPs each with --max-flows 5000 make a
// report of at most 5,000 flows (each file alone is under the cap), and the
// other 15,000 are counted as dropped.
func TestMaxFlowsPerRun(t *testing.T) {
	files := writeFiles(t, t.TempDir(), "qps%d.pcap", 10, func(w io.Writer, i int) error { return writeQPs(w, 1+2000*i, 2000) })
	code, out, errs := run(t, nil, append([]string{"-o", "json", "--max-flows", "5000"}, files...)...)
	require.Equal(t, 0, code, errs)
	var rep struct {
		Capture struct {
			RoCEPackets           int `json:"roce_packets"`
			FlowsDropped          int `json:"flows_dropped"`
			PacketsOfDroppedFlows int `json:"packets_of_dropped_flows"`
		} `json:"capture"`
		Flows []json.RawMessage `json:"flows"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, 20000, rep.Capture.RoCEPackets)
	assert.Equal(t, 5000, len(rep.Flows), "flows in the merged report")
	assert.Equal(t, 15000, rep.Capture.PacketsOfDroppedFlows)
	assert.InEpsilon(t, 15000, rep.Capture.FlowsDropped, 0.02)

	code, out, errs = run(t, nil, append([]string{"--color=never", "--max-flows", "5000"}, files...)...)
	require.Equal(t, 0, code, errs)
	assert.True(t, strings.Contains(out, "(15000 packets) counted but not tracked (--max-flows)"), "the text report of all files states the dropped packets")
}

// TestWriteManyQPs writes the capture of the memory check of
// docs/robustness.md (2,000,000 distinct QPs) to the file named by
// ROCE_DISSECT_MANY_QPS, when set:
//
//	ROCE_DISSECT_MANY_QPS=/tmp/qps.pcap go test ./internal/cli -run TestWriteManyQPs
//	/usr/bin/time -v roce-dissect --max-flows 100000 /tmp/qps.pcap
func TestWriteManyQPs(t *testing.T) {
	name := os.Getenv("ROCE_DISSECT_MANY_QPS")
	if name == "" {
		t.Skip("ROCE_DISSECT_MANY_QPS not set")
	}
	n := 2_000_000
	if s := os.Getenv("ROCE_DISSECT_MANY_QPS_N"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	first := 1 // ROCE_DISSECT_MANY_QPS_FIRST: the first QP (files of distinct QPs)
	if s := os.Getenv("ROCE_DISSECT_MANY_QPS_FIRST"); s != "" {
		var err error
		first, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	f, err := os.Create(name)
	require.NoError(t, err)
	require.NoError(t, writeQPs(f, first, n))
	require.NoError(t, f.Close())
}

// TestMaxFlowsSeveralFilesDeterministic: files analyzed at once share the
// --max-flows and --max-connections budgets; which file got a flow
// depended on their speed (found by review: two outputs in six runs).
// The report is now -j 1's every time.
func TestMaxFlowsSeveralFilesDeterministic(t *testing.T) {
	files := []string{"../../testdata/rnr_corrupt_icrc.pcap", "../../testdata/loss_nak_gobackn.pcap", "../../testdata/ecn_cnp.pcap"}
	for _, cap := range [][]string{{"--max-flows", "3"}, {"--max-flows", "5"}, {"--max-connections", "1"}} {
		args := append([]string{"-o", "json"}, cap...)
		code, want, _ := run(t, nil, append(append(args, "-j", "1"), files...)...)
		for i := range 8 {
			gcode, got, _ := run(t, nil, append(append(args, "-j", "3"), files...)...)
			assert.Equal(t, code, gcode, "%v run %d", cap, i)
			require.Equal(t, want, got, "%v run %d", cap, i)
		}
	}
}
