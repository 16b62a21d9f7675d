package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/testenv"
)

// icrcVerdict is what a view says of one frame's ICRC: ok, bad or
// unverifiable ("" for a frame without a BTH), the UDP source port it
// verified with when the capture tool rewrote the port (0: not
// rewritten), and its value as the view prints it ("" when not shown).
type icrcVerdict struct {
	status string
	port   uint16
	value  string
}

// icrcFlowKey names a flow as the truth files and the JSON report do.
type icrcFlowKey struct {
	src, dst string
	qp       uint32
}

// icrcFlowCounts is a flow's ICRC figures.
type icrcFlowCounts struct {
	ok, bad, unverifiable, rewritten uint64
	ports                            string // space-separated, first seen first
}

// TestICRCEveryView feeds captures with a rewritten source port (a NIC
// sniffer's, one packet corrupted too), a bad ICRC, header-only frames
// and a malformed frame (a short MAD) through every view: -P, -V, -P -o json, -P -o csv and the
// Parquet packets table must say the same verdict, recovered port and
// value of each frame; the values are tshark's infiniband.invariant.crc;
// the flows of -o json, -o csv and the Parquet flows table count what the
// frames say, and the generator's truth file is the oracle of the counts
// and ports.
func TestICRCEveryView(t *testing.T) {
	tshark := testenv.Tshark(t)
	for _, name := range []string{"sniffer_src_port.pcap", "rnr_corrupt_icrc.pcap", "header_only_snap128.pcap", "short_mad.pcap"} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join("../../testdata", name)
			js, lines := icrcFromPacketJSON(t, file)
			require.NotEmpty(t, js)

			views := map[string]map[uint64]icrcVerdict{
				"-P":        icrcFromPacketText(t, file),
				"-V":        icrcFromTree(t, file, js),
				"-P -o csv": icrcFromPacketCSV(t, file),
			}
			dir := t.TempDir()
			code, _, errs := run(t, nil, "-o", "parquet", "--export", dir, file)
			require.Equal(t, 0, code, errs)
			views["--export packets"] = icrcFromParquet(t, dir)
			for view, got := range views {
				for frame, want := range js {
					g := got[frame]
					if view == "-P" {
						g.value, want.value = "", "" // -P shows the value of a bad ICRC only
					}
					assert.Equal(t, want, g, "%s: frame %d", view, frame)
				}
				assert.Len(t, got, len(js), view)
			}

			// The values are Wireshark's.
			ws, stderr, err := testenv.TsharkFields(tshark, file, "l", "frame.number", "infiniband.invariant.crc")
			require.NoError(t, err, stderr)
			compared := 0
			for _, line := range ws {
				cols := strings.Split(line, "|")
				n, err := strconv.ParseUint(cols[0], 10, 64)
				require.NoError(t, err)
				v, ok := js[n]
				switch {
				case !ok || v.value == "": // no BTH, or the capture cut the ICRC off
					assert.NotEqual(t, "ok", v.status, "frame %d", n)
				case cols[1] != "": // tshark stops at a short MAD
					assert.Equal(t, cols[1], v.value, "frame %d: ICRC as Wireshark shows it", n)
					compared++
				}
			}
			assert.Positive(t, compared)
			// Unverifiable is an ICRC the capture cut off: one it holds
			// is checked, a malformed frame's too.
			for n, v := range js {
				if v.value != "" {
					assert.NotEqual(t, "unverifiable", v.status, "frame %d: a whole ICRC", n)
				}
			}

			// The flows count what the frames say, as the generator's truth does.
			want := icrcFlowsFromTruth(t, file+".truth.json")
			assert.Equal(t, want, icrcFlowsFromFrames(lines, js), "frames summed per flow")
			assert.Equal(t, want, icrcFlowsFromReportJSON(t, file), "-o json")
			assert.Equal(t, want, icrcFlowsFromFlowCSV(t, file), "-o csv")
			// The Parquet flows table has the counts; the packets table each port.
			counts := map[icrcFlowKey]icrcFlowCounts{}
			for k, c := range want {
				c.ports = ""
				counts[k] = c
			}
			got := map[icrcFlowKey]icrcFlowCounts{}
			for _, r := range readParquet(t, filepath.Join(dir, "flows.parquet")) {
				n := func(k string) uint64 { v, _ := r[k].(float64); return uint64(v) }
				got[icrcFlowKey{r["src"].(string), r["dst"].(string), uint32(n("dest_qp"))}] = icrcFlowCounts{
					ok: n("icrc_ok"), bad: n("icrc_bad"), unverifiable: n("icrc_unverifiable"), rewritten: n("icrc_port_rewritten")}
			}
			assert.Equal(t, counts, got, "--export flows")
		})
	}
}

// icrcFromPacketJSON reads each frame's ICRC from -P -o json, and
// returns the lines too.
func icrcFromPacketJSON(t *testing.T, file string) (map[uint64]icrcVerdict, []map[string]any) {
	t.Helper()
	code, out, errs := run(t, nil, "-P", "-o", "json", file)
	require.Equal(t, 0, code, errs)
	m := map[uint64]icrcVerdict{}
	lines := jsonLines(t, out)
	for _, l := range lines {
		var v icrcVerdict
		if s, ok := get(l, "icrc", "status").(string); ok {
			v.status = s
		}
		if s, ok := get(l, "icrc", "value").(string); ok {
			v.value = s
		}
		if p, ok := get(l, "icrc", "original_src_port").(float64); ok {
			v.port = uint16(p)
		}
		m[uint64(l["frame"].(float64))] = v
	}
	return m, lines
}

// packetLineICRC reads a -P line's frame number and ICRC word.
var packetLineICRC = regexp.MustCompile(`^\s*(\d+) .* ICRC=(ok|bad|unverifiable)(?:\(src port (\d+)\))?`)

// icrcFromPacketText reads each frame's ICRC from -P.
func icrcFromPacketText(t *testing.T, file string) map[uint64]icrcVerdict {
	t.Helper()
	code, out, errs := run(t, nil, "--color=never", "-P", file)
	require.Equal(t, 0, code, errs)
	m := map[uint64]icrcVerdict{}
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		g := packetLineICRC.FindStringSubmatch(line)
		if g == nil {
			n, err := strconv.ParseUint(strings.Fields(line)[0], 10, 64)
			require.NoError(t, err, line)
			m[n] = icrcVerdict{}
			continue
		}
		n, _ := strconv.ParseUint(g[1], 10, 64)
		v := icrcVerdict{status: g[2]}
		if g[3] != "" {
			p, _ := strconv.ParseUint(g[3], 10, 16)
			v.port = uint16(p)
		}
		m[n] = v
	}
	return m
}

var (
	treeFrame = regexp.MustCompile(`^Frame (\d+):`)
	treeICRC  = regexp.MustCompile(`^Invariant CRC: (0x[0-9a-f]{8}) \[(.*)\]$`)
	treeOK    = regexp.MustCompile(`^correct(?:, computed with the original UDP source port (\d+): the capture tool rewrote it)?$`)
)

// icrcFromTree reads each frame's ICRC line from -V: a frame whose
// capture holds no ICRC has none, and is unverifiable when it has a BTH
// (js, the JSON view, says which frames have one).
func icrcFromTree(t *testing.T, file string, js map[uint64]icrcVerdict) map[uint64]icrcVerdict {
	t.Helper()
	code, out, errs := run(t, nil, "--color=never", "-V", file)
	require.Equal(t, 0, code, errs)
	m := map[uint64]icrcVerdict{}
	var frame uint64
	for _, line := range strings.Split(out, "\n") {
		if g := treeFrame.FindStringSubmatch(line); g != nil {
			frame, _ = strconv.ParseUint(g[1], 10, 64)
			if js[frame].status != "" {
				m[frame] = icrcVerdict{status: "unverifiable"}
			} else {
				m[frame] = icrcVerdict{}
			}
			continue
		}
		g := treeICRC.FindStringSubmatch(line)
		if g == nil {
			continue
		}
		v := icrcVerdict{value: g[1]}
		switch ok := treeOK.FindStringSubmatch(g[2]); {
		case ok != nil:
			v.status = "ok"
			if ok[1] != "" {
				p, _ := strconv.ParseUint(ok[1], 10, 16)
				v.port = uint16(p)
			}
		case strings.HasPrefix(g[2], "incorrect, should be "):
			v.status = "bad"
		case g[2] == "not verified":
			v.status = "unverifiable"
		default:
			t.Fatalf("frame %d: unexpected ICRC line %q", frame, line)
		}
		m[frame] = v
	}
	return m
}

// icrcFromPacketCSV reads each frame's ICRC from -P -o csv.
func icrcFromPacketCSV(t *testing.T, file string) map[uint64]icrcVerdict {
	t.Helper()
	code, out, errs := run(t, nil, "-P", "-o", "csv", file)
	require.Equal(t, 0, code, errs)
	m := map[uint64]icrcVerdict{}
	for _, r := range csvRecords(t, out) {
		n, err := strconv.ParseUint(r["frame"], 10, 64)
		require.NoError(t, err)
		v := icrcVerdict{status: r["icrc_status"], value: r["icrc_value"]}
		if s := r["icrc_original_src_port"]; s != "" {
			p, err := strconv.ParseUint(s, 10, 16)
			require.NoError(t, err)
			v.port = uint16(p)
		}
		m[n] = v
	}
	return m
}

// icrcFromParquet reads each frame's ICRC from the Parquet packets
// table in dir (icrc_value as the hex Wireshark and the JSON show).
func icrcFromParquet(t *testing.T, dir string) map[uint64]icrcVerdict {
	t.Helper()
	parts, err := filepath.Glob(filepath.Join(dir, "packets-*.parquet"))
	require.NoError(t, err)
	require.NotEmpty(t, parts)
	m := map[uint64]icrcVerdict{}
	for _, part := range parts {
		for _, r := range readParquet(t, part) {
			var v icrcVerdict
			if s, ok := r["icrc"].(string); ok {
				v.status = s
			}
			if x, ok := r["icrc_value"].(float64); ok {
				v.value = fmt.Sprintf("0x%08x", uint32(x))
			}
			if p, ok := r["icrc_original_src_port"].(float64); ok {
				v.port = uint16(p)
			}
			m[uint64(r["frame"].(float64))] = v
		}
	}
	return m
}

// icrcFlowsFromTruth reads the flows' ICRC figures of a truth file.
func icrcFlowsFromTruth(t *testing.T, path string) map[icrcFlowKey]icrcFlowCounts {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var truth struct {
		Flows []struct {
			Src    string `json:"src"`
			Dst    string `json:"dst"`
			DestQP uint32 `json:"dest_qp"`
			ICRC   struct {
				OK            uint64   `json:"ok"`
				Bad           uint64   `json:"bad"`
				Unverifiable  uint64   `json:"unverifiable"`
				PortRewritten uint64   `json:"port_rewritten"`
				Ports         []uint16 `json:"original_src_ports"`
			} `json:"icrc"`
		} `json:"flows"`
	}
	require.NoError(t, json.Unmarshal(b, &truth))
	m := map[icrcFlowKey]icrcFlowCounts{}
	for _, f := range truth.Flows {
		c := f.ICRC
		m[icrcFlowKey{f.Src, f.Dst, f.DestQP}] = icrcFlowCounts{ok: c.OK, bad: c.Bad, unverifiable: c.Unverifiable, rewritten: c.PortRewritten, ports: joinPorts(c.Ports)}
	}
	return m
}

func joinPorts(ports []uint16) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, " ")
}

// icrcFlowsFromFrames sums the frames' verdicts (js) per flow, with the
// flow of each frame from its -P -o json line; malformed frames count in
// none.
func icrcFlowsFromFrames(frames []map[string]any, js map[uint64]icrcVerdict) map[icrcFlowKey]icrcFlowCounts {
	m := map[icrcFlowKey]icrcFlowCounts{}
	ports := map[icrcFlowKey][]uint16{}
	frames = slices.Clone(frames)
	sort.Slice(frames, func(i, j int) bool { return frames[i]["frame"].(float64) < frames[j]["frame"].(float64) })
	for _, l := range frames {
		qp, ok := get(l, "bth", "dest_qp").(float64)
		if !ok || l["error"] != nil { // a malformed frame is no flow's
			continue
		}
		k := icrcFlowKey{l["src"].(string), l["dst"].(string), uint32(qp)}
		c := m[k]
		v := js[uint64(l["frame"].(float64))]
		switch v.status {
		case "ok":
			c.ok++
		case "bad":
			c.bad++
		default:
			c.unverifiable++
		}
		if v.port != 0 {
			c.rewritten++
			if !slices.Contains(ports[k], v.port) {
				ports[k] = append(ports[k], v.port)
			}
		}
		m[k] = c
	}
	for k, p := range ports {
		c := m[k]
		c.ports = joinPorts(p)
		m[k] = c
	}
	return m
}

// icrcFlowsFromReportJSON reads the flows' ICRC figures of -o json.
func icrcFlowsFromReportJSON(t *testing.T, file string) map[icrcFlowKey]icrcFlowCounts {
	t.Helper()
	code, out, errs := run(t, nil, "-o", "json", file)
	require.Equal(t, 0, code, errs)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	m := map[icrcFlowKey]icrcFlowCounts{}
	for _, x := range asList(rep["flows"]) {
		f := x.(map[string]any)
		n := func(k string) uint64 { v, _ := get(f, "icrc", k).(float64); return uint64(v) }
		var ports []uint16
		for _, p := range asList(get(f, "icrc", "original_src_ports")) {
			ports = append(ports, uint16(p.(float64)))
		}
		m[icrcFlowKey{f["src"].(string), f["dst"].(string), uint32(f["dest_qp"].(float64))}] = icrcFlowCounts{
			ok: n("ok"), bad: n("bad"), unverifiable: n("unverifiable"), rewritten: n("port_rewritten"), ports: joinPorts(ports)}
	}
	return m
}

// icrcFlowsFromFlowCSV reads the flows' ICRC figures of -o csv.
func icrcFlowsFromFlowCSV(t *testing.T, file string) map[icrcFlowKey]icrcFlowCounts {
	t.Helper()
	code, out, errs := run(t, nil, "-o", "csv", file)
	require.Equal(t, 0, code, errs)
	m := map[icrcFlowKey]icrcFlowCounts{}
	for _, r := range csvRecords(t, out) {
		n := func(k string) uint64 { v, _ := strconv.ParseUint(r[k], 10, 64); return v }
		m[icrcFlowKey{r["src"], r["dst"], uint32(n("dest_qp"))}] = icrcFlowCounts{
			ok: n("icrc_ok"), bad: n("icrc_bad"), unverifiable: n("icrc_unverifiable"), rewritten: n("icrc_port_rewritten"), ports: r["icrc_original_src_ports"]}
	}
	return m
}
