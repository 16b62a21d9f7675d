package cli_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/wrap"
)

// truthCapture writes the capture cfg generates to dir/name and returns
// its path and the generator's truth.
func truthCapture(t *testing.T, dir, name string, cfg synth.Config) (string, *synth.Truth) {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	require.NoError(t, err)
	truth, err := synth.Generate(cfg, f, nil)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return path, truth
}

// wrapCapture writes the frames cfg generates wrapped by w (IDs and
// addresses of its own, not the generator's defaults) to dir/name and
// returns its path and w's truth.
func wrapCapture(t *testing.T, dir, name string, cfg synth.Config, w *wrap.Wrapper) (string, wrap.Truth) {
	t.Helper()
	var buf bytes.Buffer
	_, err := synth.Generate(cfg, &buf, nil)
	require.NoError(t, err)
	r, err := pcapgo.NewReader(&buf)
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	require.NoError(t, err)
	pw := pcapgo.NewWriterNanos(f)
	require.NoError(t, pw.WriteFileHeader(262144, r.LinkType()))
	for {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		out, orig, err := w.Wrap(nil, data, ci.Length, ci.Timestamp)
		require.NoError(t, err)
		ci.CaptureLength, ci.Length = len(out), orig
		require.NoError(t, pw.WritePacket(ci, out))
	}
	require.NoError(t, f.Close())
	return path, w.Truth()
}

// csvRecords reads CSV output as maps from the header's names.
func csvRecords(t *testing.T, out string) []map[string]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	var recs []map[string]string
	for _, row := range rows[1:] {
		m := map[string]string{}
		for i, name := range rows[0] {
			m[name] = row[i]
		}
		recs = append(recs, m)
	}
	return recs
}

// tunnelKey is a tunnel as the truth and -P -o json's wraps name it;
// id -1 for none (ERSPAN I, whose session the analyzer cannot see).
type tunnelKey struct {
	kind, src, dst string
	id             int64
}

// TestWrapsInEveryOutput: captures a switch mirror or an overlay
// delivered (the generator's --wrap, and one wrapped with IDs and
// addresses of its own), read as one run with an unwrapped one, show
// their encapsulation in the Parquet packets table, -P -o json and -P -o
// csv as the generator's truth says: every frame in its chain, the
// mirror session and switch of the ERSPAN wrap, the identifier of the
// innermost tunnel, each tunnel's frames; the unwrapped capture's are
// null or absent, as are the flows' pause columns (no pause frames),
// and the pause table is there, empty.
func TestWrapsInEveryOutput(t *testing.T) {
	dir := t.TempDir()
	base := synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 4, MsgSize: 4096, MTU: 1024}
	base.ECN = []synth.PSNRef{{Value: 1, Relative: true}, {Value: 5, Relative: true}} // CNPs, on their own priority
	cases := []struct {
		spec string
		want wrapWant
		w    *wrap.Wrapper // nil: the generator wraps (Config.Wrap)
	}{
		{"erspan3,vxlan", wrapWant{"erspan3/vxlan", "erspan3", "vxlan", "VNI", false, false}, nil},
		{"erspan2", wrapWant{"erspan2", "erspan2", "", "", false, false}, nil},
		{"erspan1", wrapWant{"erspan1", "erspan1", "", "", true, false}, nil},
		{"erspan3-platform", wrapWant{"erspan3", "erspan3-platform", "", "", false, false}, nil},
		{"geneve", wrapWant{"geneve", "", "geneve", "VNI", false, false}, nil},
		{"nvgre", wrapWant{"nvgre", "", "nvgre", "VSID", false, false}, nil},
		{"qinq", wrapWant{"qinq", "", "qinq", "S-VLAN", false, false}, nil},
		{"mpls", wrapWant{"mpls", "", "mpls", "label", false, false}, nil},
		{"qinq,mpls", wrapWant{"qinq/mpls", "", "mpls", "label", false, true}, nil},
		{"erspan2,geneve", wrapWant{"erspan2/geneve", "erspan2", "geneve", "VNI", false, false}, &wrap.Wrapper{SessionID: 300, VNI: 0xABCDE,
			MirrorSrc: netip.MustParseAddr("198.51.100.7"), MirrorDst: netip.MustParseAddr("198.51.100.8")}},
	}
	wr := &wrapRun{truths: map[string]wrap.Truth{}, wants: map[string]wrapWant{}}
	for i, c := range cases {
		wr.add(t, dir, fmt.Sprintf("w%d.pcap", i), base, c.spec, c.want, c.w)
	}
	wr.plain, _ = truthCapture(t, dir, "plain.pcap", base)
	wr.files = append(wr.files, wr.plain)

	out := t.TempDir()
	code, _, errs := run(t, nil, append([]string{"-o", "json", "--export", out}, wr.files...)...)
	require.Equal(t, 0, code, errs)
	wr.checkParquet(t, out)

	// -P -o json: each line's wraps, outermost first; per tunnel (kind,
	// outer addresses, ID) the frames the truth counts.
	code, nd, errs := run(t, nil, append([]string{"-P", "-o", "json"}, wr.files...)...)
	require.Equal(t, 0, code, errs)
	wr.checkPacketJSON(t, nd)

	// -P -o csv: the columns of the Parquet table.
	code, csvOut, errs := run(t, nil, append([]string{"-P", "-o", "csv"}, wr.files...)...)
	require.Equal(t, 0, code, errs)
	wr.checkPacketCSV(t, csvOut)
}

// wrapWant is what TestWrapsInEveryOutput expects of a wrapped capture.
type wrapWant struct {
	chain           string // as the analyzer names it
	mirror, tunnel  string // the wrap kinds of the mirror_* and tunnel_* columns ("" none)
	idName          string
	sessionNotShown bool // ERSPAN I carries no session ID
	// zeroPrio: the packets' priority is 0, that of the only VLAN
	// tag, an S-tag pushed over an MPLS frame (the wrapper reads no
	// priority from MPLS); else the inner frame's (prio).
	zeroPrio bool
}

// wrapColumns is what the encapsulation columns of a file's rows should
// hold.
type wrapColumns struct {
	chain, mirrorSrc, session, tunnelID, idName any
}

// wrapRun is the captures of TestWrapsInEveryOutput: files, the wrapped
// ones with their truths and wants by file, then plain, the unwrapped
// one.
type wrapRun struct {
	files  []string
	plain  string
	truths map[string]wrap.Truth
	wants  map[string]wrapWant
}

// add writes the capture base generates, wrapped in the chain spec (by
// the generator, or by w where w is not nil), to dir/name, and adds it to
// the run with its truth and want.
func (wr *wrapRun) add(t *testing.T, dir, name string, base synth.Config, spec string, want wrapWant, w *wrap.Wrapper) {
	t.Helper()
	chain, err := wrap.Parse(spec)
	require.NoError(t, err)
	var path string
	if w == nil {
		cfg := base
		cfg.Wrap = chain
		var truth *synth.Truth
		path, truth = truthCapture(t, dir, name, cfg)
		require.NotNil(t, truth.Encapsulation)
		wr.truths[path] = *truth.Encapsulation
	} else {
		w.Chain = chain
		var truth wrap.Truth
		path, truth = wrapCapture(t, dir, name, base, w)
		wr.truths[path] = truth
	}
	wr.files, wr.wants[path] = append(wr.files, path), want
}

// prio is the priority of a packet of file: the generator writes DSCP 26
// (3) on data, ACKs and MADs, 48 (6) on CNPs; an S-tag carries it as
// PCP.
func (wr *wrapRun) prio(file string, cnp bool) float64 {
	switch {
	case wr.wants[file].zeroPrio:
		return 0
	case cnp:
		return 6
	}
	return 3
}

// columns is what the encapsulation columns of file's rows should hold:
// nothing for the unwrapped capture; else the chain, the mirror's source
// and session (where the wrap shows it) and the innermost tunnel's ID and
// its name, from the one tunnel of each kind of the truth.
func (wr *wrapRun) columns(t *testing.T, file string) wrapColumns {
	t.Helper()
	if file == wr.plain {
		return wrapColumns{}
	}
	w, truth := wr.wants[file], wr.truths[file]
	c := wrapColumns{chain: w.chain}
	byKind := map[string]map[wrap.Tunnel]bool{}
	for _, tu := range truth.Tunnels {
		tu.Frames, tu.Dst = 0, ""
		if tu.Kind != w.mirror { // a tunnel's endpoints differ per host; its ID does not
			tu.Src = ""
		}
		if byKind[tu.Kind] == nil {
			byKind[tu.Kind] = map[wrap.Tunnel]bool{}
		}
		byKind[tu.Kind][tu] = true
	}
	one := func(kind string) wrap.Tunnel {
		require.Len(t, byKind[kind], 1, "%s: %s tunnels", file, kind)
		for tu := range byKind[kind] {
			return tu
		}
		return wrap.Tunnel{}
	}
	if w.mirror != "" {
		m := one(w.mirror)
		c.mirrorSrc = m.Src
		if !w.sessionNotShown {
			c.session = float64(m.ID)
		}
	}
	if w.tunnel != "" {
		c.tunnelID, c.idName = float64(one(w.tunnel).ID), w.idName
	}
	return c
}

// checkParquet checks the Parquet tables exported to out: each file's
// packets with their encapsulation columns and priority, every frame of a
// wrapped capture in its chain, CNPs of every file; no flow's pause
// columns, and an empty pause table.
func (wr *wrapRun) checkParquet(t *testing.T, out string) {
	t.Helper()
	cnps := 0
	for i, file := range wr.files {
		rows := readParquet(t, filepath.Join(out, fmt.Sprintf("packets-%05d-000.parquet", i)))
		require.NotEmpty(t, rows, file)
		for _, r := range rows {
			got := wrapColumns{r["encapsulation"], r["mirror_src"], r["mirror_session"], r["tunnel_id"], r["tunnel_id_name"]}
			assert.Equal(t, wr.columns(t, file), got, "%s frame %v", file, r["frame"])
			cnp := r["opcode"] == float64(0x81)
			assert.Equal(t, wr.prio(file, cnp), r["priority"], "%s frame %v", file, r["frame"])
			cnps += b2i(cnp)
		}
		if file != wr.plain {
			truth := wr.truths[file]
			assert.Equal(t, map[string]int{keyOf(truth.Chains): len(rows)}, truth.Chains, "%s: frames in the chain", file)
		}
	}
	assert.Equal(t, 2*len(wr.files), cnps, "CNPs: the priority of each kind of packet is tested")
	for _, f := range readParquet(t, filepath.Join(out, "flows.parquet")) {
		assert.Nil(t, f["priority"])
		assert.Nil(t, f["paused_ns"])
	}
	assert.Empty(t, readParquet(t, filepath.Join(out, "pause.parquet")))
}

// checkPacketJSON checks the lines of -P -o json, nd: the unwrapped
// capture's have no wraps; the others' wraps, outermost first, are their
// chain, and per tunnel (kind, outer addresses, ID) count the frames the
// truth counts.
func (wr *wrapRun) checkPacketJSON(t *testing.T, nd string) {
	t.Helper()
	got := map[string]map[tunnelKey]int{}
	for _, line := range jsonLines(t, nd) {
		file := line["file"].(string)
		if file == wr.plain {
			assert.NotContains(t, line, "wraps", "frame %v", line["frame"])
			continue
		}
		var kinds []string
		for _, x := range asList(line["wraps"]) {
			w := x.(map[string]any)
			k := tunnelKey{kind: w["kind"].(string), id: -1}
			k.src, _ = w["src"].(string)
			k.dst, _ = w["dst"].(string)
			if id, ok := w["id"].(float64); ok {
				k.id = int64(id)
			}
			kinds = append(kinds, k.kind)
			if got[file] == nil {
				got[file] = map[tunnelKey]int{}
			}
			got[file][k]++
		}
		assert.Equal(t, wr.wants[file].chain, strings.Join(kinds, "/"), "%s frame %v", file, line["frame"])
	}
	assert.Equal(t, wr.wantTunnels(), got)
}

// wantTunnels is the frames of each tunnel of each wrapped file as the
// truth counts them, keyed as -P -o json names the tunnel (no session ID
// where the wrap does not show it).
func (wr *wrapRun) wantTunnels() map[string]map[tunnelKey]int {
	want := map[string]map[tunnelKey]int{}
	for file, truth := range wr.truths {
		want[file] = map[tunnelKey]int{}
		for _, tu := range truth.Tunnels {
			k := tunnelKey{kind: strings.TrimSuffix(tu.Kind, "-platform"), src: tu.Src, dst: tu.Dst, id: int64(tu.ID)}
			if wr.wants[file].sessionNotShown {
				k.id = -1
			}
			want[file][k] += tu.Frames
		}
	}
	return want
}

// checkPacketCSV checks the records of -P -o csv, csvOut: the
// encapsulation columns and priority of the Parquet table, no MAC
// Control, and every frame of a wrapped capture.
func (wr *wrapRun) checkPacketCSV(t *testing.T, csvOut string) {
	t.Helper()
	perFile := map[string]int{}
	for _, r := range csvRecords(t, csvOut) {
		file := r["file"]
		perFile[file]++
		w := wr.columns(t, file)
		assert.Equal(t, []string{csvText(w.chain), csvText(w.mirrorSrc), csvText(w.session), csvText(w.tunnelID), csvText(w.idName)},
			[]string{r["encapsulation"], r["mirror_src"], r["mirror_session"], r["tunnel_id"], r["tunnel_id_name"]}, "%s frame %s", file, r["frame"])
		assert.Equal(t, fmt.Sprint(wr.prio(file, r["opcode"] == "129")), r["priority"], "%s frame %s", file, r["frame"])
		assert.Empty(t, r["mac_control"])
	}
	for file, truth := range wr.truths {
		assert.Equal(t, truth.Chains[keyOf(truth.Chains)], perFile[file], file)
	}
}

// csvText is a value of the Parquet or JSON output as the CSV writes it:
// "" for null.
func csvText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case float64:
		return fmt.Sprint(v)
	}
	return v.(string)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// keyOf is the one key of m.
func keyOf(m map[string]int) string {
	for k := range m {
		return k
	}
	return ""
}
