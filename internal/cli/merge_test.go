package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/export"
	"github.com/roce-dissect/roce-dissect/internal/export/exporttest"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/testenv"
)

// TestMergedByTime: files that are neither the pieces of one capture nor
// capture points of one traffic are merged by time as one capture. The
// oracle is mergecap (Wireshark's): the report of the files is, at every
// -j, the report of the one file mergecap merges them into, each frame
// reference of it (findings and their details, malformed frames, gaps,
// CM message frames) named by its file and its number there, as matched
// by content between mergecap's file and the inputs. The files:
//   - a capture split into its odd and its even frames (each transmission
//     in one file only: the merge is the capture itself);
//   - a rotation's second piece moved back into the first one's time;
//   - two unrelated captures of other addresses that begin together.
func TestMergedByTime(t *testing.T) {
	mergecap := mergecapPath(t)
	dir := t.TempDir()
	mix := generate(t, dir, "mix.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: 3000, QPs: 24, Seed: 5})
	odd, even := splitOddEven(t, mix, dir)
	rot, ok := rotate(t, dir, "../../testdata/loss_nak_gobackn.pcap", 2)
	require.True(t, ok)
	shifted := filepath.Join(dir, "shifted.pcap")
	shiftCapture(t, rot.files[1], shifted, -2*time.Microsecond)
	for _, tc := range []struct {
		name  string
		files []string
	}{
		{"odd and even frames", []string{odd, even}},
		{"overlapping pieces", []string{rot.files[0], shifted}},
		{"unrelated, begun together", []string{"../../testdata/write_bw_ipv4.pcap", "../../testdata/send_bw_ipv6.pcapng"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			merged := filepath.Join(t.TempDir(), "merged.pcap")
			out, err := exec.Command(mergecap, append([]string{"-F", "nsecpcap", "-w", merged}, tc.files...)...).CombinedOutput()
			require.NoError(t, err, "%s", out)
			code, whole, errs := runCLI("-o", "json", "-j", "1", merged)
			require.Equal(t, 0, code, errs)
			want := localizeJSON(t, whole, mergedRefs(t, merged, tc.files))
			for _, j := range []string{"1", "2", "3"} {
				code, got, errs := runCLI("-o", "json", "-j", j, tc.files[0], tc.files[1])
				require.Equal(t, 0, code, errs)
				var rep map[string]any
				require.NoError(t, json.Unmarshal([]byte(got), &rep))
				c := rep["capture"].(map[string]any)
				assert.Equal(t, true, c["files_merged"], "merged by time")
				require.Len(t, c["files"], 2)
				delete(c, "files")
				delete(c, "files_merged")
				require.Equal(t, unnameHostFiles(want), unnameHostFiles(rep), "-j %s", j)
			}
		})
	}
}

// frameRef is a frame's file and its number there.
type frameRef struct {
	file string
	n    uint64
}

// mergedRefs returns the file and number of each frame of merged (from
// 1), which mergecap made of files: the next frame of merged is the next
// unmatched frame of the file whose next frame has its time and bytes.
func mergedRefs(t *testing.T, merged string, files []string) []frameRef {
	t.Helper()
	type rec struct {
		t    time.Time
		data []byte
	}
	read := func(name string) []rec {
		cr, err := capture.Open(name)
		require.NoError(t, err)
		defer cr.Close()
		var out []rec
		for {
			ci, data, _, err := cr.Next()
			if err == io.EOF {
				return out
			}
			require.NoError(t, err)
			out = append(out, rec{ci.Timestamp, bytes.Clone(data)})
		}
	}
	inputs := make([][]rec, len(files))
	for i, f := range files {
		inputs[i] = read(f)
	}
	next := make([]int, len(files))
	refs := []frameRef{{}} // frame 0: none
	for k, m := range read(merged) {
		found := false
		for i := range files {
			if j := next[i]; j < len(inputs[i]) && inputs[i][j].t.Equal(m.t) && bytes.Equal(inputs[i][j].data, m.data) {
				next[i]++
				refs = append(refs, frameRef{displayName(files[i]), uint64(next[i])})
				found = true
				break
			}
		}
		require.True(t, found, "frame %d of the merge is no file's next", k+1)
	}
	return refs
}

// localizeJSON decodes the JSON report of the merged file and names each
// frame it refers to by its file and its number there (refs), as the
// report of the files read as one names them.
func localizeJSON(t *testing.T, report string, refs []frameRef) map[string]any {
	t.Helper()
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(report), &rep))
	ref := func(v any) frameRef {
		n := uint64(v.(float64))
		require.Less(t, n, uint64(len(refs)))
		return refs[n]
	}
	detail := func(s string) string { return localizeDetail(t, s, refs) }
	local := func(o map[string]any) {
		r := ref(o["frame"])
		o["frame"], o["file"] = float64(r.n), r.file
	}
	for _, f := range rep["findings"].([]any) {
		fd := f.(map[string]any)
		local(fd)
		fd["detail"] = detail(fd["detail"].(string))
	}
	for _, m := range rep["capture"].(map[string]any)["malformed_frames"].([]any) {
		local(m.(map[string]any))
	}
	for _, f := range rep["flows"].([]any) {
		if gaps, ok := f.(map[string]any)["requests"].(map[string]any)["gaps"].([]any); ok {
			for _, g := range gaps {
				local(g.(map[string]any))
			}
		}
	}
	for _, c := range rep["connections"].([]any) {
		frames := c.(map[string]any)["frames"].(map[string]any)
		files := map[string]any{}
		for _, k := range []string{"req", "rep", "rtu", "rej", "dreq", "drep"} {
			if v, ok := frames[k]; ok {
				r := ref(v)
				frames[k], files[k] = float64(r.n), r.file
			}
		}
		frames["files"] = files
	}
	return rep
}

// TestExportMerged: --export of files merged by time writes a packets
// table per file, each row numbered in its file and naming it, with the
// packet's own fields as the file alone decodes them (a file's frames in
// their order, whatever the other file's frames between them).
func TestExportMerged(t *testing.T) {
	dir := t.TempDir()
	mix := generate(t, dir, "mix.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: 1500, QPs: 12, Seed: 9})
	odd, even := splitOddEven(t, mix, dir)
	exp := filepath.Join(dir, "export")
	code, out, errs := runCLI("-o", "json", "--export", exp, odd, even)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"files_merged": true`)
	cols := []string{"file", "frame", "time", "src", "dst", "psn", "opcode", "length"}
	for i, f := range []string{odd, even} {
		rows := exporttest.ReadRows(t, filepath.Join(exp, export.PacketsFile(i, 0)), cols...)
		cr, err := capture.Open(f)
		require.NoError(t, err)
		a := analyze.New(analyze.Options{})
		var want []map[string]any
		for {
			ci, data, lt, err := cr.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			full := exporttest.PacketRow(displayName(f), a.Feed(ci, lt, data))
			row := map[string]any{}
			for _, c := range cols {
				row[c] = full[c]
			}
			want = append(want, row)
		}
		cr.Close()
		require.Equal(t, want, rows, "%s", f)
	}
}

// TestMergedByTimeCaps: files merged by time share the run's caps as one
// capture does: with --max-flows or --max-connections hit, every -j gives
// -j 1's report, in one pass.
func TestMergedByTimeCaps(t *testing.T) {
	dir := t.TempDir()
	mix := generate(t, dir, "mix.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: 3000, QPs: 24, Seed: 6})
	odd, even := splitOddEven(t, mix, dir)
	for _, caps := range [][]string{{"--max-flows", "10"}, {"--max-connections", "3"}} {
		args := append([]string{"-o", "json"}, caps...)
		code, want, errs := runCLI(append(append(args, "-j", "1"), odd, even)...)
		require.Equal(t, 0, code, errs)
		require.Contains(t, want, `"files_merged": true`)
		require.Regexp(t, `"(flows|connections)_dropped": [1-9]`, want, "the cap is hit")
		for _, j := range []string{"2", "3"} {
			code, got, errs := runCLI(append(append(args, "-j", j), odd, even)...)
			require.Equal(t, 0, code, errs)
			require.Equal(t, want, got, "%v -j %s", caps, j)
		}
	}
}

// TestPipeAmongFiles: a named pipe among several files is read once, in
// its turn (found by review: the heads' and the whole samples' readings
// consumed it, and the run hung or read nothing of it); the files are
// then analyzed each on its own, every frame counted.
func TestPipeAmongFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	data, err := os.ReadFile("../../testdata/ud.pcap")
	require.NoError(t, err)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, _ = f.Write(data)
			f.Close()
		}
	}()
	code, out, errs := runCLI("-o", "json", fifo, "../../testdata/send_bw_ipv6.pcapng")
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, out, `"frames": 37,`, "8 frames of the pipe and 29 of the file")
	assert.NotContains(t, out, `"files_merged"`)
}

// htmlChart is a flow's chart in the --html page's data.
type htmlChart struct {
	TNs   []int64  `json:"t_ns"`
	Y     []int64  `json:"y"`
	PSN   []uint32 `json:"psn"`
	Frame []uint64 `json:"frame"`
	File  []int    `json:"file"`
	Cat   []int    `json:"cat"`
	Gaps  []struct {
		From  int64  `json:"from"`
		To    int64  `json:"to"`
		Count uint32 `json:"count"`
		TNs   int64  `json:"t_ns"`
	} `json:"gaps"`
}

// htmlPage runs the command with --html on files and returns the page's
// files and each flow's chart.
func htmlPage(t *testing.T, files ...string) (names []string, charts []*htmlChart) {
	t.Helper()
	page := filepath.Join(t.TempDir(), "p.html")
	code, _, errs := runCLI(append([]string{"-j", "1", "--html", page}, files...)...)
	require.Equal(t, 0, code, errs)
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`).FindSubmatch(b)
	require.Len(t, m, 2)
	var d struct {
		Files []string `json:"files"`
		Flows []struct {
			Chart *htmlChart `json:"chart"`
		} `json:"flows"`
	}
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &d))
	for _, f := range d.Flows {
		charts = append(charts, f.Chart)
	}
	return d.Files, charts
}

// TestHTMLMergedByTime: the --html page of files merged by time draws what
// the page of mergecap's file of them draws (times, PSNs, categories, gaps
// placed on the frame that jumped over them), each point named by its file
// and its number there (found by review: points were named by the
// stream's number, and the gaps of a drop placed at PSN -16775211).
func TestHTMLMergedByTime(t *testing.T) {
	mergecap := mergecapPath(t)
	for _, src := range []string{"../../testdata/tap_drop.pcap", "../../testdata/mix_small.pcap"} {
		t.Run(filepath.Base(src), func(t *testing.T) {
			dir := t.TempDir()
			odd, even := splitOddEven(t, src, dir)
			merged := filepath.Join(dir, "merged.pcap")
			out, err := exec.Command(mergecap, "-F", "nsecpcap", "-w", merged, odd, even).CombinedOutput()
			require.NoError(t, err, "%s", out)
			refs := mergedRefs(t, merged, []string{odd, even})
			_, want := htmlPage(t, merged)
			names, got := htmlPage(t, odd, even)
			require.Equal(t, []string{odd, even}, names)
			require.Len(t, got, len(want))
			drawn := 0
			for i, w := range want {
				g := got[i]
				if w == nil {
					assert.Nil(t, g)
					continue
				}
				require.NotNil(t, g)
				assert.Equal(t, w.TNs, g.TNs)
				assert.Equal(t, w.Y, g.Y)
				assert.Equal(t, w.PSN, g.PSN)
				assert.Equal(t, w.Cat, g.Cat)
				assert.Equal(t, w.Gaps, g.Gaps)
				require.Len(t, g.File, len(w.Frame))
				for k, fr := range w.Frame {
					assert.Equal(t, refs[fr], frameRef{names[g.File[k]], g.Frame[k]}, "point %d of chart %d", k, i)
				}
				drawn += len(g.Frame)
			}
			assert.Positive(t, drawn)
		})
	}
}

// TestTraceMergedByTime: the --trace timeline of files merged by time has
// the messages and findings of the timeline of mergecap's file of them,
// each frame named by its file and its number there (found by review:
// messages named frames by their place in the stream, and findings by
// their number in a file they did not name).
func TestTraceMergedByTime(t *testing.T) {
	mergecap := mergecapPath(t)
	dir := t.TempDir()
	odd, even := splitOddEven(t, "../../testdata/loss_nak_gobackn.pcap", dir)
	merged := filepath.Join(dir, "merged.pcap")
	out, err := exec.Command(mergecap, "-F", "nsecpcap", "-w", merged, odd, even).CombinedOutput()
	require.NoError(t, err, "%s", out)
	refs := mergedRefs(t, merged, []string{odd, even})
	type event struct {
		Ph   string         `json:"ph"`
		Name string         `json:"name"`
		Ts   float64        `json:"ts"`
		Args map[string]any `json:"args"`
	}
	events := func(files ...string) []event {
		path := filepath.Join(t.TempDir(), "t.json")
		code, _, errs := runCLI(append([]string{"-j", "1", "-o", "json", "--trace", path}, files...)...)
		require.Equal(t, 0, code, errs)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		var tr struct {
			TraceEvents []event `json:"traceEvents"`
		}
		require.NoError(t, json.Unmarshal(b, &tr))
		var out []event
		for _, ev := range tr.TraceEvents {
			if ev.Ph == "X" || ev.Ph == "i" {
				out = append(out, ev)
			}
		}
		return out
	}
	want, got := events(merged), events(odd, even)
	require.Len(t, got, len(want))
	named := 0
	for i, w := range want {
		g := got[i]
		require.Equal(t, w.Ph+" "+w.Name, g.Ph+" "+g.Name, "event %d", i)
		assert.Equal(t, w.Ts, g.Ts)
		for _, k := range [][2]string{{"frame", "file"}, {"first_frame", "first_file"}} {
			fr, ok := w.Args[k[0]].(float64)
			if !ok || fr == 0 {
				continue
			}
			r := refs[uint64(fr)]
			assert.Equal(t, r, frameRef{fmt.Sprint(g.Args[k[1]]), uint64(g.Args[k[0]].(float64))}, "event %d %s", i, k[0])
			named++
		}
		if d, ok := w.Args["detail"].(string); ok {
			assert.Equal(t, localizeDetail(t, d, refs), g.Args["detail"])
		}
	}
	assert.Positive(t, named)
}

// localizeDetail names each "frame N" of a finding's detail by its file
// and its number there (refs), as the report of files read as one does.
func localizeDetail(t *testing.T, s string, refs []frameRef) string {
	return regexp.MustCompile(`frame (\d+)`).ReplaceAllStringFunc(s, func(m string) string {
		n, err := strconv.ParseUint(m[len("frame "):], 10, 64)
		require.NoError(t, err)
		r := refs[n]
		return fmt.Sprintf("frame %d of %s", r.n, r.file)
	})
}

// mergecapPath returns the path of Wireshark's mergecap, the oracle of the
// merge by time. It comes with tshark (wireshark-common): without it the
// test is skipped, except in CI, where the comparison must not drop out
// (testenv.MustHaveTshark).
func mergecapPath(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("mergecap")
	if err == nil {
		return path
	}
	if testenv.MustHaveTshark(os.Getenv) {
		t.Fatalf("mergecap not installed, and CI requires the comparison with Wireshark's merge: %v", err)
	}
	t.Skipf("mergecap not installed (it comes with tshark): %v", err)
	return ""
}

// splitOddEven writes the odd frames (1st, 3rd, …) and the even frames
// of the capture src to odd.pcap and even.pcap in dir: two files whose
// frames alternate, every transmission in one of them only.
func splitOddEven(t *testing.T, src, dir string) (odd, even string) {
	t.Helper()
	odd, even = filepath.Join(dir, "odd.pcap"), filepath.Join(dir, "even.pcap")
	rewriteCapture(t, src, odd, func(n int, _ *gopacket.CaptureInfo) bool { return n%2 == 0 })
	rewriteCapture(t, src, even, func(n int, _ *gopacket.CaptureInfo) bool { return n%2 == 1 })
	return odd, even
}
