package htmlreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/wrap"
)

// The generator's truth is the oracle of these tests; the page is read
// as a browser's parser reads it (golang.org/x/net/html), before its
// script runs: the encapsulations, tunnels and pause table are in the
// HTML itself.

// synthReport generates a capture, analyzes it at the truth's link speed
// and renders its page.
func synthReport(t *testing.T, cfg synth.Config) (*synth.Truth, *analyze.Report, string) {
	t.Helper()
	var buf bytes.Buffer
	truth, err := synth.Generate(cfg, &buf, nil)
	require.NoError(t, err)
	r, err := pcapgo.NewReader(&buf)
	require.NoError(t, err)
	a := analyze.New(analyze.Options{LinkSpeed: float64(truth.LinkSpeedBps)})
	for {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		a.Feed(ci, r.LinkType(), data)
	}
	rep := a.Finish()
	return truth, rep, renderPage(t, rep)
}

func renderPage(t *testing.T, rep *analyze.Report) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, Write(&out, "switch", rep, []Source{{Name: "c.pcap"}}))
	return out.String()
}

// parsePage parses a page; byID then finds its elements.
func parsePage(t *testing.T, page string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	require.NoError(t, err)
	return doc
}

func byID(n *html.Node, id string) *html.Node {
	if n.Type == html.ElementNode {
		for _, a := range n.Attr {
			if a.Key == "id" && a.Val == id {
				return n
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if m := byID(c, id); m != nil {
			return m
		}
	}
	return nil
}

// elements are the elements named tag under n, in document order.
func elements(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == tag {
			out = append(out, c)
		}
		out = append(out, elements(c, tag)...)
	}
	return out
}

// textOf is the text of n, as a reader sees it.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

func texts(ns []*html.Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = textOf(n)
	}
	return out
}

// tableRows are the cells' texts of a table's body.
func tableRows(t *testing.T, doc *html.Node, id string) [][]string {
	t.Helper()
	table := byID(doc, id)
	require.NotNil(t, table, "#%s", id)
	var rows [][]string
	for _, tb := range elements(table, "tbody") {
		for _, tr := range elements(tb, "tr") {
			rows = append(rows, texts(elements(tr, "td")))
		}
	}
	return rows
}

func frames(n int) string {
	if n == 1 {
		return "1 frame"
	}
	return fmt.Sprintf("%d frames", n)
}

// TestPageWrapsIsTruth: the capture summary of a wrapped capture lists
// the frames of each chain of encapsulations and names every tunnel and
// mirror session by kind, identifier and outer addresses with its frames,
// as the wrapper wrote them.
func TestPageWrapsIsTruth(t *testing.T) {
	// What the identifier of each kind is called on the page (ERSPAN I
	// has none on the wire).
	idName := map[string]string{"erspan2": "session", "erspan3": "session", "vxlan": "VNI", "geneve": "VNI", "nvgre": "VSID", "qinq": "S-VLAN", "mpls": "label"}
	for _, tc := range []struct {
		chain    string
		scenario string
	}{
		{"erspan2,vxlan", synth.ScenarioWriteBW},
		{"erspan1", synth.ScenarioWriteBW},
		{"erspan3-platform,nvgre", synth.ScenarioReadBW},
		{"geneve", synth.ScenarioMix}, // a VTEP per inner host: several tunnels
		{"qinq,mpls", synth.ScenarioMix},
	} {
		t.Run(tc.chain, func(t *testing.T) {
			chain, err := wrap.Parse(tc.chain)
			require.NoError(t, err)
			cfg := synth.Config{Scenario: tc.scenario, Messages: 6, Wrap: chain}
			if tc.scenario == synth.ScenarioMix {
				cfg.Packets, cfg.QPs = 400, 6
			}
			truth, _, page := synthReport(t, cfg)
			require.NotNil(t, truth.Encapsulation)
			doc := parsePage(t, page)

			// The analyzer names both ERSPAN III forms erspan3.
			name := func(s string) string { return strings.ReplaceAll(s, "erspan3-platform", "erspan3") }
			var wantChains []string
			for ch, n := range truth.Encapsulation.Chains {
				wantChains = append(wantChains, frames(n)+" in "+name(ch))
			}
			ul := byID(doc, "encapsulation-chains")
			require.NotNil(t, ul, "the summary lists the chains")
			assert.ElementsMatch(t, wantChains, texts(elements(ul, "li")))

			tunnels := map[string]int{}
			for _, tu := range truth.Encapsulation.Tunnels {
				kind := name(tu.Kind)
				s := kind
				if id := idName[kind]; id != "" {
					s += fmt.Sprintf(" %s %d", id, tu.ID)
				}
				if tu.Src != "" {
					s += fmt.Sprintf(", %s → %s", tu.Src, tu.Dst)
				}
				tunnels[s] += tu.Frames
			}
			require.LessOrEqual(t, len(tunnels), maxPageTunnels, "the case lists every tunnel")
			var wantTunnels []string
			for s, n := range tunnels {
				wantTunnels = append(wantTunnels, s+": "+frames(n))
			}
			ul = byID(doc, "tunnels")
			require.NotNil(t, ul, "the summary lists the tunnels")
			assert.ElementsMatch(t, wantTunnels, texts(elements(ul, "li")))
			if tc.scenario == synth.ScenarioMix && !strings.HasPrefix(tc.chain, "qinq") {
				assert.Greater(t, len(wantTunnels), 1, "the mix goes through several tunnels")
			}

			assert.Nil(t, byID(doc, "pause"), "no pause section without pause frames")
			assert.NotContains(t, page, `href="#pause"`)
		})
	}
}

// TestPagePauseIsTruth: the Pause (PFC) table has a row per sender and
// priority with the frames, XOFF and XON frames and quanta the generator
// wrote, and the time paused and the longest pause within 1 % (and the
// precision shown); it names the link speed the quanta were timed at.
func TestPagePauseIsTruth(t *testing.T) {
	type stream struct {
		kind  synth.PauseKind
		storm bool
		spec  string
	}
	for _, tc := range []struct {
		name    string
		encap   synth.Encap
		gbps    float64
		streams []stream
	}{
		{"pfc defaults", synth.EncapIPv4, 0, []stream{{synth.PausePFC, false, "3"}}},
		{"pfc two senders, two priorities, no XON", synth.EncapVLAN, 25, []stream{{synth.PausePFC, false, "3+4,senders=2,pause=5us-50us,xon=no"}}},
		{"pfc and 802.3x", synth.EncapIPv4, 40, []stream{{synth.PausePFC, false, "2+3,episodes=5"}, {synth.Pause8023x, false, "quanta=1000,start=30us"}}},
		{"storm", synth.EncapIPv4, 10, []stream{{synth.PausePFC, true, "3,refresh=2ms"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Encap: tc.encap, Messages: 20, MsgSize: 4096, MTU: 1024}
			cfg.Pause.LinkSpeedGbps = tc.gbps
			for _, s := range tc.streams {
				ps, err := synth.ParsePauseSpec(s.kind, s.storm, s.spec)
				require.NoError(t, err)
				cfg.Pause.Streams = append(cfg.Pause.Streams, ps)
			}
			truth, _, page := synthReport(t, cfg)
			require.NotEmpty(t, truth.Pause)
			doc := parsePage(t, page)

			require.NotNil(t, byID(doc, "pause"))
			assert.Contains(t, page, `<a href="#pause">Pause (PFC)</a>`, "the navigation links the section")
			assert.Equal(t, fmt.Sprintf("%.2f Gb/s", float64(truth.LinkSpeedBps)/1e9), textOf(byID(doc, "pause-link-speed")))
			rows := tableRows(t, doc, "pause-table")
			require.Len(t, rows, len(truth.Pause))
			for i, w := range truth.Pause {
				checkPauseRow(t, w, rows[i])
			}
			assert.Nil(t, byID(doc, "pause-more"))
			assert.Nil(t, byID(doc, "encapsulations"), "no encapsulation lines without wrapped frames")
		})
	}
}

// checkPauseRow compares a row of the Pause table with the truth's.
func checkPauseRow(t *testing.T, w synth.PauseStats, row []string) {
	t.Helper()
	require.Len(t, row, 9)
	prio := "all"
	if w.Priority != nil {
		prio = fmt.Sprint(*w.Priority)
	}
	name := w.SrcMAC + " " + w.Kind + " " + prio
	assert.Equal(t, []string{w.SrcMAC, w.Kind, prio, fmt.Sprint(w.Frames), fmt.Sprint(w.XOFFFrames), fmt.Sprint(w.XONFrames), fmt.Sprint(w.Quanta)}, row[:7], name)
	shownWithin(t, w.PausedNs, row[7], name+" paused")
	shownWithin(t, w.LongestPauseNs, row[8], name+" longest pause")
}

// shownWithin checks that a duration shown ("12.3µs", "1.34ms", "2.500s")
// is want within 1 %, give or take half its last digit.
func shownWithin(t *testing.T, want int64, shown, what string) {
	t.Helper()
	got, err := time.ParseDuration(shown)
	require.NoError(t, err, "%s: %q", what, shown)
	var digit time.Duration // "0" is exact
	switch {
	case strings.HasSuffix(shown, "µs"):
		digit = 100 * time.Nanosecond
	case strings.HasSuffix(shown, "ms"):
		digit = 10 * time.Microsecond
	case strings.HasSuffix(shown, "s"):
		digit = time.Millisecond
	}
	assert.InDelta(t, float64(want), float64(got), 0.01*float64(want)+float64(digit)/2+1, "%s: want %s, shown %s", what, time.Duration(want), shown)
}

// TestPagePauseCapped: with more senders and priorities than the page
// lists, the table holds the first maxPagePause of them and one line says
// how many more there are.
func TestPagePauseCapped(t *testing.T) {
	ps, err := synth.ParsePauseSpec(synth.PausePFC, false, "1+2,senders=80,episodes=1")
	require.NoError(t, err)
	cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 4, Pause: synth.PauseConfig{Streams: []synth.PauseStream{ps}}}
	truth, _, page := synthReport(t, cfg)
	require.Greater(t, len(truth.Pause), maxPagePause, "the case has more rows than the page lists")
	doc := parsePage(t, page)
	rows := tableRows(t, doc, "pause-table")
	require.Len(t, rows, maxPagePause)
	for i, row := range rows {
		checkPauseRow(t, truth.Pause[i], row)
	}
	more := byID(doc, "pause-more")
	require.NotNil(t, more)
	assert.Equal(t, fmt.Sprintf("and %d more senders and priorities not listed (-o json: pause[])", len(truth.Pause)-maxPagePause), textOf(more))
}

// TestPageSwitchBoundedAndEscaped: beyond the page's caps the chains and
// tunnels are summed on one line each, with the frames the analyzer could
// not list; what the capture names (addresses, kinds, MACs) is escaped;
// the page's data does not carry the lists again.
func TestPageSwitchBoundedAndEscaped(t *testing.T) {
	rep := &analyze.Report{}
	c := &rep.Capture
	chainFrames, tunnelFrames := 0, 0
	for i := range maxPageChains + 4 {
		c.Encapsulations = append(c.Encapsulations, analyze.Encapsulation{Chain: fmt.Sprintf("vxlan/<i>%d</i>", i), Frames: uint64(100 - i)})
		if i >= maxPageChains {
			chainFrames += 100 - i
		}
	}
	for i := range maxPageTunnels + 8 {
		id := uint32(i)
		c.Tunnels = append(c.Tunnels, analyze.Tunnel{Kind: "vxlan", Src: `10.0.0.1"><script>alert(1)</script>`, Dst: "10.0.0.2", ID: &id, IDName: "VNI", Frames: uint64(i + 1)})
		if i >= maxPageTunnels {
			tunnelFrames += i + 1
		}
	}
	c.TunnelFramesUnlisted = 7
	prio := 3
	rep.Pause = []analyze.Pause{{SrcMAC: "<b>mac</b>", Kind: "pfc", Priority: &prio, Frames: 2, XOFFFrames: 1, XONFrames: 1, Quanta: 100, PausedNs: 1500, LongestPauseNs: 1500}}
	c.LinkSpeedBps = 25e9
	page := renderPage(t, rep)
	doc := parsePage(t, page)

	assert.NotContains(t, page, "<script>alert", "capture-derived text is escaped")
	assert.NotContains(t, page, "<b>mac</b>")
	assert.NotContains(t, page, "<i>0</i>")
	chains := texts(elements(byID(doc, "encapsulation-chains"), "li"))
	require.Len(t, chains, maxPageChains+1)
	assert.Equal(t, "100 frames in vxlan/<i>0</i>", chains[0])
	assert.Equal(t, fmt.Sprintf("%d frames in other chains", chainFrames), chains[maxPageChains])
	tunnels := texts(elements(byID(doc, "tunnels"), "li"))
	require.Len(t, tunnels, maxPageTunnels+2)
	assert.Equal(t, `vxlan VNI 0, 10.0.0.1"><script>alert(1)</script> → 10.0.0.2: 1 frame`, tunnels[0])
	assert.Equal(t, fmt.Sprintf("8 tunnels more: %d frames", tunnelFrames), tunnels[maxPageTunnels])
	assert.Equal(t, fmt.Sprintf("more tunnels than the %d counted one by one: 7 frames", maxPageTunnels+8), tunnels[maxPageTunnels+1])
	assert.Equal(t, [][]string{{"<b>mac</b>", "pfc", "3", "2", "1", "1", "100", "1.5µs", "1.5µs"}}, tableRows(t, doc, "pause-table"))
	assert.Equal(t, "25.00 Gb/s", textOf(byID(doc, "pause-link-speed")))

	m := regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`).FindStringSubmatch(page)
	require.Len(t, m, 2)
	var d struct {
		Report map[string]json.RawMessage `json:"report"`
	}
	require.NoError(t, json.Unmarshal([]byte(m[1]), &d))
	require.Contains(t, d.Report, "capture")
	assert.NotContains(t, d.Report, "pause", "the page's data does not carry the pause table again")
	assert.NotContains(t, string(d.Report["capture"]), "10.0.0.2", "nor the tunnels")
}

// TestPagePlainCapture: a capture neither wrapped nor paused has no
// encapsulation lines, no pause section and no link to one, and no
// placeholder of the page is left.
func TestPagePlainCapture(t *testing.T) {
	truth, rep, page := synthReport(t, synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 4})
	require.Nil(t, truth.Encapsulation)
	require.Empty(t, truth.Pause)
	require.NotEmpty(t, rep.Flows)
	doc := parsePage(t, page)
	assert.Nil(t, byID(doc, "encapsulations"))
	assert.Nil(t, byID(doc, "pause"))
	assert.NotContains(t, page, `href="#pause"`)
	assert.NotRegexp(t, `\{\{[A-Z_]+\}\}`, page)
	for _, s := range elements(doc, "section") {
		assert.NotEmpty(t, elements(s, "h2"), "section %s has a heading", textOf(s))
	}
}
