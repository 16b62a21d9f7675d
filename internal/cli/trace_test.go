package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceFile is what a --trace file holds.
type traceFile struct {
	TraceEvents     []traceEvent `json:"traceEvents"`
	DisplayTimeUnit string       `json:"displayTimeUnit"`
}

// runTrace writes the --trace of files, with the text report (written
// while built without --trace), and returns it with the JSON report of
// the same files to compare with.
func runTrace(t *testing.T, files ...string) (jsonReport, traceFile) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "trace.json")
	code, _, stderr := run(t, nil, append([]string{"--trace", file}, files...)...)
	require.Equal(t, 0, code, stderr)
	code, out, stderr := run(t, nil, append([]string{"-o", "json"}, files...)...)
	require.Equal(t, 0, code, stderr)
	var rep jsonReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	var tr traceFile
	require.NoError(t, json.Unmarshal(data, &tr), "the trace parses as JSON")
	return rep, tr
}

// traceEvent is the part of a trace event the tests read.
type traceEvent struct {
	Ph   string         `json:"ph"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Name string         `json:"name"`
	Ts   *float64       `json:"ts"`
	Dur  *float64       `json:"dur"`
	Args map[string]any `json:"args"`
}

// jsonReport is the part of the JSON report the tests compare with.
type jsonReport struct {
	Capture struct {
		Duration float64 `json:"duration_seconds"`
	} `json:"capture"`
	Flows []struct {
		Messages struct {
			Count int `json:"count"`
		} `json:"messages"`
		Congestion struct {
			CNPs int `json:"cnps"`
		} `json:"congestion"`
	} `json:"flows"`
	Findings []struct {
		Kind  string `json:"kind"`
		Frame uint64 `json:"frame"`
	} `json:"findings"`
}

func TestTraceMatchesJSONReport(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		procs int
	}{
		{"loss", []string{"../../testdata/loss_nak_gobackn.pcap"}, 1},
		{"ecn", []string{"../../testdata/ecn_cnp.pcap"}, 1},
		{"mix", []string{"../../testdata/mix_small.pcap"}, 1},
		{"two files, merged by time: one capture", []string{"../../testdata/loss_nak_gobackn.pcap", "../../testdata/ecn_cnp.pcap"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, tr := runTrace(t, tc.files...)
			assert.Equal(t, "ns", tr.DisplayTimeUnit)

			messages, cnps := 0, 0
			for _, f := range rep.Flows {
				messages += f.Messages.Count
				cnps += f.Congestion.CNPs
			}
			require.NotZero(t, messages)
			span := rep.Capture.Duration * 1e6 // µs
			var slices, spans, procs, cnpCounts int
			var gotFindings, wantFindings []string
			for _, ev := range tr.TraceEvents {
				if ev.Ph != "M" {
					require.NotNil(t, ev.Ts, "%s %s", ev.Ph, ev.Name)
					assert.GreaterOrEqual(t, *ev.Ts, 0.0, "%s %s: Perfetto refuses a negative timestamp", ev.Ph, ev.Name)
				}
				switch ev.Ph {
				case "X":
					slices++
					require.NotNil(t, ev.Ts)
					require.NotNil(t, ev.Dur)
					assert.GreaterOrEqual(t, *ev.Dur, 0.0)
					assert.GreaterOrEqual(t, *ev.Ts, 0.0)
					assert.LessOrEqual(t, *ev.Ts+*ev.Dur, span+1e-3, "within the capture's span")
					if *ev.Dur > 0 {
						spans++
					}
				case "i":
					gotFindings = append(gotFindings, ev.Name+" "+jsonNumber(ev.Args["frame"]))
				case "C":
					if strings.HasPrefix(ev.Name, "CNPs ") {
						cnpCounts++
					}
				case "M":
					if ev.Name == "process_name" {
						procs++
					}
				}
			}
			for _, fd := range rep.Findings {
				wantFindings = append(wantFindings, fd.Kind+" "+jsonNumber(float64(fd.Frame)))
			}
			sort.Strings(gotFindings)
			sort.Strings(wantFindings)
			assert.Equal(t, messages, slices, "a slice per completed message")
			assert.NotZero(t, spans, "multi-packet messages last from their first packet")
			assert.Equal(t, wantFindings, gotFindings, "an instant per finding")
			assert.Equal(t, tc.procs, procs, "a process per capture file")
			assert.Equal(t, cnps, cnpCounts, "a CNP counter value per CNP")
		})
	}
}

// jsonNumber renders a JSON number decoded as float64.
func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestTraceRefused(t *testing.T) {
	capture, err := os.ReadFile("../../testdata/ecn_cnp.pcap")
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		args func(dir string) []string
		want string
	}{
		{"name forgotten", func(dir string) []string {
			return []string{"--trace", filepath.Join(dir, "a.pcap"), "../../testdata/ud.pcap"}
		}, "--trace wants a .json file"},
		{"an input", func(dir string) []string {
			return []string{"--trace", filepath.Join(dir, "a.json"), filepath.Join(dir, "a.json")}
		}, "is the input"},
		{"an input by another name", func(dir string) []string {
			link := filepath.Join(dir, "link.json")
			require.NoError(t, os.Link(filepath.Join(dir, "a.json"), link))
			return []string{"--trace", link, filepath.Join(dir, "a.json")}
		}, "is the input"},
		{"packet lines", func(dir string) []string {
			return []string{"-P", "--trace", filepath.Join(dir, "t.json"), "../../testdata/ecn_cnp.pcap"}
		}, "without -P"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, n := range []string{"a.pcap", "a.json"} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, n), capture, 0o644))
			}
			code, out, stderr := run(t, nil, tc.args(dir)...)
			assert.Equal(t, 2, code)
			assert.Empty(t, out)
			assert.Contains(t, stderr, tc.want)
			for _, n := range []string{"a.pcap", "a.json"} {
				got, err := os.ReadFile(filepath.Join(dir, n))
				require.NoError(t, err)
				assert.Equal(t, capture, got, "the capture %s is unchanged", n)
			}
		})
	}
}
