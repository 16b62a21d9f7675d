package analyze_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/wrap"
)

// tenantFrames is one tenant's copy of a capture: its frames wrapped in
// one tunnel, their times shifted by a lag.
type tenantFrames struct {
	frames [][]byte
	cis    []gopacket.CaptureInfo
}

// wrapTenant wraps frames in chain with tunnel identifier id (the VNI or
// VSID, and the ERSPAN session ID), their times lag later.
func wrapTenant(t *testing.T, chain string, id uint32, frames [][]byte, cis []gopacket.CaptureInfo, lag time.Duration) tenantFrames {
	t.Helper()
	c, err := wrap.Parse(chain)
	require.NoError(t, err)
	w := &wrap.Wrapper{Chain: c, VNI: id, SessionID: uint16(id)}
	var out tenantFrames
	for i, f := range frames {
		ts := cis[i].Timestamp.Add(lag)
		b, orig, err := w.Wrap(nil, f, cis[i].Length, ts)
		require.NoError(t, err, "frame %d", i+1)
		out.frames = append(out.frames, b)
		out.cis = append(out.cis, gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(b), Length: orig})
	}
	return out
}

// mergeTenants merges the tenants' frames by time, as one capture point
// on the underlay sees them.
func mergeTenants(ts ...tenantFrames) ([][]byte, []gopacket.CaptureInfo) {
	var frames [][]byte
	var cis []gopacket.CaptureInfo
	next := make([]int, len(ts))
	for {
		best := -1
		for k, tf := range ts {
			if next[k] < len(tf.frames) && (best < 0 || tf.cis[next[k]].Timestamp.Before(ts[best].cis[next[best]].Timestamp)) {
				best = k
			}
		}
		if best < 0 {
			return frames, cis
		}
		frames, cis = append(frames, ts[best].frames[next[best]]), append(cis, ts[best].cis[next[best]])
		next[best]++
	}
}

// TestTunnelsKeepTenantsApart: two tenants of an overlay run generated
// traffic of the same inner addresses, QPs and first PSNs (roce-synth's
// seed), each its own amount, in VXLAN VNI 100 and 200 (GENEVE, NVGRE,
// ERSPAN sessions 100 and 200 likewise), the second a little later. Each
// tenant's flows are as its own truth says: no PSN missing, none out of
// order, a flow and a connection for each of its truth's. Read as one flow
// each, the copies made thousands of PSNs missing and hundreds out of
// order. Shards (-j 3) give the same report.
func TestTunnelsKeepTenantsApart(t *testing.T) {
	type tenant struct {
		id     uint32
		frames [][]byte
		cis    []gopacket.CaptureInfo
		truth  map[string]any
	}
	var tenants []tenant
	var lt gplayers.LinkType
	for i, cfg := range []synth.Config{
		{Scenario: synth.ScenarioMix, Packets: 4000, QPs: 4, MTU: 1024},
		{Scenario: synth.ScenarioMix, Packets: 3000, QPs: 4, MTU: 1024, MsgSize: 3000},
	} {
		capBytes, truthBytes := generateBytes(t, cfg)
		path := filepath.Join(t.TempDir(), "mix.pcap")
		require.NoError(t, os.WriteFile(path, capBytes, 0o600))
		frames, cis, l, err := loadFrames(path)
		require.NoError(t, err)
		tn := tenant{id: uint32(100 * (i + 1)), frames: frames, cis: cis}
		require.NoError(t, json.Unmarshal(truthBytes, &tn.truth))
		tenants, lt = append(tenants, tn), l
	}
	var nflows, nconns int
	for _, tn := range tenants {
		nflows += len(tn.truth["flows"].([]any))
		nconns += len(tn.truth["connections"].([]any))
	}

	for _, tc := range []struct {
		chain, kind, idName string
	}{
		{"vxlan", "vxlan", "VNI"},
		{"geneve", "geneve", "VNI"},
		{"nvgre", "nvgre", "VSID"},
		{"erspan2", "erspan2", "session"},
		{"erspan3", "erspan3", "session"},
		{"erspan3,vxlan", "vxlan", "VNI"}, // a mirrored overlay: the VNI, not the mirror's session, tells tenants apart
	} {
		t.Run(tc.chain, func(t *testing.T) {
			var wrapped []tenantFrames
			for i, tn := range tenants {
				wrapped = append(wrapped, wrapTenant(t, tc.chain, tn.id, tn.frames, tn.cis, time.Duration(3*i)*time.Microsecond))
			}
			mf, mci := mergeTenants(wrapped...)
			rep := analyzeFrames(mf, mci, lt)
			assert.Zero(t, rep.Capture.Malformed)
			require.Equal(t, nflows, len(rep.Flows), "a flow for each of the truths'")
			assert.Equal(t, nconns, len(rep.Connections), "a connection for each of the truths'")
			perTunnel := map[uint32]int{}
			for _, c := range rep.Connections {
				if assert.NotNil(t, c.Tunnel, "connection %d", c.ID) {
					assert.Equal(t, tc.kind, c.Tunnel.Kind)
					perTunnel[c.Tunnel.ID]++
				}
			}
			for _, tn := range tenants {
				assert.Equal(t, len(tn.truth["connections"].([]any)), perTunnel[tn.id], "connections in tunnel %d", tn.id)
			}
			got := toMap(t, rep).(map[string]any)["flows"].([]any)
			for _, tn := range tenants {
				want := map[string]any{"kind": tc.kind, "id": float64(tn.id), "id_name": tc.idName}
				for _, tf := range tn.truth["flows"].([]any) {
					tfm := tf.(map[string]any)
					key := fmt.Sprintf("%v → %v QP %v in %v", tfm["src"], tfm["dst"], tfm["dest_qp"], want)
					var found map[string]any
					for _, f := range got {
						fm := f.(map[string]any)
						if fm["src"] == tfm["src"] && fm["dst"] == tfm["dst"] && fm["dest_qp"] == tfm["dest_qp"] && assert.ObjectsAreEqual(want, fm["tunnel"]) {
							found = fm
						}
					}
					if !assert.NotNil(t, found, "flow %s: not in the report", key) {
						continue
					}
					assert.Empty(t, subset("flow "+key, tfm, found))
					req := found["requests"].(map[string]any)
					assert.Equal(t, float64(0), req["missing"], key)
					assert.Equal(t, float64(0), req["out_of_order"], key)
				}
			}
			for _, fd := range rep.Findings {
				assert.NotContains(t, []analyze.Kind{analyze.KindPSNGap, analyze.KindOutOfOrder, analyze.KindRetransmission, analyze.KindDuplicate}, fd.Kind,
					"frame %d: %s %s", fd.Frame, fd.FlowName(), fd.Detail)
			}

			s := analyze.NewSharded(analyze.Options{}, 3)
			for i, f := range mf {
				s.Feed(mci[i], lt, f)
			}
			sharded, err := s.Finish()
			require.NoError(t, err)
			want, err := json.Marshal(rep)
			require.NoError(t, err)
			gotJSON, err := json.Marshal(sharded)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(gotJSON), "-j 3 as -j 1, byte for byte")
		})
	}
}

// TestTunnelsKeepPathMTUsApart: a READ request's PSN span follows the
// path MTU, known for a flow without a connection only from the FIRST and
// MIDDLE packets between the same hosts. Two tenants' hosts of the same
// addresses are other hosts: tenant 100 writes at MTU 1024 first, tenant
// 200 reads over DC (no CM) at MTU 4096, and its flows are as its truth
// says, not spans of 1024 bytes.
func TestTunnelsKeepPathMTUsApart(t *testing.T) {
	var wrapped []tenantFrames
	var truth map[string]any
	var lt gplayers.LinkType
	for i, cfg := range []synth.Config{
		{Scenario: synth.ScenarioWriteBW, MTU: 1024, Messages: 4, MsgSize: 8192},
		{Scenario: synth.ScenarioReadBW, MTU: 4096, Messages: 8, MsgSize: 16384, DC: true},
	} {
		capBytes, truthBytes := generateBytes(t, cfg)
		path := filepath.Join(t.TempDir(), "tenant.pcap")
		require.NoError(t, os.WriteFile(path, capBytes, 0o600))
		frames, cis, l, err := loadFrames(path)
		require.NoError(t, err)
		lag := time.Duration(0)
		if i == 1 {
			lag = cis[len(cis)-1].Timestamp.Sub(cis[0].Timestamp) + time.Microsecond // after tenant 100's traffic
			require.NoError(t, json.Unmarshal(truthBytes, &truth))
		}
		wrapped, lt = append(wrapped, wrapTenant(t, "vxlan", uint32(100*(i+1)), frames, cis, lag)), l
	}
	mf, mci := mergeTenants(wrapped...)
	rep := analyzeFrames(mf, mci, lt)
	got := toMap(t, rep).(map[string]any)["flows"].([]any)
	want := map[string]any{"kind": "vxlan", "id": float64(200), "id_name": "VNI"}
	for _, tf := range truth["flows"].([]any) {
		tfm := tf.(map[string]any)
		key := fmt.Sprintf("%v → %v QP %v", tfm["src"], tfm["dst"], tfm["dest_qp"])
		var found map[string]any
		for _, f := range got {
			fm := f.(map[string]any)
			if fm["src"] == tfm["src"] && fm["dst"] == tfm["dst"] && fm["dest_qp"] == tfm["dest_qp"] && assert.ObjectsAreEqual(want, fm["tunnel"]) {
				found = fm
			}
		}
		if assert.NotNil(t, found, "flow %s in VNI 200: not in the report", key) {
			assert.Empty(t, subset("flow "+key, tfm, found))
		}
	}
}

// TestTunnelsKeepTenantsApartAcrossMerge: the same RC connection set up
// by CM in two tenants (VXLAN VNI 100 and 200: the same addresses, QPNs
// and CommIDs), the capture cut in two after both REQs and the parts'
// reports merged. Each REP, RTU, DREQ and DREP after the seam joins the
// connection of its own tenant, so every connection ends disconnected as
// in the whole capture's report; before, the second tenant's REP joined
// the first tenant's connection and the second stayed "requested".
func TestTunnelsKeepTenantsApartAcrossMerge(t *testing.T) {
	frames, cis, lt, err := loadFrames("../testdata/write_bw_ipv4.pcap")
	require.NoError(t, err)
	var wrapped []tenantFrames
	for i, id := range []uint32{100, 200} {
		wrapped = append(wrapped, wrapTenant(t, "vxlan", id, frames, cis, time.Duration(i)*time.Nanosecond))
	}
	mf, mci := mergeTenants(wrapped...)
	whole := analyzeFrames(mf, mci, lt)
	require.Len(t, whole.Connections, 2)
	states := func(r *analyze.Report) []string {
		var s []string
		for _, c := range r.Connections {
			s = append(s, fmt.Sprintf("%v %s", c.Tunnel.ID, c.State))
		}
		return s
	}
	require.Equal(t, []string{"100 disconnected", "200 disconnected"}, states(whole))
	// Cut right after the second tenant's REQ, the first frame after
	// which the frames so far hold both connections.
	seam := 1
	for len(analyzeFrames(mf[:seam], mci[:seam], lt).Connections) < 2 {
		seam++
	}
	first := analyzeFrames(mf[:seam], mci[:seam], lt)
	second := analyzeFrames(mf[seam:], mci[seam:], lt)
	require.NoError(t, first.Merge(second))
	assert.Equal(t, states(whole), states(first))
}
