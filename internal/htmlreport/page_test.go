package htmlreport

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
)

// chartPage is the page data TestWriteCharts reads: each flow's chart and
// each finding's flow.
type chartPage struct {
	Flows []struct {
		Name  string     `json:"name"`
		Chart *flowChart `json:"chart"`
	} `json:"flows"`
	Findings []struct {
		Flow int `json:"flow"`
	} `json:"findings"`
	// Report.Findings are the findings the page lists, parallel to
	// Findings.
	Report struct {
		Findings []analyze.Finding `json:"findings"`
	} `json:"report"`
}

// flowChart is a flow's chart in the page data: per point its frame, wire
// PSN, unwrapped PSN (y) and category.
type flowChart struct {
	Frame []uint64 `json:"frame"`
	PSN   []uint32 `json:"psn"`
	Y     []int64  `json:"y"`
	Cat   []int    `json:"cat"`
}

// TestWriteCharts renders the testdata captures and checks the page's data
// against the analyzer's findings: each finding's frame is drawn on its
// flow's chart in the category its kind implies, and the page loads
// nothing from elsewhere.
func TestWriteCharts(t *testing.T) {
	for _, file := range []string{"loss_nak_gobackn.pcap", "ecn_cnp.pcap", "rnr_corrupt_icrc.pcap", "dup_reorder.pcap", "psn_wrap.pcap", "read_bw.pcap", "erspan3_vxlan.pcap"} {
		t.Run(file, func(t *testing.T) {
			rep, page := renderTestdata(t, file)
			assert.Contains(t, page, "<title>t &lt;&amp;&gt;</title>")
			assert.NotRegexp(t, regexp.MustCompile(`(?i)(src|href)=["']?(https?:)?//`), page, "no external resource")
			m := regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`).FindStringSubmatch(page)
			require.Len(t, m, 2)
			var d chartPage
			require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(m[1])), &d))
			require.Len(t, d.Flows, len(rep.Flows))
			checked := checkFindingsOnCharts(t, rep, &d)
			// The unwrapped PSN differs from the wire PSN by a multiple
			// of 2^24 (CNPs, whose PSN means nothing, sit where the
			// chart was).
			for _, f := range d.Flows {
				if f.Chart == nil {
					continue
				}
				for j := range f.Chart.Y {
					if f.Chart.Cat[j] == int(catCNP) {
						continue
					}
					assert.Zero(t, (f.Chart.Y[j]-int64(f.Chart.PSN[j]))%(1<<24))
				}
			}
			t.Logf("%s: %d findings checked", file, checked)
		})
	}
}

// renderTestdata analyzes a testdata capture, collecting its points, and
// renders its page titled "t <&>"; it returns the report and the page.
func renderTestdata(t *testing.T, file string) (*analyze.Report, string) {
	t.Helper()
	cr, err := capture.Open("../../testdata/" + file)
	require.NoError(t, err)
	defer cr.Close()
	a := analyze.New(analyze.Options{})
	c := NewCollector(DefaultLimits)
	for {
		ci, data, lt, err := cr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		c.Add(a.Feed(ci, lt, data))
	}
	rep := a.Finish()
	var out bytes.Buffer
	require.NoError(t, Write(&out, "t <&>", rep, []Source{{Name: file, Collector: c}}))
	return rep, out.String()
}

// checkFindingsOnCharts checks that the frame of each finding of a kind
// the chart draws is on its flow's chart, in the category its kind
// implies (a frame both after a gap and resent is drawn as resent); it
// returns how many findings it checked the category of.
func checkFindingsOnCharts(t *testing.T, rep *analyze.Report, d *chartPage) int {
	t.Helper()
	catOf := map[analyze.Kind]int{
		analyze.KindNAK: int(catNAK), analyze.KindRNRNAK: int(catRNRNAK), analyze.KindCNP: int(catCNP),
		analyze.KindRetransmission: int(catResend), analyze.KindDuplicate: int(catResend),
		analyze.KindOutOfOrder: int(catOutOfOrder), analyze.KindPSNGap: int(catAfterGap),
	}
	require.Len(t, d.Report.Findings, len(rep.Findings))
	checked := 0
	for i, fd := range d.Report.Findings { // the page's order: worst first
		want, ok := catOf[fd.Kind]
		if !ok {
			continue
		}
		if fd.Kind == analyze.KindPSNGap && fd.Severity == analyze.SeverityWarning {
			want = int(catAfterUnknown) // PSNs of unknown fate, not lost
		}
		fi := d.Findings[i].Flow
		require.GreaterOrEqual(t, fi, 0)
		assert.Equal(t, fd.FlowName(), d.Flows[fi].Name)
		ch := d.Flows[fi].Chart
		require.NotNil(t, ch, fd.Flow)
		k := -1
		for j, fr := range ch.Frame {
			if fr == fd.Frame {
				k = j
			}
		}
		require.GreaterOrEqual(t, k, 0, "frame %d (%s) on the chart of %s", fd.Frame, fd.Kind, fd.Flow)
		if fd.Kind == analyze.KindPSNGap && ch.Cat[k] == int(catResend) {
			continue // a frame both after a gap and resent is drawn as resent
		}
		assert.Equal(t, want, ch.Cat[k], "category of frame %d (%s)", fd.Frame, fd.Kind)
		checked++
	}
	return checked
}
