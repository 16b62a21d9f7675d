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
	type want struct {
		chain           string // as the analyzer names it
		mirror, tunnel  string // the wrap kinds of the mirror_* and tunnel_* columns ("" none)
		idName          string
		sessionNotShown bool // ERSPAN I carries no session ID
		// zeroPrio: the packets' priority is 0, that of the only VLAN
		// tag, an S-tag pushed over an MPLS frame (the wrapper reads no
		// priority from MPLS); else the inner frame's (prio).
		zeroPrio bool
	}
	// prio is a packet's priority: the generator writes DSCP 26 (3) on
	// data, ACKs and MADs, 48 (6) on CNPs; an S-tag carries it as PCP.
	prio := func(w want, cnp bool) float64 {
		switch {
		case w.zeroPrio:
			return 0
		case cnp:
			return 6
		}
		return 3
	}
	cases := []struct {
		spec string
		want want
		w    *wrap.Wrapper // nil: the generator wraps (Config.Wrap)
	}{
		{"erspan3,vxlan", want{"erspan3/vxlan", "erspan3", "vxlan", "VNI", false, false}, nil},
		{"erspan2", want{"erspan2", "erspan2", "", "", false, false}, nil},
		{"erspan1", want{"erspan1", "erspan1", "", "", true, false}, nil},
		{"erspan3-platform", want{"erspan3", "erspan3-platform", "", "", false, false}, nil},
		{"geneve", want{"geneve", "", "geneve", "VNI", false, false}, nil},
		{"nvgre", want{"nvgre", "", "nvgre", "VSID", false, false}, nil},
		{"qinq", want{"qinq", "", "qinq", "S-VLAN", false, false}, nil},
		{"mpls", want{"mpls", "", "mpls", "label", false, false}, nil},
		{"qinq,mpls", want{"qinq/mpls", "", "mpls", "label", false, true}, nil},
		{"erspan2,geneve", want{"erspan2/geneve", "erspan2", "geneve", "VNI", false, false}, &wrap.Wrapper{SessionID: 300, VNI: 0xABCDE,
			MirrorSrc: netip.MustParseAddr("198.51.100.7"), MirrorDst: netip.MustParseAddr("198.51.100.8")}},
	}
	var files []string
	truths := map[string]wrap.Truth{} // by file
	wants := map[string]want{}
	for i, c := range cases {
		chain, err := wrap.Parse(c.spec)
		require.NoError(t, err)
		name := fmt.Sprintf("w%d.pcap", i)
		var path string
		if c.w == nil {
			cfg := base
			cfg.Wrap = chain
			var truth *synth.Truth
			path, truth = truthCapture(t, dir, name, cfg)
			require.NotNil(t, truth.Encapsulation)
			truths[path] = *truth.Encapsulation
		} else {
			c.w.Chain = chain
			var truth wrap.Truth
			path, truth = wrapCapture(t, dir, name, base, c.w)
			truths[path] = truth
		}
		files, wants[path] = append(files, path), c.want
	}
	plain, _ := truthCapture(t, dir, "plain.pcap", base)
	files = append(files, plain)

	// mirrorTunnel is what the columns of a file's rows should hold.
	type columns struct {
		chain, mirrorSrc, session, tunnelID, idName any
	}
	expect := func(file string) columns {
		w, truth := wants[file], truths[file]
		c := columns{chain: w.chain}
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

	out := t.TempDir()
	code, _, errs := run(t, nil, append([]string{"-o", "json", "--export", out}, files...)...)
	require.Equal(t, 0, code, errs)
	cnps := 0
	for i, file := range files {
		rows := readParquet(t, filepath.Join(out, fmt.Sprintf("packets-%05d-000.parquet", i)))
		require.NotEmpty(t, rows, file)
		for _, r := range rows {
			got := columns{r["encapsulation"], r["mirror_src"], r["mirror_session"], r["tunnel_id"], r["tunnel_id_name"]}
			if file == plain {
				assert.Equal(t, columns{}, got, "%s frame %v", file, r["frame"])
			} else {
				assert.Equal(t, expect(file), got, "%s frame %v", file, r["frame"])
			}
			cnp := r["opcode"] == float64(0x81)
			assert.Equal(t, prio(wants[file], cnp), r["priority"], "%s frame %v", file, r["frame"])
			cnps += b2i(cnp)
		}
		if file != plain {
			truth := truths[file]
			assert.Equal(t, map[string]int{keyOf(truth.Chains): len(rows)}, truth.Chains, "%s: frames in the chain", file)
		}
	}
	assert.Equal(t, 2*len(files), cnps, "CNPs: the priority of each kind of packet is tested")
	for _, f := range readParquet(t, filepath.Join(out, "flows.parquet")) {
		assert.Nil(t, f["priority"])
		assert.Nil(t, f["paused_ns"])
	}
	assert.Empty(t, readParquet(t, filepath.Join(out, "pause.parquet")))

	// -P -o json: each line's wraps, outermost first; per tunnel (kind,
	// outer addresses, ID) the frames the truth counts.
	code, nd, errs := run(t, nil, append([]string{"-P", "-o", "json"}, files...)...)
	require.Equal(t, 0, code, errs)
	got, wantTunnels := map[string]map[tunnelKey]int{}, map[string]map[tunnelKey]int{}
	for _, line := range jsonLines(t, nd) {
		file := line["file"].(string)
		if file == plain {
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
		assert.Equal(t, wants[file].chain, strings.Join(kinds, "/"), "%s frame %v", file, line["frame"])
	}
	for file, truth := range truths {
		wantTunnels[file] = map[tunnelKey]int{}
		for _, tu := range truth.Tunnels {
			k := tunnelKey{kind: strings.TrimSuffix(tu.Kind, "-platform"), src: tu.Src, dst: tu.Dst, id: int64(tu.ID)}
			if wants[file].sessionNotShown {
				k.id = -1
			}
			wantTunnels[file][k] += tu.Frames
		}
	}
	assert.Equal(t, wantTunnels, got)

	// -P -o csv: the columns of the Parquet table.
	code, csvOut, errs := run(t, nil, append([]string{"-P", "-o", "csv"}, files...)...)
	require.Equal(t, 0, code, errs)
	perFile := map[string]int{}
	for _, r := range csvRecords(t, csvOut) {
		file := r["file"]
		perFile[file]++
		text := func(v any) string {
			switch v := v.(type) {
			case nil:
				return ""
			case float64:
				return fmt.Sprint(v)
			}
			return v.(string)
		}
		var w columns
		if file != plain {
			w = expect(file)
		}
		assert.Equal(t, []string{text(w.chain), text(w.mirrorSrc), text(w.session), text(w.tunnelID), text(w.idName)},
			[]string{r["encapsulation"], r["mirror_src"], r["mirror_session"], r["tunnel_id"], r["tunnel_id_name"]}, "%s frame %s", file, r["frame"])
		assert.Equal(t, fmt.Sprint(prio(wants[file], r["opcode"] == "129")), r["priority"], "%s frame %s", file, r["frame"])
		assert.Empty(t, r["mac_control"])
	}
	for file, truth := range truths {
		assert.Equal(t, truth.Chains[keyOf(truth.Chains)], perFile[file], file)
	}
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
