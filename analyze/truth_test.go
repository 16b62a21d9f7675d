package analyze_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/analyzetest"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// eachFrame calls fn with every frame of a capture held in memory.
func eachFrame(t testing.TB, capBytes []byte, fn func(gopacket.CaptureInfo, gplayers.LinkType, []byte)) {
	t.Helper()
	r, err := capture.NewReader(bytes.NewReader(capBytes))
	require.NoError(t, err)
	for {
		ci, data, lt, err := r.Next()
		if err == io.EOF {
			return
		}
		require.NoError(t, err)
		fn(ci, lt, data)
	}
}

// analyzeCapture runs the analyzer over any capture the reader takes.
func analyzeCapture(t *testing.T, path string, opts analyze.Options) *analyze.Report {
	return analyzetest.Report(t, path, opts)
}

// toMap turns a value into its generic JSON form.
func toMap(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// absentMeansIt reports whether a key absent from a flow of the report
// stands for v: null, or an empty list (docs/json.md).
func absentMeansIt(v any) bool {
	l, isList := v.([]any)
	return v == nil || isList && len(l) == 0
}

// subset reports every difference between the values the truth states
// and the report's values at the same keys.
func subset(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", path, got)}
		}
		var diffs []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok && strings.HasPrefix(path, "flow ") && absentMeansIt(wv) {
				continue // docs/json.md: a flow's null and empty-list keys are absent
			}
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: missing from the report", path, k))
				continue
			}
			diffs = append(diffs, subset(path+"."+k, wv, gv)...)
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, subset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return diffs
	default:
		// A NIC figure's median is exact up to 15 samples, beyond within
		// the histogram's 1/16 (package analyze/internal/nic).
		if wf, ok := want.(float64); ok && strings.Contains(path, ".nic.") && strings.HasSuffix(path, ".median") {
			if gf, ok := got.(float64); ok && math.Abs(gf-wf) <= math.Abs(wf)/16 {
				return nil
			}
		}
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
		}
	}
	return nil
}

// TestGeneratedCapturesMatchTruth runs the analyzer over every capture in
// testdata/ that roce-synth wrote and compares each field its truth file
// states.
func TestGeneratedCapturesMatchTruth(t *testing.T) {
	truths, err := filepath.Glob("../testdata/*.truth.json")
	require.NoError(t, err)
	require.NotEmpty(t, truths, "testdata/ holds the generated captures")
	for _, truthFile := range truths {
		capFile := strings.TrimSuffix(truthFile, ".truth.json")
		t.Run(filepath.Base(capFile), func(t *testing.T) {
			raw, err := os.ReadFile(truthFile)
			require.NoError(t, err)
			var truth synth.Truth
			require.NoError(t, json.Unmarshal(raw, &truth))
			// Pause quanta are timed at the link speed the generator used.
			rep := analyzeCapture(t, capFile, analyze.Options{LinkSpeed: float64(truth.LinkSpeedBps)})
			diffs := compareTruth(t, raw, rep)
			assert.Empty(t, diffs, "report differs from the truth:\n%s", strings.Join(diffs, "\n"))
			if len(truth.Pause) > 0 {
				checkPauseTruth(t, &truth, rep)
			}
			if truth.Encapsulation != nil {
				checkWrapSummary(t, *truth.Encapsulation, rep.Capture)
			} else {
				assert.Empty(t, rep.Capture.Encapsulations)
			}
		})
	}
}

// compareTruth returns every difference between a truth JSON and a report.
func compareTruth(t *testing.T, raw []byte, report *analyze.Report) []string {
	t.Helper()
	var truth map[string]any
	require.NoError(t, json.Unmarshal(raw, &truth))
	rep := toMap(t, report).(map[string]any)
	var diffs []string
	capt := rep["capture"].(map[string]any)
	for _, k := range []string{"frames", "roce_packets", "cut_frames", "malformed"} {
		if v, ok := truth[k]; ok {
			diffs = append(diffs, subset(k, v, capt[k])...)
		}
	}
	if v, ok := truth["capture"]; ok {
		diffs = append(diffs, subset("capture", v, capt)...)
	}
	if tf, ok := truth["findings"].([]any); ok {
		diffs = append(diffs, compareFindings(tf, report.Findings)...)
	}
	flows := rep["flows"].([]any)
	tflows, _ := truth["flows"].([]any)
	if len(flows) != len(tflows) {
		diffs = append(diffs, fmt.Sprintf("%d flows, the truth has %d", len(flows), len(tflows)))
	}
	for _, tf := range tflows {
		tfm := tf.(map[string]any)
		key := fmt.Sprintf("%v→%v/%v", tfm["src"], tfm["dst"], tfm["dest_qp"])
		var found any
		for _, f := range flows {
			fm := f.(map[string]any)
			if fmt.Sprintf("%v→%v/%v", fm["src"], fm["dst"], fm["dest_qp"]) == key {
				found = fm
			}
		}
		if found == nil {
			diffs = append(diffs, "flow "+key+": not in the report")
			continue
		}
		diffs = append(diffs, subset("flow "+key, tfm, found)...)
	}
	// The truth lists the CM handshakes it wrote; the RC pairs the report
	// infers without one are TestInferredConnections', checked against
	// the QPNs of those handshakes.
	var conns []any
	for _, c := range rep["connections"].([]any) {
		if c.(map[string]any)["state"] != analyze.StateInferred {
			conns = append(conns, c)
		}
	}
	tconns, _ := truth["connections"].([]any)
	if len(conns) != len(tconns) {
		diffs = append(diffs, fmt.Sprintf("%d connections, the truth has %d", len(conns), len(tconns)))
	}
	for i, tc := range tconns {
		if i < len(conns) {
			diffs = append(diffs, subset(fmt.Sprintf("connections[%d]", i), tc, conns[i])...)
		}
	}
	return diffs
}

// compareFindings compares the findings the truth expects with the
// report's as an exact multiset of (kind, severity, frame).
func compareFindings(want []any, got []analyze.Finding) []string {
	key := func(kind, sev string, frame any) string { return fmt.Sprintf("%s/%s@%v", kind, sev, frame) }
	count := map[string]int{}
	for _, w := range want {
		m := w.(map[string]any)
		count[key(m["kind"].(string), m["severity"].(string), m["frame"])]++
	}
	for _, g := range got {
		count[key(string(g.Kind), g.Severity.String(), g.Frame)]--
	}
	var diffs []string
	for k, n := range count {
		switch {
		case n > 0:
			diffs = append(diffs, fmt.Sprintf("finding %s: expected %d more times", k, n))
		case n < 0:
			diffs = append(diffs, fmt.Sprintf("finding %s: reported %d times more than expected", k, -n))
		}
	}
	sort.Strings(diffs)
	return diffs
}

// scaleImpairments turns every PSN offset of im, which names request
// packets by index, into k times it: a READ REQUEST of k path MTUs
// reserves k PSNs.
func scaleImpairments(im synth.Impairments, k uint32) synth.Impairments {
	for _, l := range []*[]synth.PSNRef{&im.Drop, &im.NAK, &im.RNR, &im.Dup, &im.Reorder, &im.ECN, &im.CorruptICRC} {
		refs := make([]synth.PSNRef, len(*l))
		for i, r := range *l {
			refs[i] = synth.PSNRef{Value: r.Value * k, Relative: true}
		}
		*l = refs
	}
	return im
}

// requestShape is the PSNs per request k, the messages and their size
// with which scenario sc has at least 12 request packets at path MTU
// mtu, so that every index an impairment names exists.
func requestShape(sc string, mtu int) (k uint32, msgs, size int) {
	k, msgs, size = 1, 6, 3*mtu
	switch sc {
	case synth.ScenarioReadBW:
		k, msgs = 3, 12
	case synth.ScenarioAtomic:
		msgs = 18
	case synth.ScenarioUD:
		msgs, size = 18, mtu
	}
	return k, msgs, size
}

// generateAndCompare generates cfg in memory, analyzes it and asserts
// that the report is the generator's truth field by field; it returns the
// truth and the report, or nils where cfg does not generate.
func generateAndCompare(t *testing.T, cfg synth.Config, label string) (*synth.Truth, *analyze.Report) {
	t.Helper()
	var capBuf, truthBuf bytes.Buffer
	truth, err := synth.Generate(cfg, &capBuf, &truthBuf)
	if !assert.NoError(t, err, label) {
		return nil, nil
	}
	a := analyze.New(analyze.Options{})
	eachFrame(t, capBuf.Bytes(), func(ci gopacket.CaptureInfo, lt gplayers.LinkType, data []byte) { a.Feed(ci, lt, data) })
	rep := a.Report()
	diffs := compareTruth(t, truthBuf.Bytes(), rep)
	assert.Empty(t, diffs, "%s: report differs from the truth:\n%s", label, strings.Join(diffs, "\n"))
	return truth, rep
}

// matrixRuns reports whether TestScenarioMatrix runs impairment name on
// scenario sc over enc at path MTU mtu: every MTU clean and with loss,
// every impairment at 1024, ECN only where there is an IP header to mark,
// and no NAK or RNR NAK on UD, which is not acknowledged.
func matrixRuns(sc string, enc synth.Encap, mtu int, name string) bool {
	if name == "ecn" && !enc.RoCEv2() || sc == synth.ScenarioUD && (name == "nak" || name == "drop+nak" || name == "lost-last" || name == "rnr") {
		return false
	}
	return mtu == 1024 || name == "clean" || name == "drop+nak"
}

// TestScenarioMatrix generates every scenario over every encapsulation and
// path MTU, with every impairment, in memory, and compares the report with
// the generator's truth field by field.
func TestScenarioMatrix(t *testing.T) {
	// Impairments name request packets by index; scaleImpairments turns
	// them into PSN offsets.
	impairments := map[string]synth.Impairments{
		"clean":    {},
		"drop":     {Drop: rel(3, 10)},
		"nak":      {NAK: rel(5)},
		"drop+nak": {Drop: rel(2), NAK: rel(8)},
		// A message's LAST lost in the network and NAKed: the next message
		// begins before it, and the resend completes it.
		"lost-last":    {Drop: rel(2), NAK: rel(2)},
		"dup+reorder":  {Dup: rel(4), Reorder: rel(9)},
		"rnr":          {RNR: rel(6)},
		"corrupt-icrc": {CorruptICRC: rel(1, 7)},
		"ecn":          {ECN: rel(2, 3, 11)},
	}
	encaps := []synth.Encap{synth.EncapIPv4, synth.EncapIPv6, synth.EncapVLAN, synth.EncapRoCEv1, synth.EncapIB, synth.EncapERF}
	scenarios := []string{synth.ScenarioWriteBW, synth.ScenarioReadBW, synth.ScenarioSendBW, synth.ScenarioAtomic, synth.ScenarioUD}
	n := 0
	for _, sc := range scenarios {
		for _, enc := range encaps {
			for _, mtu := range []int{256, 512, 1024, 2048, 4096} {
				for name, im := range impairments {
					if !matrixRuns(sc, enc, mtu, name) {
						continue
					}
					k, msgs, size := requestShape(sc, mtu)
					for _, snap := range []int{0, 128} {
						cfg := synth.Config{Scenario: sc, Encap: enc, MTU: mtu, Messages: msgs, MsgSize: size, SnapLen: snap, Impairments: scaleImpairments(im, k)}
						if truth, _ := generateAndCompare(t, cfg, fmt.Sprintf("%s/%s/mtu%d/%s/snap%d", sc, enc, mtu, name, snap)); truth != nil {
							n++
						}
					}
				}
			}
		}
	}
	t.Logf("%d generated captures compared with their truth", n)
}

// TestMergeHalvesOfGeneratedCaptures splits each testdata capture in two,
// analyzes the halves separately and checks that their merged report
// equals the report of the whole capture, flow by flow.
func TestMergeHalvesOfGeneratedCaptures(t *testing.T) {
	caps, err := filepath.Glob("../testdata/*.pcap*")
	require.NoError(t, err)
	for _, file := range caps {
		if strings.HasSuffix(file, ".json") {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			r, err := capture.Open(file)
			require.NoError(t, err)
			defer r.Close()
			type frame struct {
				ci   gopacket.CaptureInfo
				lt   gplayers.LinkType
				data []byte
			}
			var frames []frame
			for {
				ci, data, lt, err := r.Next()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				frames = append(frames, frame{ci, lt, append([]byte(nil), data...)})
			}
			whole, first, second := analyze.New(analyze.Options{}), analyze.New(analyze.Options{}), analyze.New(analyze.Options{})
			for i, f := range frames {
				whole.Feed(f.ci, f.lt, f.data)
				if i < len(frames)/2 {
					first.Feed(f.ci, f.lt, f.data)
				} else {
					second.Feed(f.ci, f.lt, f.data)
				}
			}
			w, m := whole.Report(), first.Report()
			require.NoError(t, m.Merge(second.Report()))
			assert.Equal(t, w.Capture.Frames, m.Capture.Frames)
			assert.Equal(t, w.Capture.RoCEPackets, m.Capture.RoCEPackets)
			assert.Equal(t, w.Capture.NotCaptured, m.Capture.NotCaptured)
			for i := range w.Connections {
				if i < len(m.Connections) {
					assert.Equal(t, w.Connections[i].Requester.SendPSN, m.Connections[i].Requester.SendPSN)
					assert.Equal(t, w.Connections[i].Responder.SendPSN, m.Connections[i].Responder.SendPSN)
				}
			}
			assert.Equal(t, len(w.Connections), len(m.Connections))
			require.Equal(t, len(w.Flows), len(m.Flows))
			byKey := map[string]analyze.Flow{}
			for _, f := range m.Flows {
				byKey[fmt.Sprint(f.Src, f.Dst, f.DestQP)] = f
			}
			for _, wf := range w.Flows {
				mf, ok := byKey[fmt.Sprint(wf.Src, wf.Dst, wf.DestQP)]
				require.True(t, ok)
				label := fmt.Sprintf("%s → %s QP %d", wf.Src, wf.Dst, wf.DestQP)
				assert.Equal(t, wf.Packets, mf.Packets, label)
				assert.Equal(t, wf.PayloadBytes, mf.PayloadBytes, label)
				assert.Equal(t, wf.WireBytes, mf.WireBytes, label)
				assert.Equal(t, wf.Transport, mf.Transport, label)
				assert.Equal(t, wf.Requests.Packets, mf.Requests.Packets, label)
				assert.Equal(t, wf.Requests.PSNFirst, mf.Requests.PSNFirst, label)
				assert.Equal(t, wf.Requests.PSNLast, mf.Requests.PSNLast, label)
				assert.Equal(t, wf.Requests.Missing, mf.Requests.Missing, label)
				assert.Equal(t, wf.Requests.Retransmitted, mf.Requests.Retransmitted, label)
				assert.Equal(t, wf.Requests.Duplicates, mf.Requests.Duplicates, label)
				assert.Equal(t, wf.Requests.OutOfOrder, mf.Requests.OutOfOrder, label)
				assert.Equal(t, wf.Requests.MissingNotCaptured, mf.Requests.MissingNotCaptured, label)
				assert.Equal(t, wf.Requests.MissingLost, mf.Requests.MissingLost, label)
				assert.Equal(t, wf.Requests.RetransmitCauses, mf.Requests.RetransmitCauses, label)
				require.Equal(t, len(wf.Requests.Gaps), len(mf.Requests.Gaps), label)
				for i, g := range wf.Requests.Gaps {
					mg := mf.Requests.Gaps[i]
					assert.Equal(t, [3]uint32{g.From, g.To, g.Count}, [3]uint32{mg.From, mg.To, mg.Count}, label)
				}
				assert.Equal(t, wf.Responses.ACKs, mf.Responses.ACKs, label)
				assert.Equal(t, wf.Responses.NAKs, mf.Responses.NAKs, label)
				assert.Equal(t, wf.Messages, mf.Messages, label)
				assert.Equal(t, wf.Ops, mf.Ops, label)
				assert.Equal(t, wf.Responses.RNRNAKs, mf.Responses.RNRNAKs, label)
				assert.Equal(t, wf.Responses.NAKCodes, mf.Responses.NAKCodes, label)
				assert.Equal(t, wf.Responses.ReadResponses, mf.Responses.ReadResponses, label)
				assert.Equal(t, wf.Responses.AtomicACKs, mf.Responses.AtomicACKs, label)
				assert.Equal(t, wf.Congestion, mf.Congestion, label)
				assert.Equal(t, wf.ICRC, mf.ICRC, label)
				assert.Equal(t, wf.MTU, mf.MTU, label)
				assert.Equal(t, wf.Connection, mf.Connection, label)
				assert.Equal(t, wf.Series, mf.Series, label)
				assert.Equal(t, wf.ThroughputBps, mf.ThroughputBps, label)
			}
		})
	}
}

// TestMergeUnrelatedCaptures merges the reports of two different runs
// whose flows share their keys: each keeps its own PSN stream (no gap
// invented between them) and its own connection.
func TestMergeUnrelatedCaptures(t *testing.T) {
	a := analyzeCapture(t, "../testdata/write_bw_ipv4.pcap", analyze.Options{})
	b := analyzeCapture(t, "../testdata/ecn_cnp.pcap", analyze.Options{})
	var missing uint64
	for _, r := range []*analyze.Report{a, b} {
		for _, f := range r.Flows {
			missing += f.Requests.Missing
		}
	}
	conns := len(a.Connections) + len(b.Connections)
	require.NoError(t, a.Merge(b))
	var merged uint64
	for _, f := range a.Flows {
		merged += f.Requests.Missing
	}
	assert.Equal(t, missing, merged, "no gap between unrelated PSN streams")
	assert.Len(t, a.Connections, conns-1, "the two runs' handshakes are byte-identical (same generator seed): one connection")

	// Same CommIDs and QPNs, other addresses: two connections.
	c := analyzeCapture(t, "../testdata/write_bw_ipv4.pcap", analyze.Options{})
	require.NoError(t, c.Merge(analyzeCapture(t, "../testdata/send_bw_ipv6.pcapng", analyze.Options{})))
	assert.Len(t, c.Connections, 2)
}

// TestMergeCompletesConnections: the halves of a capture cut between the
// REQ and the DREP merge into one disconnected connection.
func TestMergeCompletesConnections(t *testing.T) {
	r, err := capture.Open("../testdata/write_bw_ipv4.pcap")
	require.NoError(t, err)
	defer r.Close()
	first, second := analyze.New(analyze.Options{}), analyze.New(analyze.Options{})
	for i := 0; ; i++ {
		ci, data, lt, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if i < 2 { // REQ and REP in the first part; RTU, data, DREQ, DREP in the second
			first.Feed(ci, lt, data)
		} else {
			second.Feed(ci, lt, data)
		}
	}
	m := first.Report()
	require.NoError(t, m.Merge(second.Report()))
	require.Len(t, m.Connections, 1)
	assert.Equal(t, analyze.StateDisconnected, m.Connections[0].State)
	assert.NotZero(t, m.Connections[0].Frames.DREP)
	assert.NotZero(t, m.Connections[0].Frames.RTU)
}

// TestMixImpairedMatchesTruth: many connections of a mix, each with the
// same impairments (relative to its first PSN), give the truth's report:
// the loss, NAKs, RNR NAKs, duplicates, reordering, ECN marks and bad
// ICRCs of each flow, among the others' traffic (issue 23: mix refused
// impairments, so no many-QP capture with loss could be made).
func TestMixImpairedMatchesTruth(t *testing.T) {
	rel := func(vs ...uint32) []synth.PSNRef {
		var out []synth.PSNRef
		for _, v := range vs {
			out = append(out, synth.PSNRef{Value: v, Relative: true})
		}
		return out
	}
	impairments := map[string]synth.Impairments{
		"drop+nak":     {Drop: rel(2), NAK: rel(8)},
		"lost-last":    {Drop: rel(2), NAK: rel(2)},
		"rnr":          {RNR: rel(5)},
		"dup+reorder":  {Dup: rel(4), Reorder: rel(9)},
		"ecn":          {ECN: rel(2, 3, 11)},
		"corrupt-icrc": {CorruptICRC: rel(1, 7)},
	}
	n := 0
	for name, im := range impairments {
		for _, enc := range []synth.Encap{synth.EncapIPv4, synth.EncapIPv6, synth.EncapRoCEv1, synth.EncapIB} {
			if name == "ecn" && !enc.RoCEv2() {
				continue
			}
			label := fmt.Sprintf("mix/%s/%s", enc, name)
			cfg := synth.Config{Scenario: synth.ScenarioMix, Encap: enc, Packets: 2000, QPs: 12, Seed: 7, MixOp: "write", Impairments: im}
			var capBuf, truthBuf bytes.Buffer
			if _, err := synth.Generate(cfg, &capBuf, &truthBuf); !assert.NoError(t, err, label) {
				continue
			}
			a := analyze.New(analyze.Options{})
			s := analyze.NewSharded(analyze.Options{}, 3)
			eachFrame(t, capBuf.Bytes(), func(ci gopacket.CaptureInfo, lt gplayers.LinkType, data []byte) {
				a.Feed(ci, lt, data)
				s.Feed(ci, lt, data)
			})
			diffs := compareTruth(t, truthBuf.Bytes(), a.Report())
			assert.Empty(t, diffs, "%s: report differs from the truth:\n%s", label, strings.Join(diffs, "\n"))
			sharded, err := s.Finish()
			require.NoError(t, err, label)
			diffs = compareTruth(t, truthBuf.Bytes(), sharded)
			assert.Empty(t, diffs, "%s in 3 shards: report differs from the truth:\n%s", label, strings.Join(diffs, "\n"))
			n++
		}
	}
	t.Logf("%d impaired mixes compared with their truth, sequentially and in shards", n)
}
