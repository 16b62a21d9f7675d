package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/points"
)

// TestInputsOneLineEach: several files merged by time, or matched as
// capture points, give one text report of them all, whose summary states
// the decision with its evidence and has one line per file (its frames,
// as the generator's truth counts them, its time range; its RDMA packets
// and its read error for capture points, the read error under the
// summary for merged files), not a report per file.
func TestInputsOneLineEach(t *testing.T) {
	truth := func(path string) synth.Truth {
		b, err := os.ReadFile(path + ".truth.json")
		require.NoError(t, err)
		var tr synth.Truth
		require.NoError(t, json.Unmarshal(b, &tr))
		return tr
	}
	dir := t.TempDir()
	// A copy of a capture cut in its last record: read to where it breaks.
	whole, err := os.ReadFile("../../testdata/ud.pcap")
	require.NoError(t, err)
	cut := filepath.Join(dir, "ud_cut.pcap")
	require.NoError(t, os.WriteFile(cut, whole[:len(whole)-10], 0o644))
	pts, _ := writePoints(t, synth.PointsConfig{
		Base:   synth.Config{Scenario: "write-bw", Messages: 4, Nanos: true},
		Points: []synth.Point{{Name: "host-a"}, {Name: "host-b", ClockOffset: time.Millisecond, Delay: 2 * time.Microsecond}},
	})
	for _, tc := range []struct {
		name     string
		files    []string
		code     int
		title    string
		decision string
		errs     map[string]string // file → its error line
	}{
		{"unrelated", []string{"../../testdata/write_bw_ipv4.pcap", "../../testdata/send_bw_ipv6.pcapng"}, 0, "2 files merged by time",
			"not read one after another as the pieces of one capture: ../../testdata/write_bw_ipv4.pcap and ../../testdata/send_bw_ipv6.pcapng begin at the same instant", nil},
		{"one cut short", []string{"../../testdata/ud.pcap", cut}, 1, "2 files merged by time",
			"not read one after another as the pieces of one capture: ", map[string]string{cut: "error: " + cut + ": capture: truncated record"}},
		{"capture points", pts, 0, "all 2 files", "matched as capture points of one traffic: their first packets share transmissions", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := run(t, nil, append([]string{"--color=never"}, tc.files...)...)
			require.Equal(t, tc.code, code, stderr)
			reports := len(regexp.MustCompile(`(?m)^Capture `).FindAllString(out, -1)) - len(regexp.MustCompile(`(?m)^Capture points$`).FindAllString(out, -1))
			assert.Equal(t, 1, reports, "one report:\n%s", out)
			assert.True(t, strings.HasPrefix(out, "Capture "+tc.title+"\n"), out)
			assert.Contains(t, out, "\n  "+tc.decision)
			merged := strings.HasSuffix(tc.title, "merged by time")
			for _, f := range tc.files {
				re := `\n    ` + regexp.QuoteMeta(f) + ` +(\d+) frames, (\d+) RDMA  (\S+) to (\S+)\n`
				if merged {
					re = `\n    ` + regexp.QuoteMeta(f) + ` +(\d+) frames  (\S+) to (\S+)\n`
				}
				line := regexp.MustCompile(re).FindStringSubmatch(out)
				require.NotNil(t, line, "a line for %s in:\n%s", f, out)
				if want, ok := tc.errs[f]; ok {
					if merged {
						assert.Contains(t, out, "\n  "+want, "its error under the summary")
					} else {
						assert.Contains(t, out, line[0]+"      "+want, "its error under its line")
					}
					continue
				}
				if _, err := os.Stat(f + ".truth.json"); err != nil {
					continue // capture points: their truth is the points'
				}
				tr := truth(f)
				assert.Equal(t, fmt.Sprint(tr.Frames), line[1], f)
				if !merged {
					assert.Equal(t, fmt.Sprint(tr.RoCEPackets), line[2], f)
				}
			}
		})
	}
}

// TestTooManyPoints: more files than points.MaxFiles whose first packets
// share transmissions are refused (exit 2), not merged as unrelated
// captures that count each transmission once per file.
func TestTooManyPoints(t *testing.T) {
	var ps []synth.Point
	for i := range points.MaxFiles + 1 {
		ps = append(ps, synth.Point{Name: fmt.Sprintf("p%02d", i), ClockOffset: time.Duration(i) * time.Millisecond, Delay: time.Microsecond})
	}
	files, _ := writePoints(t, synth.PointsConfig{Base: synth.Config{Scenario: "write-bw", Messages: 2, Nanos: true}, Points: ps})
	code, out, stderr := run(t, nil, files...)
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Equal(t, fmt.Sprintf("roce-dissect: the %d files are capture points of the same traffic (their first packets share transmissions), and at most %d points are matched: give at most %d of them (run 'roce-dissect --help' for the flags and examples)\n", len(files), points.MaxFiles, points.MaxFiles), stderr)
	code, _, stderr = run(t, nil, append([]string{"-o", "json"}, files[:points.MaxFiles]...)...)
	assert.Equal(t, 0, code, stderr)
}

// TestHTMLNameForgotten: --html with its page name forgotten takes the
// first capture for the page: refused (exit 2), the capture left as it
// was (issue 23: it was overwritten, and the run exited 0).
func TestHTMLNameForgotten(t *testing.T) {
	dir := t.TempDir()
	want, err := os.ReadFile("../../testdata/ud.pcap")
	require.NoError(t, err)
	a := filepath.Join(dir, "a.pcap")
	require.NoError(t, os.WriteFile(a, want, 0o644))
	code, out, stderr := run(t, nil, "--html", a, "../../testdata/ecn_cnp.pcap")
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "--html wants a .html or .htm file")
	got, err := os.ReadFile(a)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the capture is unchanged")
}

// TestOutputNeverAnInput: --html, --plot and --trace refuse a file that
// is one of the inputs, by its path or as a hard link to it (exit 2), and
// the capture is left as it was.
func TestOutputNeverAnInput(t *testing.T) {
	want, err := os.ReadFile("../../testdata/ud.pcap")
	require.NoError(t, err)
	for _, tc := range []struct{ flag, name string }{{"--html", "cap.html"}, {"--plot", "cap.svg"}, {"--trace", "cap.json"}} {
		for _, link := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s link=%v", tc.flag, link), func(t *testing.T) {
				dir := t.TempDir()
				in := filepath.Join(dir, tc.name)
				require.NoError(t, os.WriteFile(in, want, 0o644))
				out := in
				if link {
					out = filepath.Join(dir, "other"+filepath.Ext(tc.name))
					require.NoError(t, os.Link(in, out))
				}
				code, _, stderr := run(t, nil, tc.flag, out, in)
				assert.Equal(t, 2, code)
				assert.Contains(t, stderr, fmt.Sprintf("%s %s is the input %s: give another file", tc.flag, out, in))
				got, err := os.ReadFile(in)
				require.NoError(t, err)
				assert.Equal(t, want, got, "the capture is unchanged")
			})
		}
	}
}
