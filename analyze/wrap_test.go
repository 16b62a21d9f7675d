package analyze_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/wrap"
)

// wrapChains are the encapsulations the tests wrap captures in: each kind
// alone, and nestings a mirrored overlay or a provider edge gives.
var wrapChains = []string{
	"erspan1", "erspan2", "erspan3", "erspan3-platform", "vxlan", "geneve", "nvgre", "qinq", "mpls",
	"erspan2,vxlan", "erspan3,geneve", "qinq,mpls", "erspan2,qinq", "vxlan,nvgre",
}

// wrapFrames wraps the Ethernet frames of a capture in chain (a frame the
// chain cannot wrap, MPLS around RoCE v1, stays as it was), keeping the
// captured bytes and adding the overhead to the original length.
func wrapFrames(t *testing.T, chain string, frames [][]byte, cis []gopacket.CaptureInfo) ([][]byte, []gopacket.CaptureInfo, wrap.Truth) {
	t.Helper()
	c, err := wrap.Parse(chain)
	require.NoError(t, err)
	w := &wrap.Wrapper{Chain: c, SessionID: 7, VNI: 5001}
	out := make([][]byte, len(frames))
	outCI := make([]gopacket.CaptureInfo, len(frames))
	for i, f := range frames {
		b, orig, err := w.Wrap(nil, f, cis[i].Length, cis[i].Timestamp)
		if errors.Is(err, wrap.ErrFrame) {
			out[i], outCI[i] = f, cis[i]
			continue
		}
		require.NoError(t, err, "frame %d", i+1)
		out[i] = b
		outCI[i] = gopacket.CaptureInfo{Timestamp: cis[i].Timestamp, CaptureLength: len(b), Length: orig}
	}
	return out, outCI, w.Truth()
}

// ethernetCaptures are the Ethernet captures of testdata and of
// ../shared/captures.
func ethernetCaptures(t *testing.T) []string {
	files, err := filepath.Glob("../testdata/*.pcap")
	require.NoError(t, err)
	real, _ := filepath.Glob("../../shared/captures/*/*.pcap")
	var out []string
	for _, f := range append(files, real...) {
		if _, _, lt, err := loadFrames(f); err == nil && lt == gplayers.LinkTypeEthernet {
			out = append(out, f)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// TestWrappedIsUnwrapped checks that a capture wrapped as switch mirrors
// and overlays deliver it (ERSPAN I, II, III, VXLAN, GENEVE, NVGRE, QinQ,
// MPLS, and nestings) gives the report of the capture itself: the same
// flows, connections and findings, with the encapsulations and tunnels
// the wrapper used (its truth) in the capture summary; and that shards
// place the wrapped frames by their inner hosts.
func TestWrappedIsUnwrapped(t *testing.T) {
	for _, file := range ethernetCaptures(t) {
		frames, cis, lt, err := loadFrames(file)
		require.NoError(t, err)
		want := analyzeFrames(frames, cis, lt)
		if len(want.Capture.Encapsulations) > 0 {
			continue // wrapped already: TestGeneratedCapturesMatchTruth compares it with its truth
		}
		for _, chain := range wrapChains {
			t.Run(filepath.Base(file)+"/"+chain, func(t *testing.T) {
				wf, wci, truth := wrapFrames(t, chain, frames, cis)
				got := analyzeFrames(wf, wci, lt)
				checkWrapSummary(t, truth, got.Capture)

				s := analyze.NewSharded(analyze.Options{}, 3)
				for i, f := range wf {
					s.Feed(wci[i], lt, f)
				}
				sharded, err := s.Finish()
				require.NoError(t, err)
				checkSameReport(t, got, sharded, false)
				assert.Equal(t, got.Capture.Encapsulations, sharded.Capture.Encapsulations)
				assert.Equal(t, got.Capture.Tunnels, sharded.Capture.Tunnels)

				untunnel(t, got, flowTunnelOf(t, chain))
				onWire := strings.Contains(chain, "qinq") || strings.Contains(chain, "mpls")
				checkSameReport(t, want, got, onWire)
			})
		}
	}
}

// flowTunnelOf is the tunnel wrapFrames's wrapper keys the flows of chain
// by: its innermost ERSPAN II or III session (7), VXLAN or GENEVE VNI or
// NVGRE VSID (5001); nil for a chain of none.
func flowTunnelOf(t *testing.T, chain string) *analyze.FlowTunnel {
	t.Helper()
	kinds := strings.Split(chain, ",")
	for i := len(kinds) - 1; i >= 0; i-- {
		switch kinds[i] {
		case "erspan2":
			return &analyze.FlowTunnel{Kind: "erspan2", ID: 7, IDName: "session"}
		case "erspan3", "erspan3-platform":
			return &analyze.FlowTunnel{Kind: "erspan3", ID: 7, IDName: "session"}
		case "vxlan", "geneve":
			return &analyze.FlowTunnel{Kind: kinds[i], ID: 5001, IDName: "VNI"}
		case "nvgre":
			return &analyze.FlowTunnel{Kind: "nvgre", ID: 5001, IDName: "VSID"}
		}
	}
	return nil
}

// untunnel checks that every flow and connection of rep, and every
// finding about a flow, is in tunnel want, and removes it from them: the
// report is then that of the traffic captured as sent.
func untunnel(t *testing.T, rep *analyze.Report, want *analyze.FlowTunnel) {
	t.Helper()
	for i := range rep.Connections {
		c := &rep.Connections[i]
		assert.Equal(t, want, c.Tunnel, "connection %d", c.ID)
		c.Tunnel = nil
	}
	for i := range rep.Flows {
		f := &rep.Flows[i]
		assert.Equal(t, want, f.Tunnel, "flow %s", f.Name())
		f.Tunnel = nil
	}
	for i := range rep.Findings {
		fd := &rep.Findings[i]
		if fd.Flow != (analyze.FlowID{}) {
			assert.Equal(t, want.String(), fd.Flow.Tunnel, "finding %d", i)
			fd.Flow.Tunnel = ""
		}
	}
}

// checkSameReport compares two reports of one traffic. With onWire, the
// encapsulation (QinQ tags, MPLS labels) was on the wire of got's flows,
// which count it in their wire bytes and rates.
func checkSameReport(t *testing.T, want, got *analyze.Report, onWire bool) {
	t.Helper()
	w, g := want.Capture, got.Capture
	assert.Equal(t, w.Frames, g.Frames)
	assert.Equal(t, w.RoCEPackets, g.RoCEPackets)
	assert.Equal(t, w.OtherPackets, g.OtherPackets)
	assert.Equal(t, w.Malformed, g.Malformed)
	assert.Equal(t, w.NotCaptured, g.NotCaptured)
	assert.Equal(t, w.ICRCPortRewritten, g.ICRCPortRewritten)
	assert.Equal(t, w.CutFrames, g.CutFrames)
	assert.Equal(t, w.MalformedFrames, g.MalformedFrames)
	assert.Equal(t, want.Connections, got.Connections)
	require.Equal(t, len(want.Flows), len(got.Flows))
	for i := range want.Flows {
		wf, gf := want.Flows[i], got.Flows[i]
		if onWire {
			assert.GreaterOrEqual(t, gf.WireBytes, wf.WireBytes)
		}
		wj, gj := flowJSON(t, wf, onWire), flowJSON(t, gf, onWire)
		if wj != gj {
			i := 0
			for i < len(wj) && i < len(gj) && wj[i] == gj[i] {
				i++
			}
			lo := max(i-120, 0)
			t.Errorf("flow %s → %s QP %d differs at byte %d:\nwant …%s\ngot  …%s", wf.Src, wf.Dst, wf.DestQP, i, wj[lo:min(i+80, len(wj))], gj[lo:min(i+80, len(gj))])
		}
	}
	require.Equal(t, len(want.Findings), len(got.Findings))
	for i := range want.Findings {
		wf, gf := want.Findings[i], got.Findings[i]
		if wf.Kind == analyze.KindToolCutFrames {
			wf.Detail, gf.Detail = "", "" // names the cut length, the wrapped frame's
		}
		assert.Equal(t, wf, gf)
	}
}

// wireKeys are the flow fields that count wire bytes.
var wireKeys = []string{"wire_bytes", "wire_bps", "series", "rate_before_cnp_bps", "rate_after_cnp_bps"}

// flowJSON is a flow's JSON; without its wire byte counts with noWire.
func flowJSON(t *testing.T, f analyze.Flow, noWire bool) string {
	t.Helper()
	b, err := json.Marshal(f)
	require.NoError(t, err)
	if !noWire {
		return string(b)
	}
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	var drop func(v any)
	drop = func(v any) {
		if o, ok := v.(map[string]any); ok {
			for _, k := range wireKeys {
				delete(o, k)
			}
			for _, x := range o {
				drop(x)
			}
		}
	}
	drop(m)
	b, err = json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}

// checkWrapSummary compares the capture summary's encapsulations and
// tunnels with what the wrapper did.
func checkWrapSummary(t *testing.T, truth wrap.Truth, c analyze.Capture) {
	t.Helper()
	// The analyzer names both ERSPAN III forms erspan3.
	name := func(s string) string { return strings.ReplaceAll(s, "erspan3-platform", "erspan3") }
	chains := map[string]uint64{}
	for ch, n := range truth.Chains {
		chains[name(ch)] += uint64(n)
	}
	got := map[string]uint64{}
	for _, e := range c.Encapsulations {
		got[e.Chain] = e.Frames
	}
	assert.Equal(t, chains, got, "encapsulations")
	type tun struct {
		kind, src, dst string
		id             uint32
	}
	tunnels := map[tun]uint64{}
	for _, tu := range truth.Tunnels {
		id := tu.ID
		if tu.Kind == "erspan1" {
			id = 0 // ERSPAN I has no session ID on the wire
		}
		tunnels[tun{name(tu.Kind), tu.Src, tu.Dst, id}] += uint64(tu.Frames)
	}
	gotTunnels := map[tun]uint64{}
	for _, tu := range c.Tunnels {
		var id uint32
		if tu.ID != nil {
			id = *tu.ID
		}
		gotTunnels[tun{tu.Kind, tu.Src, tu.Dst, id}] += tu.Frames
	}
	assert.Equal(t, tunnels, gotTunnels, "tunnels")
}

// TestWrapChainsBounded: a capture whose frames arrive in more chains of
// encapsulations than Capture.Encapsulations lists counts the frames of
// the others in EncapsulationFramesUnlisted, sequentially and in shards,
// so that a hostile capture (a new nesting in every frame) cannot grow the
// report with its frames.
func TestWrapChainsBounded(t *testing.T) {
	frames, cis, lt, err := loadFrames("../testdata/write_bw_ipv4.pcap")
	require.NoError(t, err)
	kinds := []string{"erspan1", "erspan2", "erspan3", "vxlan", "geneve", "nvgre"}
	var wf [][]byte
	var wci []gopacket.CaptureInfo
	for _, a := range kinds {
		for _, b := range kinds {
			for _, c := range kinds[:3] {
				chain, err := wrap.Parse(a + "," + b + "," + c)
				require.NoError(t, err)
				w := &wrap.Wrapper{Chain: chain}
				out, orig, err := w.Wrap(nil, frames[0], cis[0].Length, cis[0].Timestamp)
				require.NoError(t, err, "%s", chain)
				wf = append(wf, out)
				wci = append(wci, gopacket.CaptureInfo{Timestamp: cis[0].Timestamp, CaptureLength: len(out), Length: orig})
			}
		}
	}
	require.Greater(t, len(wf), 64)
	check := func(name string, c analyze.Capture) {
		t.Helper()
		assert.Len(t, c.Encapsulations, 64, name)
		total := c.EncapsulationFramesUnlisted
		for _, e := range c.Encapsulations {
			assert.Equal(t, uint64(1), e.Frames, "%s: %s", name, e.Chain)
			total += e.Frames
		}
		assert.Equal(t, uint64(len(wf)), total, "%s: every frame counted once", name)
	}
	rep := analyzeFrames(wf, wci, lt)
	check("sequential", rep.Capture)
	s := analyze.NewSharded(analyze.Options{}, 3)
	for i, f := range wf {
		s.Feed(wci[i], lt, f)
	}
	sharded, err := s.Finish()
	require.NoError(t, err)
	check("sharded", sharded.Capture)
}
