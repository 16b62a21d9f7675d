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
			path := filepath.Join(dir, gf.Name)
			require.NoError(t, os.WriteFile(path, capture, 0o644))
			lines, stderr, err := testenv.TsharkFields(tshark, path, "f", tsharkFields...)
			if err != nil {
				for l := range strings.Lines(stderr) {
					if strings.Contains(l, "unknown or unsupported") {
						t.Skipf("this tshark cannot read %s captures: %s", cfg.Encap, strings.TrimSpace(l))
					}
				}
				t.Fatalf("tshark: %v: %s", err, stderr)
			}
			require.Len(t, lines, len(infos))
			num := func(s string) uint64 {
				v, err := strconv.ParseUint(s, 0, 64)
				require.NoError(t, err, "%q", s)
				return v
			}
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
				require.NotEmpty(t, f[1], msg)
				assert.Equal(t, uint64(fi.Opcode), num(f[1]), msg)
				assert.Equal(t, uint64(fi.DestQP), num(f[2]), msg)
				assert.Equal(t, uint64(fi.PSN), num(f[3]), msg)
				assert.Equal(t, fi.AckReq, f[4] == "1", msg)
				if !fi.Malformed {
					perQP[uint32(num(f[2]))]++
				}
				if hasHeader(fi.Opcode, layers.LayerTypeRETH) && (f[5] != "" || !truncated) {
					assert.Equal(t, uint64(fi.DMALength), num(f[5]), msg)
					assert.Equal(t, fi.VA, num(f[16]), msg)
				}
				if hasHeader(fi.Opcode, layers.LayerTypeAETH) && (f[6] != "" || !truncated) {
					assert.Equal(t, uint64(fi.Syndrome), num(f[6]), msg)
					assert.Equal(t, uint64(fi.MSN), num(f[7]), msg)
				}
				if hasHeader(fi.Opcode, layers.LayerTypeDETH) && (f[8] != "" || !truncated) {
					assert.Equal(t, uint64(fi.QKey), num(f[8]), msg)
					assert.Equal(t, uint64(fi.SrcQP), num(f[9]), msg)
				}
				if hasHeader(fi.Opcode, layers.LayerTypeAtomicETH) && (f[17] != "" || !truncated) {
					assert.Equal(t, fi.VA, num(f[16]), msg)
				}
				if fi.CM == "" || truncated || fi.Malformed || cfg.ShortMAD > 0 {
					continue // a malformed REQ makes no connection to compare with
				}
				attr := map[string]uint64{"REQ": attrREQ, "REP": attrREP, "RTU": attrRTU, "DREQ": attrDREQ, "DREP": attrDREP}[fi.CM]
				assert.Equal(t, attr, num(f[10]), msg)
				// CM QPNs, starting PSNs and MTU are the truth's connection.
				var conn *Connection
				for j := range tr.Connections {
					c := &tr.Connections[j]
					if (fi.CM == "REQ" && uint64(*c.Requester.QPN) == num(f[11])) || (fi.CM == "REP" && uint64(*c.Responder.QPN) == num(f[13])) {
						conn = c
					}
				}
				switch fi.CM {
				case "REQ":
					require.NotNil(t, conn, msg)
					assert.Equal(t, uint64(*conn.Requester.StartingPSN), num(f[12]), msg)
					enum, _ := mtuEnum(*conn.PathMTU)
					assert.Equal(t, uint64(enum), num(f[15]), msg)
					assert.Equal(t, conn.Requester.IP, fi.Src, msg)
				case "REP":
					require.NotNil(t, conn, msg)
					assert.Equal(t, uint64(*conn.Responder.StartingPSN), num(f[14]), msg)
					assert.Equal(t, conn.Responder.IP, fi.Src, msg)
				}
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
