package fuzz_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/htmlreport"
	"github.com/roce-dissect/roce-dissect/report"
)

// htmlAssets are the page's own scripts and style sheets, in the order
// the page has them.
var (
	htmlScripts = []string{"uplot/uPlot.iife.min.js", "report-lib.js", "report.js"}
	htmlStyles  = []string{"uplot/uPlot.min.css", "report.css"}
)

// htmlBase returns the report and collector of the frames of captures
// (from testdata/) read one after another: every part of the page has
// rows (connections, flows with charts, findings, encapsulations,
// tunnels, pause).
func htmlBase(t testing.TB, captures ...string) (*analyze.Report, *htmlreport.Collector) {
	a := analyze.New(analyze.Options{})
	c := htmlreport.NewCollector(htmlreport.DefaultLimits)
	for _, name := range captures {
		cr, err := capture.Open("../testdata/" + name)
		require.NoError(t, err)
		for {
			ci, data, lt, err := cr.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			c.Add(a.Feed(ci, lt, data))
		}
		require.NoError(t, cr.Close())
	}
	return a.Finish(), c
}

// hostile is what FuzzHTMLReport puts in the report's strings: the
// capture's file name, an address (IP, GID, MAC), a CM field, a
// finding's or malformed frame's detail, a name (encapsulation chain,
// tunnel kind, pause kind, transport, finding kind).
type hostile struct{ file, addr, cm, detail, name string }

// withStrings returns a copy of base with h's strings in every string
// field the page may show, base left as it is. The flows and findings of
// even index get the address as their source and destination, the
// others keep theirs (and their charts).
func withStrings(base *analyze.Report, h hostile) *analyze.Report {
	r := *base
	c := &r.Capture
	c.Files = []analyze.CaptureFile{{File: h.file, Frames: c.Frames}}
	c.MalformedFrames = append(slices.Clone(c.MalformedFrames), analyze.Malformed{Frame: 1, Reason: h.detail, File: h.file})
	c.Encapsulations = slices.Clone(c.Encapsulations)
	for i := range c.Encapsulations {
		c.Encapsulations[i].Chain = h.name
	}
	c.Tunnels = slices.Clone(c.Tunnels)
	for i := range c.Tunnels {
		tu := &c.Tunnels[i]
		tu.Kind, tu.IDName, tu.Src, tu.Dst = h.name, h.name, h.addr, h.addr
	}
	r.Connections = slices.Clone(r.Connections)
	for i := range r.Connections {
		cn := &r.Connections[i]
		for _, e := range []*analyze.Endpoint{&cn.Requester, &cn.Responder} {
			e.IP, e.GID = h.addr, &h.addr
		}
		cn.ServiceID, cn.Transport, cn.RDMACMPortSpace = &h.cm, &h.cm, h.cm
		cn.State, cn.RejectReason, cn.CutMessages = h.cm, h.cm, []string{h.cm}
		cn.Frames.Files = &analyze.ConnFrameFiles{REQ: h.file, REP: h.file, RTU: h.file, REJ: h.file, DREQ: h.file, DREP: h.file}
	}
	r.Flows = slices.Clone(r.Flows)
	for i := range r.Flows {
		fl := &r.Flows[i]
		if i%2 == 0 {
			fl.Src, fl.Dst = h.addr, h.addr
		}
		fl.Transport = h.name
		fl.Requests.Gaps = slices.Clone(fl.Requests.Gaps)
		for j := range fl.Requests.Gaps {
			fl.Requests.Gaps[j].File = h.file
		}
		fl.Responses.NAKCodes = map[string]uint64{h.detail: 1}
		fl.Responses.RNRTimers = map[string]uint64{h.detail: 2}
	}
	r.Findings = slices.Clone(r.Findings)
	for i := range r.Findings {
		fd := &r.Findings[i]
		fd.Detail, fd.File = h.detail, h.file
		if i%2 == 0 {
			fd.Flow.Src, fd.Flow.Dst = h.addr, h.addr
			fd.Kind = analyze.Kind(h.name)
		}
	}
	r.Pause = slices.Clone(r.Pause)
	for i := range r.Pause {
		r.Pause[i].SrcMAC, r.Pause[i].Kind = h.addr, h.name
	}
	return &r
}

// renderHTML writes the page of rep with the capture named file and
// parses it.
func renderHTML(t testing.TB, rep *analyze.Report, file string, c *htmlreport.Collector) *html.Node {
	var b bytes.Buffer
	require.NoError(t, htmlreport.Write(&b, "roce-dissect: "+file, rep, []htmlreport.Source{{Name: file, Collector: c}}))
	doc, err := html.Parse(&b)
	require.NoError(t, err)
	return doc
}

// skeleton lists the page's element nodes in document order, each with
// its attributes, and its comments and doctype: everything but text.
func skeleton(n *html.Node) []string {
	var out []string
	for d := range n.Descendants() {
		switch d.Type {
		case html.ElementNode:
			s := d.Data
			for _, a := range d.Attr {
				s += fmt.Sprintf(" %s:%s=%q", a.Namespace, a.Key, a.Val)
			}
			out = append(out, s)
		case html.CommentNode:
			out = append(out, "<!--"+d.Data+"-->")
		case html.DoctypeNode:
			out = append(out, "<!DOCTYPE "+d.Data+">")
		}
	}
	return out
}

// textOf is the text inside n.
func textOf(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

// elements returns the elements below n with tag (and, when id is not
// "", that id), in document order.
func elements(n *html.Node, tag, id string) []*html.Node {
	var out []*html.Node
	for d := range n.Descendants() {
		if d.Type != html.ElementNode || d.Data != tag {
			continue
		}
		if id == "" || slices.Contains(d.Attr, html.Attribute{Key: "id", Val: id}) {
			out = append(out, d)
		}
	}
	return out
}

// FuzzHTMLReport renders the --html page of a report whose strings are
// hostile: the report of testdata captures (erspan3_vxlan.pcap,
// pfc_storm.pcap, loss_nak_gobackn.pcap: connections, flows with charts,
// findings, encapsulations, tunnels, pause) with five fuzzed strings put
// in every string field the page may show (withStrings) and the capture's
// file name in the title and sources. Parsed with golang.org/x/net/html,
// the page must have:
//   - the same elements, attributes, comments and doctype as the page of
//     the same report with plain strings: nothing of the input became
//     markup;
//   - exactly the page's four scripts (its JSON data, uPlot,
//     report-lib.js and report.js, those three byte for byte) and two
//     style sheets;
//   - the title and heading, the encapsulation and tunnel lines and the
//     pause table's sender and kind cells showing the strings as given
//     (when valid UTF-8 without NUL or CR, which an HTML parser changes
//     whatever the escaping);
//   - its JSON data decoding to the title, file names, flow names and
//     the report given (but the tunnels and pause, which the page shows
//     in HTML): no string broke out of it.
func FuzzHTMLReport(f *testing.F) {
	base, col := htmlBase(f, "erspan3_vxlan.pcap", "pfc_storm.pcap", "loss_nak_gobackn.pcap")
	require.NotEmpty(f, base.Connections)
	require.NotEmpty(f, base.Findings)
	require.NotEmpty(f, base.Capture.Tunnels)
	require.NotEmpty(f, base.Pause)
	var scripts, styles []string
	for _, a := range htmlScripts {
		b, err := os.ReadFile("../internal/htmlreport/assets/" + a)
		require.NoError(f, err)
		scripts = append(scripts, string(b))
	}
	for _, a := range htmlStyles {
		b, err := os.ReadFile("../internal/htmlreport/assets/" + a)
		require.NoError(f, err)
		styles = append(styles, string(b))
	}
	plain := skeleton(renderHTML(f, withStrings(base, hostile{"file.pcap", "addr", "cm", "detail", "name"}), "file.pcap", col))
	f.Add("capture.pcap", "10.0.0.1", "established", "PSN 0x000010 NAKed", "erspan3/vxlan")
	f.Add(`</script><script>alert(1)</script>.pcap`, `"><img src=x onerror=alert(1)>`, `'><svg onload=alert(1)>`, `<!--`, `</style><style>*{}</style>`)
	f.Add(`=cmd|' /C calc'!A0.pcap`, "02:50:46:43:01:01", `&lt;b&gt;&amp;`, "]]><![CDATA[", "{{DATA}}{{TITLE}}")
	f.Add("a\u2028b\u2029.pcap", `\u003c/script\u003e`, "<title>", "</textarea><plaintext>", "<script>")
	f.Add("", "", "", "", "")
	f.Add("\xff\x00.pcap", "a\r\nb", "\x00<", "\xc0<", "\r<\x00")
	f.Fuzz(func(t *testing.T, file, addr, cm, detail, name string) {
		h := hostile{file, addr, cm, detail, name}
		plainText := func(ss ...string) bool {
			for _, s := range ss {
				if !utf8.ValidString(s) || strings.ContainsAny(s, "\x00\r") {
					return false
				}
			}
			return true
		}
		rep := withStrings(base, h)
		doc := renderHTML(t, rep, h.file, col)
		require.Equal(t, plain, skeleton(doc), "the page's markup changed with the strings")

		ss := elements(doc, "script", "")
		require.Len(t, ss, 1+len(scripts), "scripts")
		require.Equal(t, []html.Attribute{{Key: "type", Val: "application/json"}, {Key: "id", Val: "report-data"}}, ss[0].Attr)
		for i, s := range scripts {
			require.Empty(t, ss[i+1].Attr)
			require.Equal(t, s, textOf(ss[i+1]), "script %s", htmlScripts[i])
		}
		st := elements(doc, "style", "")
		require.Len(t, st, len(styles), "style sheets")
		for i, s := range styles {
			require.Equal(t, s, textOf(st[i]), "style sheet %s", htmlStyles[i])
		}

		title := "roce-dissect: " + h.file
		if plainText(h.file) {
			require.Equal(t, title, textOf(elements(doc, "title", "")[0]))
			require.Equal(t, title, textOf(elements(doc, "h1", "")[0]))
		}
		plural := func(n uint64, noun string) string {
			if n == 1 {
				return "1 " + noun
			}
			return fmt.Sprintf("%d %ss", n, noun)
		}
		chains := elements(doc, "ul", "encapsulation-chains")
		require.Len(t, chains, 1)
		lis := elements(chains[0], "li", "")
		for i, e := range rep.Capture.Encapsulations[:min(len(rep.Capture.Encapsulations), len(lis))] {
			if !plainText(h.name) {
				break
			}
			require.Equal(t, plural(e.Frames, "frame")+" in "+e.Chain, textOf(lis[i]), "encapsulation %d", i)
		}
		tunnels := elements(doc, "ul", "tunnels")
		require.Len(t, tunnels, 1)
		lis = elements(tunnels[0], "li", "")
		require.NotEmpty(t, lis)
		for i, tu := range rep.Capture.Tunnels[:min(len(rep.Capture.Tunnels), len(lis))] {
			if !plainText(h.name, h.addr) {
				break
			}
			require.Equal(t, report.TunnelName(tu)+": "+plural(tu.Frames, "frame"), textOf(lis[i]), "tunnel %d", i)
		}
		pause := elements(doc, "table", "pause-table")
		require.Len(t, pause, 1)
		rows := elements(elements(pause[0], "tbody", "")[0], "tr", "")
		require.Len(t, rows, len(rep.Pause))
		for i, tr := range rows {
			if !plainText(h.addr, h.name) {
				break
			}
			tds := elements(tr, "td", "")
			require.Equal(t, []string{h.addr, h.name}, []string{textOf(tds[0]), textOf(tds[1])}, "pause row %d", i)
		}

		var d struct {
			Title  string          `json:"title"`
			Files  []string        `json:"files"`
			Report json.RawMessage `json:"report"`
			Flows  []struct {
				Name string `json:"name"`
			} `json:"flows"`
		}
		data := textOf(ss[0])
		require.NotContains(t, data, "<", "the data escapes < (no </script>, no <!--)")
		require.NoError(t, json.Unmarshal([]byte(data), &d))
		asJSON := func(s string) string { // each byte of invalid UTF-8 becomes U+FFFD
			b, err := json.Marshal(s)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &s))
			return s
		}
		require.Equal(t, asJSON(title), d.Title)
		require.Equal(t, []string{asJSON(h.file)}, d.Files)
		require.Len(t, d.Flows, len(rep.Flows))
		for i := range rep.Flows {
			require.Equal(t, asJSON(rep.Flows[i].ID().String()), d.Flows[i].Name)
		}
		shown := *rep
		shown.Capture.Encapsulations, shown.Capture.Tunnels, shown.Pause = nil, nil, nil
		// The page's rows carry neither series, gaps nor NIC figures
		// (htmlreport's select.go); these captures have fewer flows and
		// connections than the page lists.
		shown.Flows = slices.Clone(rep.Flows)
		for i := range shown.Flows {
			shown.Flows[i].Series, shown.Flows[i].Requests.Gaps, shown.Flows[i].NIC = nil, nil, nil
		}
		// The page lists the findings worst first, each severity in the
		// report's order (htmlreport's pickFindings), as the text report.
		shown.Findings = slices.Clone(rep.Findings)
		slices.SortStableFunc(shown.Findings, func(a, b analyze.Finding) int { return cmp.Compare(a.Severity, b.Severity) })
		want, err := json.Marshal(&shown)
		require.NoError(t, err)
		if !bytes.Equal(want, d.Report) { // the same encoder: the same bytes
			require.JSONEq(t, string(want), string(d.Report))
		}
	})
}
