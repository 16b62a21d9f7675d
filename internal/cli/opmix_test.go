package cli_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/roce-dissect/roce-dissect/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opsKeys are the keys of a JSON flow's ops, as docs/json.md lists them.
var opsKeys = []string{"send", "write", "write_imm", "read_request", "read_response", "atomic", "atomic_ack", "ack", "cnp", "other"}

// wireOp is what the test knows of an opcode from the IBTA tables
// (Volume 1, 9.2 and 9.3), written here apart from the analyzer's: its
// ops key, the length of its extension headers and where its packet sits
// in a message ("" none).
type wireOp struct {
	class    string
	extLen   int
	position string
}

// wireOps are the opcodes of the captures TestFlowOps reads.
var wireOps = map[int]wireOp{
	0: {"send", 0, "first"}, 1: {"send", 0, "middle"}, 2: {"send", 0, "last"}, 3: {"send", 4, "last"},
	4: {"send", 0, "only"}, 5: {"send", 4, "only"},
	6: {"write", 16, "first"}, 7: {"write", 0, "middle"}, 8: {"write", 0, "last"}, 9: {"write_imm", 4, "last"},
	10: {"write", 16, "only"}, 11: {"write_imm", 20, "only"},
	12: {"read_request", 16, ""},
	13: {"read_response", 4, "first"}, 14: {"read_response", 0, "middle"}, 15: {"read_response", 4, "last"}, 16: {"read_response", 4, "only"},
	17: {"ack", 4, ""}, 18: {"atomic_ack", 12, ""}, 19: {"atomic", 28, ""}, 20: {"atomic", 28, ""},
	22: {"send", 4, "last"}, 23: {"send", 4, "only"},
	100: {"send", 8, "only"}, 101: {"send", 12, "only"},
}

// tsharkFlow is what tshark's fields say a flow carried.
type tsharkFlow struct {
	ops     map[string]float64
	packets float64
	sizes   map[uint64]float64 // messages by size bucket, keyed by its min
	cur     uint64             // bytes of the message open
}

// tsharkFlows reads each frame's addresses, destination QP, opcode, UDP
// length and pad count with tshark and returns the flows by "src dst
// qp": their packets by ops key and their messages (FIRST … LAST, ONLY;
// payload = UDP length − UDP header − BTH − extension headers − pad −
// ICRC) by power-of-two size bucket.
func tsharkFlows(t *testing.T, file string) map[string]*tsharkFlow {
	t.Helper()
	lines, stderr, err := testenv.TsharkFields(testenv.Tshark(t), file, "f",
		"ip.src", "ip.dst", "infiniband.bth.destqp", "infiniband.bth.opcode", "udp.length", "infiniband.bth.padcnt")
	require.NoError(t, err, stderr)
	flows := map[string]*tsharkFlow{}
	for _, l := range lines {
		f := strings.Split(l, "|")
		require.Len(t, f, 6, l)
		if f[3] == "" {
			continue // not RoCE
		}
		qp, err := strconv.ParseUint(f[2], 0, 32)
		require.NoError(t, err, l)
		code, err := strconv.Atoi(f[3])
		require.NoError(t, err, l)
		op, ok := wireOps[code]
		require.True(t, ok, "opcode %d is not in the test's table", code)
		udpLen, err := strconv.Atoi(f[4])
		require.NoError(t, err, l)
		pad, err := strconv.Atoi(f[5])
		require.NoError(t, err, l)
		k := fmt.Sprint(f[0], " ", f[1], " ", qp)
		fl := flows[k]
		if fl == nil {
			fl = &tsharkFlow{ops: map[string]float64{}, sizes: map[uint64]float64{}}
			flows[k] = fl
		}
		fl.packets++
		fl.ops[op.class]++
		payload := uint64(udpLen - 8 - 12 - op.extLen - pad - 4)
		switch op.position {
		case "first":
			fl.cur = payload
		case "middle":
			fl.cur += payload
		case "last", "only":
			if op.position == "only" {
				fl.cur = 0
			}
			size := fl.cur + payload
			fl.cur = 0
			lo := uint64(0)
			if size > 0 {
				lo = 1 << (bits.Len64(size) - 1)
			}
			fl.sizes[lo]++
		}
	}
	return flows
}

// TestFlowOps: each flow's packets by operation and messages by size
// agree with what tshark's opcodes and lengths say, frame by frame, in
// the JSON report (-j 1 and -j 3), the CSV flow table and the Parquet
// flows table (read back with Arrow); the ops add up to the flow's
// packets and, on the generator's captures, the generator's truth.
func TestFlowOps(t *testing.T) {
	for _, name := range []string{"atomic_vlan.pcap", "read_bw.pcap", "mix_small.pcap", "ud.pcap"} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join("..", "..", "testdata", name)
			want := tsharkFlows(t, file)
			var truth struct {
				Flows []struct {
					Src     string  `json:"src"`
					Dst     string  `json:"dst"`
					DestQP  uint32  `json:"dest_qp"`
					Packets float64 `json:"packets"`
				} `json:"flows"`
			}
			tj, err := os.ReadFile(file + ".truth.json")
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(tj, &truth))
			require.Len(t, want, len(truth.Flows))
			for _, tf := range truth.Flows {
				w := want[fmt.Sprint(tf.Src, " ", tf.Dst, " ", tf.DestQP)]
				require.NotNil(t, w, "%s → %s QP %d: tshark has no such flow", tf.Src, tf.Dst, tf.DestQP)
				assert.Equal(t, tf.Packets, w.packets, "tshark and the truth count the flow's packets alike")
			}

			var flows []map[string]any
			for _, jobs := range []string{"1", "3"} {
				code, out, errs := run(t, nil, "-o", "json", "-j", jobs, file)
				require.Equal(t, 0, code, errs)
				var rep map[string]any
				require.NoError(t, json.Unmarshal([]byte(out), &rep))
				fs := rep["flows"].([]any)
				require.Len(t, fs, len(want))
				flows = flows[:0]
				for _, f := range fs {
					flows = append(flows, f.(map[string]any))
				}
				for _, f := range flows {
					label := fmt.Sprint(f["src"], " ", f["dst"], " ", f["dest_qp"])
					w := want[label]
					require.NotNil(t, w, label)
					ops, ok := f["ops"].(map[string]any)
					require.True(t, ok, "-j %s %s: no ops", jobs, label)
					require.Len(t, ops, len(opsKeys), label)
					sum := 0.0
					for _, k := range opsKeys {
						assert.Equal(t, w.ops[k], ops[k], "-j %s %s: ops.%s", jobs, label, k)
						sum += ops[k].(float64)
					}
					assert.Equal(t, f["packets"], sum, "-j %s %s: the ops add up to the packets", jobs, label)
					got := map[uint64]float64{}
					for _, b := range asList(get(f, "messages", "size_buckets")) {
						b := b.(map[string]any)
						lo, hi := uint64(b["min"].(float64)), uint64(b["max"].(float64))
						assert.Equal(t, max(2*lo, 1)-1, hi, "-j %s %s: bucket %d", jobs, label, lo)
						got[lo] = b["count"].(float64)
					}
					assert.Equal(t, w.sizes, got, "-j %s %s: messages by size", jobs, label)
				}
			}

			// CSV: the same counts, in the columns at the end.
			code, out, errs := run(t, nil, "-o", "csv", file)
			require.Equal(t, 0, code, errs)
			var rows [][]string
			rows, err = csv.NewReader(strings.NewReader(out)).ReadAll()
			require.NoError(t, err)
			require.Len(t, rows, len(flows)+1)
			col := map[string]int{}
			for i, h := range rows[0] {
				col[h] = i
			}
			dir := t.TempDir()
			code, _, errs = run(t, nil, "-o", "parquet", "--export", dir, file)
			require.Equal(t, 0, code, errs)
			prows := readParquet(t, filepath.Join(dir, "flows.parquet"))
			require.Len(t, prows, len(flows))
			for i, f := range flows {
				label := fmt.Sprint(f["src"], " ", f["dst"], " ", f["dest_qp"])
				row := rows[i+1]
				for _, k := range opsKeys {
					assert.Equal(t, strconv.FormatFloat(get(f, "ops", k).(float64), 'f', -1, 64), row[col["ops_"+k]], "CSV %s: ops_%s", label, k)
					assert.Equal(t, get(f, "ops", k), prows[i]["ops_"+k], "Parquet %s: ops_%s", label, k)
				}
				var buckets []string
				for _, b := range asList(get(f, "messages", "size_buckets")) {
					b := b.(map[string]any)
					buckets = append(buckets, fmt.Sprintf("%v-%v:%v", b["min"], b["max"], b["count"]))
				}
				assert.Equal(t, strings.Join(buckets, " "), row[col["message_size_buckets"]], "CSV %s", label)
				assert.Equal(t, strings.Join(buckets, " "), prows[i]["message_size_buckets"], "Parquet %s", label)
			}
		})
	}
}

// TestTextNamesWhatFlowsCarried: the text report names what a flow of no
// payload carried (its atomics, their ACKs, READ requests, ACKs) in the
// PAYLOAD cell, where it said "0 B".
func TestTextNamesWhatFlowsCarried(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string // flow, then the word in its row
	}{
		{"atomic_vlan.pcap", []string{"10.0.0.1 → 10.0.0.2  0x005669", "atomics", "10.0.0.2 → 10.0.0.1  0x005668", "atomic ACKs"}},
		{"read_bw.pcap", []string{"10.0.0.1 → 10.0.0.2  0x005669", "READ requests"}},
		{"loss_nak_gobackn.pcap", []string{"10.0.0.2 → 10.0.0.1  0x005668", "ACKs"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			code, out, errs := run(t, nil, "--color=never", filepath.Join("..", "..", "testdata", tc.file))
			require.Equal(t, 0, code, errs)
			for i := 0; i < len(tc.want); i += 2 {
				var line string
				for _, l := range strings.Split(out, "\n") {
					if strings.Contains(l, tc.want[i]) {
						line = l
						break
					}
				}
				require.NotEmpty(t, line, "no row of %s:\n%s", tc.want[i], out)
				f := strings.Fields(line)
				// SRC → DST QP TRANSPORT PACKETS PAYLOAD…: the payload cell
				// starts at the seventh field.
				assert.Equal(t, tc.want[i+1], strings.Join(f[6:6+len(strings.Fields(tc.want[i+1]))], " "), line)
				assert.NotContains(t, line, " 0 B ", line)
			}
		})
	}
}
