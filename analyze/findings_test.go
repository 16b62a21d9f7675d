package analyze_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// kindRow is one (kind, severity) row of a table of findings.
type kindRow struct{ kind, severity string }

// TestKindsMatchDocs: analyze.Kinds and docs/analysis.md's table of
// findings list the same kinds at the same severities.
func TestKindsMatchDocs(t *testing.T) {
	doc, err := os.ReadFile("../docs/analysis.md")
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| (error|warning|info) \\|")
	inDocs := map[kindRow]bool{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		inDocs[kindRow{m[1], m[2]}] = true
	}
	require.NotEmpty(t, inDocs)
	inCode := map[kindRow]bool{}
	for _, k := range analyze.Kinds() {
		r := kindRow{string(k.Kind), k.Severity.String()}
		assert.False(t, inCode[r], "%v listed twice", r)
		assert.NotEmpty(t, k.Meaning, "%v has no meaning", r)
		inCode[r] = true
	}
	assert.Equal(t, inDocs, inCode)
}

// TestFindingsAreInKinds: every finding of every generated capture is of a
// kind and severity analyze.Kinds lists.
func TestFindingsAreInKinds(t *testing.T) {
	known := map[kindRow]bool{}
	for _, k := range analyze.Kinds() {
		known[kindRow{string(k.Kind), k.Severity.String()}] = true
	}
	files, err := filepath.Glob("../testdata/*.pcap*")
	require.NoError(t, err)
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".json") {
			continue
		}
		for _, fd := range analyzeCapture(t, f, analyze.Options{}).Findings {
			assert.True(t, known[kindRow{string(fd.Kind), fd.Severity.String()}], "%s: %s/%s not in analyze.Kinds", f, fd.Kind, fd.Severity)
			seen++
		}
	}
	assert.Greater(t, seen, 20)
}

// TestFindingJSON: a finding marshals to the object docs/json.md shows,
// its flow as "src → dst QP 0x…", and reads back the same.
func TestFindingJSON(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	tests := []struct {
		name string
		f    analyze.Finding
		want string
	}{
		{"flow", analyze.Finding{Frame: 7, Time: at, Kind: analyze.KindNAK, Severity: analyze.SeverityError, Flow: analyze.FlowID{Src: "10.0.0.2", Dst: "10.0.0.1", DestQP: 0x5668}, Detail: "NAK", File: "a.pcap"},
			`{"frame":7,"time":"2026-01-02T03:04:05.000000006Z","kind":"nak","severity":"error","flow":"10.0.0.2 → 10.0.0.1 QP 0x005668","detail":"NAK","file":"a.pcap"}`},
		{"IPv6 and LIDs", analyze.Finding{Frame: 1, Time: at, Kind: analyze.KindCNP, Severity: analyze.SeverityInfo, Flow: analyze.FlowID{Src: "LID 1", Dst: "fe80::1", DestQP: 0xFFFFFF}},
			`{"frame":1,"time":"2026-01-02T03:04:05.000000006Z","kind":"cnp","severity":"info","flow":"LID 1 → fe80::1 QP 0xffffff","detail":""}`},
		{"connection", analyze.Finding{Frame: 3, Time: at, Kind: analyze.KindCMReject, Severity: analyze.SeverityError, Connection: 2, Detail: "CM REJ: x"},
			`{"frame":3,"time":"2026-01-02T03:04:05.000000006Z","kind":"cm_reject","severity":"error","flow":"connection 2","connection":2,"detail":"CM REJ: x"}`},
		{"no flow", analyze.Finding{Frame: 9, Time: at, Kind: analyze.KindMalformed, Severity: analyze.SeverityWarning, Detail: "short"},
			`{"frame":9,"time":"2026-01-02T03:04:05.000000006Z","kind":"malformed","severity":"warning","flow":"","detail":"short"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.f)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(b))
			var back analyze.Finding
			require.NoError(t, json.Unmarshal(b, &back))
			assert.Equal(t, tt.f, back)
		})
	}
	_, err := json.Marshal(analyze.Finding{})
	assert.Error(t, err, "the zero Severity is not one")
	var f analyze.Finding
	assert.Error(t, json.Unmarshal([]byte(`{"severity":"fatal"}`), &f))
	assert.Error(t, json.Unmarshal([]byte(`{"severity":"info","flow":"somewhere"}`), &f))
}

// TestFindingCapKeepsTheWorst: with the cap at the number of errors the
// generator's truth expects, every such error is listed whatever the
// warnings and infos found before it; the rest are counted as dropped.
func TestFindingCapKeepsTheWorst(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.truth.json")
	require.NoError(t, err)
	tested := 0
	for _, tf := range files {
		raw, err := os.ReadFile(tf)
		require.NoError(t, err)
		var truth struct {
			Findings []struct {
				Kind, Severity string
				Frame          uint64
			}
		}
		require.NoError(t, json.Unmarshal(raw, &truth))
		var errs []string
		for _, f := range truth.Findings {
			if f.Severity == "error" {
				errs = append(errs, f.Kind)
			}
		}
		if len(errs) == 0 || len(errs) == len(truth.Findings) {
			continue
		}
		tested++
		t.Run(filepath.Base(tf), func(t *testing.T) {
			r := analyzeCapture(t, strings.TrimSuffix(tf, ".truth.json"), analyze.Options{MaxFindings: len(errs)})
			var got []string
			for _, f := range r.Findings {
				assert.Equal(t, analyze.SeverityError, f.Severity, "%s at frame %d", f.Kind, f.Frame)
				got = append(got, string(f.Kind))
			}
			assert.ElementsMatch(t, errs, got)
			assert.Equal(t, uint64(len(truth.Findings)-len(errs)), r.FindingsDropped)
		})
	}
	assert.GreaterOrEqual(t, tested, 3)
}
