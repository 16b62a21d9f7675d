package synth

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/roce-dissect/roce-dissect/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/testenv"
)

var tsharkFields = []string{
	"frame.number",                // 0
	"infiniband.bth.opcode",       // 1
	"infiniband.bth.destqp",       // 2
	"infiniband.bth.psn",          // 3
	"infiniband.bth.a",            // 4
	"infiniband.reth.dmalen",      // 5
	"infiniband.aeth.syndrome",    // 6
	"infiniband.aeth.msn",         // 7
	"infiniband.deth.q_key",       // 8
	"infiniband.deth.srcqp",       // 9
	"infiniband.mad.attributeid",  // 10
	"infiniband.cm.req.localqpn",  // 11
	"infiniband.cm.req.startpsn",  // 12
	"infiniband.cm.rep.localqpn",  // 13
	"infiniband.cm.rep.startpsn",  // 14
	"infiniband.cm.req.pppmtu",    // 15
	"infiniband.reth.va",          // 16
	"infiniband.atomiceth.swapdt", // 17
}

func hasHeader(op layers.Opcode, h interface{ String() string }) bool {
	for _, x := range op.Headers() {
		if x.String() == h.String() {
			return true
		}
	}
	return false
}

// TestTshark has tshark decode the golden scenarios and compares the
// BTH/RETH/AETH/DETH/CM fields with what the generator wrote and with the
// truth. Skipped without tshark.
func TestTshark(t *testing.T) {
	tshark := testenv.Tshark(t)
	dir := t.TempDir()
	for _, gf := range Golden() {
		t.Run(gf.Name, func(t *testing.T) {
			t.Parallel()
			cfg, _, _, err := ParseArgs(gf.Args)
			require.NoError(t, err)
			capture, tr, infos := generate(t, cfg)
			lines := tsharkGolden(t, tshark, filepath.Join(dir, gf.Name), capture, cfg.Encap)
			require.Len(t, lines, len(infos))
			perQP := map[uint32]int{}
			for i, line := range lines {
				f := strings.Split(line, "|")
				require.Len(t, f, len(tsharkFields))
				fi := infos[i]
				msg := gf.Name + " frame " + f[0]
				if fi.Pause != nil {
					continue // no BTH: TestPauseTshark compares pause frames with tshark
				}
				truncated := fi.CaptureLength < fi.Length || fi.ToolCut
				checkTsharkBTH(t, f, fi, msg)
				if !fi.Malformed {
					perQP[uint32(tsharkNum(t, f[2]))]++
				}
				checkTsharkExtHeaders(t, f, fi, truncated, msg)
				if fi.CM == "" || truncated || fi.Malformed || cfg.ShortMAD > 0 {
					continue // a malformed REQ makes no connection to compare with
				}
				checkTsharkCM(t, f, fi, tr, msg)
			}
			// Packets per DestQP as tshark counts them = the truth's flows.
			want := map[uint32]int{}
			for _, fl := range tr.Flows {
				want[fl.DestQP] += fl.Packets
			}
			assert.Equal(t, want, perQP)
		})
	}
}

// tsharkGolden writes capture to path and returns tshark's tsharkFields
// of its frames; it skips the test when this tshark cannot read the
// encapsulation's captures.
func tsharkGolden(t *testing.T, tshark, path string, capture []byte, encap Encap) []string {
	t.Helper()
	require.NoError(t, os.WriteFile(path, capture, 0o644))
	lines, stderr, err := testenv.TsharkFields(tshark, path, "f", tsharkFields...)
	if err != nil {
		for l := range strings.Lines(stderr) {
			if strings.Contains(l, "unknown or unsupported") {
				t.Skipf("this tshark cannot read %s captures: %s", encap, strings.TrimSpace(l))
			}
		}
		t.Fatalf("tshark: %v: %s", err, stderr)
	}
	return lines
}

// tsharkNum parses a number tshark printed (decimal or 0x hex).
func tsharkNum(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 0, 64)
	require.NoError(t, err, "%q", s)
	return v
}

// checkTsharkBTH compares tshark's BTH fields f of a frame with the
// opcode, destination QP, PSN and AckReq the generator wrote (fi).
func checkTsharkBTH(t *testing.T, f []string, fi FrameInfo, msg string) {
	t.Helper()
	require.NotEmpty(t, f[1], msg)
	assert.Equal(t, uint64(fi.Opcode), tsharkNum(t, f[1]), msg)
	assert.Equal(t, uint64(fi.DestQP), tsharkNum(t, f[2]), msg)
	assert.Equal(t, uint64(fi.PSN), tsharkNum(t, f[3]), msg)
	assert.Equal(t, fi.AckReq, f[4] == "1", msg)
}

// checkTsharkExtHeaders compares tshark's RETH, AETH, DETH and
// AtomicETH fields f of a frame with what the generator wrote (fi), for
// each header the opcode has and tshark decoded (of a truncated frame
// tshark may not reach it).
func checkTsharkExtHeaders(t *testing.T, f []string, fi FrameInfo, truncated bool, msg string) {
	t.Helper()
	decoded := func(h interface{ String() string }, field int) bool {
		return hasHeader(fi.Opcode, h) && (f[field] != "" || !truncated)
	}
	if decoded(layers.LayerTypeRETH, 5) {
		assert.Equal(t, uint64(fi.DMALength), tsharkNum(t, f[5]), msg)
		assert.Equal(t, fi.VA, tsharkNum(t, f[16]), msg)
	}
	if decoded(layers.LayerTypeAETH, 6) {
		assert.Equal(t, uint64(fi.Syndrome), tsharkNum(t, f[6]), msg)
		assert.Equal(t, uint64(fi.MSN), tsharkNum(t, f[7]), msg)
	}
	if decoded(layers.LayerTypeDETH, 8) {
		assert.Equal(t, uint64(fi.QKey), tsharkNum(t, f[8]), msg)
		assert.Equal(t, uint64(fi.SrcQP), tsharkNum(t, f[9]), msg)
	}
	if decoded(layers.LayerTypeAtomicETH, 17) {
		assert.Equal(t, fi.VA, tsharkNum(t, f[16]), msg)
	}
}

// checkTsharkCM compares tshark's CM fields f of a whole, well-formed CM
// frame with the message the generator wrote (fi) and, for a REQ or a
// REP, with the truth's connection of its QPN: the starting PSN, the MTU
// (REQ) and the sender's IP.
func checkTsharkCM(t *testing.T, f []string, fi FrameInfo, tr *Truth, msg string) {
	t.Helper()
	attr := map[string]uint64{"REQ": attrREQ, "REP": attrREP, "RTU": attrRTU, "DREQ": attrDREQ, "DREP": attrDREP}[fi.CM]
	assert.Equal(t, attr, tsharkNum(t, f[10]), msg)
	// CM QPNs, starting PSNs and MTU are the truth's connection.
	var conn *Connection
	for j := range tr.Connections {
		c := &tr.Connections[j]
		if (fi.CM == "REQ" && uint64(*c.Requester.QPN) == tsharkNum(t, f[11])) || (fi.CM == "REP" && uint64(*c.Responder.QPN) == tsharkNum(t, f[13])) {
			conn = c
		}
	}
	switch fi.CM {
	case "REQ":
		require.NotNil(t, conn, msg)
		assert.Equal(t, uint64(*conn.Requester.StartingPSN), tsharkNum(t, f[12]), msg)
		enum, _ := mtuEnum(*conn.PathMTU)
		assert.Equal(t, uint64(enum), tsharkNum(t, f[15]), msg)
		assert.Equal(t, conn.Requester.IP, fi.Src, msg)
	case "REP":
		require.NotNil(t, conn, msg)
		assert.Equal(t, uint64(*conn.Responder.StartingPSN), tsharkNum(t, f[14]), msg)
		assert.Equal(t, conn.Responder.IP, fi.Src, msg)
	}
}
