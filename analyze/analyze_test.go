package analyze_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/layers"
)

const softroce = "../../shared/captures/softroce"

// analyzeFile runs the analyzer over a pcap file, optionally only frames
// [from, to) (1-based, to = 0 for the end).
func analyzeFile(t testing.TB, path string, opts analyze.Options, from, to uint64) *analyze.Report {
	t.Helper()
	fh, err := os.Open(path)
	if os.IsNotExist(err) {
		t.Skipf("%s absent: shared captures not available", path)
	}
	require.NoError(t, err)
	defer fh.Close()
	r, err := pcapgo.NewReader(fh)
	require.NoError(t, err)
	a := analyze.New(opts)
	var n uint64
	for {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		n++
		if n < from || (to > 0 && n >= to) {
			continue
		}
		a.Feed(ci, r.LinkType(), data)
	}
	return a.Report()
}

func findFlow(t *testing.T, r *analyze.Report, src, dst string, qp uint32) analyze.Flow {
	t.Helper()
	for _, f := range r.Flows {
		if f.Src == src && f.Dst == dst && f.DestQP == qp {
			return f
		}
	}
	require.Failf(t, "flow not found", "%s → %s QP %d", src, dst, qp)
	return analyze.Flow{}
}

func intp(v int) *int { return &v }

func TestSoftRoCECaptures(t *testing.T) {
	const a, b = "10.1.16.62", "10.1.16.61"
	tests := []struct {
		file        string
		frames      uint64
		roce        uint64
		src, dst    string
		qp          uint32
		reqPackets  uint64
		msgs        uint64
		msgSize     uint64
		inferredMTU *int
		readResps   uint64
	}{
		{"rdma_write_bw.pcap", 60, 20, a, b, 27, 15, 5, 3000, intp(1024), 0},
		{"rdma_send_bw.pcap", 50, 20, a, b, 35, 15, 5, 3000, intp(1024), 0},
		{"rdma_read_bw.pcap", 60, 20, b, a, 30, 0, 5, 3000, intp(1024), 15},
		{"rdma_write_lat.pcap", 45, 20, a, b, 36, 5, 5, 64, nil, 0},
		{"pingpong_uc.pcap", 21, 10, a, b, 33, 5, 5, 1024, nil, 0},
		{"pingpong_ud.pcap", 21, 10, a, b, 34, 5, 5, 1024, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			r := analyzeFile(t, filepath.Join(softroce, tc.file), analyze.Options{}, 0, 0)
			c := r.Capture
			assert.Equal(t, tc.frames, c.Frames)
			assert.Equal(t, tc.roce, c.RoCEPackets)
			assert.Equal(t, c.Frames, c.RoCEPackets+c.OtherPackets+c.Malformed, "counts reconcile")
			f := findFlow(t, r, tc.src, tc.dst, tc.qp)
			assert.Equal(t, tc.reqPackets, f.Requests.Packets)
			assert.Equal(t, uint64(0), f.Requests.Missing)
			assert.Empty(t, f.Requests.Gaps)
			assert.Equal(t, tc.msgs, f.Messages.Count)
			assert.Equal(t, tc.msgSize, f.Messages.MaxSize)
			assert.Equal(t, tc.msgSize, f.Messages.MinSize)
			assert.Equal(t, tc.inferredMTU, f.MTU.Inferred)
			assert.Equal(t, tc.readResps, f.Responses.ReadResponses)
			for _, fl := range r.Flows {
				assert.Zero(t, fl.ICRC.Bad, "flow %s→%s", fl.Src, fl.Dst)
				assert.Equal(t, fl.Packets, fl.ICRC.OK)
			}
			assert.Empty(t, r.Findings)
		})
	}
}

func TestReadRequestsReservePSNs(t *testing.T) {
	r := analyzeFile(t, filepath.Join(softroce, "rdma_read_bw.pcap"), analyze.Options{}, 0, 0)
	f := findFlow(t, r, "10.1.16.62", "10.1.16.61", 28)
	assert.Equal(t, uint64(5), f.Requests.Packets)
	assert.Equal(t, uint64(0), f.Requests.Missing, "a READ request jumps the PSN by ceil(DMALength/PMTU)")
	require.NotNil(t, f.Requests.PSNFirst)
	assert.Equal(t, uint32(12), *f.Requests.PSNLast-*f.Requests.PSNFirst, "5 requests of 3 PSNs each")
}

func TestConnections(t *testing.T) {
	tests := []struct {
		file  string
		conns []analyze.Connection
		// data flows expected to link to connection ID
		linked map[uint32]int
	}{
		{"rping.pcap", []analyze.Connection{{
			ID:        1,
			Requester: analyze.Endpoint{IP: "10.1.16.62", QPN: ptr[uint32](44)},
			Responder: analyze.Endpoint{IP: "10.1.16.61", QPN: ptr[uint32](43)},
			State:     analyze.StateDisconnected,
			PathMTU:   ptr(1024),
		}}, map[uint32]int{43: 1, 44: 1}},
		{"rdma_cm.pcap", []analyze.Connection{
			{ID: 1, Requester: analyze.Endpoint{IP: "10.1.16.62", QPN: ptr[uint32](61)}, Responder: analyze.Endpoint{IP: "10.1.16.61", QPN: ptr[uint32](59)}, State: analyze.StateDisconnected, PathMTU: ptr(1024)},
			{ID: 2, Requester: analyze.Endpoint{IP: "10.1.16.62", QPN: ptr[uint32](62)}, Responder: analyze.Endpoint{IP: "10.1.16.61", QPN: ptr[uint32](60)}, State: analyze.StateDisconnected, PathMTU: ptr(1024)},
		}, map[uint32]int{59: 1, 61: 1, 60: 2, 62: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			r := analyzeFile(t, filepath.Join(softroce, tc.file), analyze.Options{}, 0, 0)
			require.Len(t, r.Connections, len(tc.conns))
			for i, want := range tc.conns {
				got := r.Connections[i]
				assert.Equal(t, want.ID, got.ID)
				assert.Equal(t, want.Requester.IP, got.Requester.IP)
				assert.Equal(t, want.Requester.QPN, got.Requester.QPN)
				assert.Equal(t, want.Responder.IP, got.Responder.IP)
				assert.Equal(t, want.Responder.QPN, got.Responder.QPN)
				assert.Equal(t, want.State, got.State)
				assert.Equal(t, want.PathMTU, got.PathMTU)
				assert.Equal(t, ptr(true), got.Requester.LIDPlaceholder)
				assert.NotZero(t, got.Frames.REQ)
				assert.NotZero(t, got.Frames.REP)
				assert.NotZero(t, got.Frames.DREQ)
				assert.NotZero(t, got.Frames.DREP)
			}
			for _, f := range r.Flows {
				if id, ok := tc.linked[f.DestQP]; ok {
					require.NotNil(t, f.Connection, "flow to QP %d", f.DestQP)
					assert.Equal(t, id, *f.Connection)
					require.NotNil(t, f.MTU.Negotiated)
					assert.Equal(t, 1024, *f.MTU.Negotiated)
				}
			}
		})
	}
}

func TestJSONKeys(t *testing.T) {
	r := analyzeFile(t, filepath.Join(softroce, "rping.pcap"), analyze.Options{}, 0, 0)
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	get := func(v any, path ...any) any {
		for _, p := range path {
			switch k := p.(type) {
			case string:
				obj, ok := v.(map[string]any)
				require.True(t, ok, "not an object at %v", p)
				v, ok = obj[k]
				require.True(t, ok, "key %q missing", k)
			case int:
				arr, ok := v.([]any)
				require.True(t, ok)
				v = arr[k]
			}
		}
		return v
	}
	for _, k := range []string{"frames", "roce_packets", "malformed"} {
		get(m, "capture", k)
	}
	for _, side := range []string{"requester", "responder"} {
		for _, k := range []string{"qpn", "starting_psn", "gid", "lid"} {
			get(m, "connections", 0, side, k)
		}
	}
	get(m, "connections", 0, "path_mtu")
	get(m, "connections", 0, "state")
	for _, k := range []string{"src", "dst", "dest_qp", "transport", "packets", "wire_bytes", "payload_bytes", "throughput_bps", "wire_bps"} {
		get(m, "flows", 0, k)
	}
	for _, k := range []string{"psn_first", "psn_last", "missing", "retransmitted", "duplicates", "out_of_order"} {
		get(m, "flows", 0, "requests", k)
	}
	// A flow writes no null and no empty list: those keys are absent
	// (docs/json.md). rping's first flow has no gap and no RTT sample.
	flow0 := get(m, "flows", 0).(map[string]any)
	assert.NotContains(t, flow0["requests"], "gaps")
	assert.NotContains(t, flow0["responses"], "rtt")
	for _, f := range get(m, "flows").([]any) {
		assertNoNullOrEmptyList(t, "flow", f)
	}
	for _, k := range []string{"acks", "naks", "rnr_naks"} {
		get(m, "flows", 0, "responses", k)
	}
	get(m, "flows", 0, "messages", "count")
	for _, k := range []string{"max_payload"} { // inferred, negotiated: absent when unknown
		get(m, "flows", 0, "mtu", k)
	}
	get(m, "flows", 0, "congestion", "ecn_ce")
	get(m, "flows", 0, "congestion", "cnps")
	for _, k := range []string{"ok", "bad", "unverifiable"} {
		get(m, "flows", 0, "icrc", k)
	}
	assert.IsType(t, "", get(m, "capture", "first_time"), "times are RFC 3339 strings")
	assert.Regexp(t, `^0x[0-9a-f]{16}$`, get(m, "connections", 0, "service_id"))
}

// assertNoNullOrEmptyList fails on a null or an empty list anywhere in
// v, a flow's generic JSON.
func assertNoNullOrEmptyList(t *testing.T, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case nil:
		t.Errorf("%s: null", path)
	case []any:
		assert.NotEmpty(t, x, "%s: an empty list", path)
		for i, e := range x {
			assertNoNullOrEmptyList(t, fmt.Sprintf("%s[%d]", path, i), e)
		}
	case map[string]any:
		for k, e := range x {
			assertNoNullOrEmptyList(t, path+"."+k, e)
		}
	}
}

func TestMergeHalves(t *testing.T) {
	for _, file := range []string{"rdma_write_bw.pcap", "rdma_read_bw.pcap", "pingpong_rc.pcap"} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join(softroce, file)
			whole := analyzeFile(t, path, analyze.Options{}, 0, 0)
			// Split between messages: frame 31 of these captures starts one.
			first := analyzeFile(t, path, analyze.Options{}, 0, 31)
			second := analyzeFile(t, path, analyze.Options{}, 31, 0)
			require.NoError(t, first.Merge(second))
			// Frame numbers differ per half; compare the flows.
			require.Len(t, first.Flows, len(whole.Flows))
			for i := range whole.Flows {
				w, m := whole.Flows[i], first.Flows[i]
				assert.Equal(t, w.Packets, m.Packets)
				assert.Equal(t, w.PayloadBytes, m.PayloadBytes)
				assert.Equal(t, w.WireBytes, m.WireBytes)
				assert.Equal(t, w.Requests.Packets, m.Requests.Packets)
				assert.Equal(t, w.Requests.PSNFirst, m.Requests.PSNFirst)
				assert.Equal(t, w.Requests.PSNLast, m.Requests.PSNLast)
				assert.Equal(t, w.Requests.Missing, m.Requests.Missing)
				assert.Equal(t, w.Messages.Count, m.Messages.Count)
				assert.Equal(t, w.Series, m.Series)
				assert.Equal(t, w.ThroughputBps, m.ThroughputBps)
			}
			assert.Equal(t, whole.Capture.Frames, first.Capture.Frames)
			assert.Equal(t, whole.Capture.RoCEPackets, first.Capture.RoCEPackets)
		})
	}
}

// readFrames returns the frames of a pcap file, skipping the test when the
// shared captures are absent.
func readFrames(t testing.TB, path string) ([][]byte, []gopacket.CaptureInfo, gplayers.LinkType) {
	t.Helper()
	if _, err := os.Stat(path); os.IsNotExist(err) {
		t.Skipf("%s absent: shared captures not available", path)
	}
	frames, cis, lt, err := loadFrames(path)
	require.NoError(t, err)
	return frames, cis, lt
}

// loadFrames reads every frame of a pcap file.
func loadFrames(path string) ([][]byte, []gopacket.CaptureInfo, gplayers.LinkType, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	defer fh.Close()
	r, err := pcapgo.NewReader(fh)
	if err != nil {
		return nil, nil, 0, err
	}
	var frames [][]byte
	var cis []gopacket.CaptureInfo
	for {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, 0, err
		}
		frames = append(frames, data)
		cis = append(cis, ci)
	}
	return frames, cis, r.LinkType(), nil
}

func TestHeaderOnlyCapture(t *testing.T) {
	for _, file := range []string{"rdma_write_bw.pcap", "rdma_read_bw.pcap", "rdma_send_bw.pcap", "rping.pcap", "rdma_cm.pcap"} {
		t.Run(file, func(t *testing.T) {
			frames, cis, lt := readFrames(t, filepath.Join(softroce, file))
			full := analyze.New(analyze.Options{})
			cut := analyze.New(analyze.Options{})
			for i, data := range frames {
				full.Feed(cis[i], lt, data)
				ci := cis[i]
				if len(data) > 128 {
					data = data[:128]
					ci.CaptureLength = 128
				}
				cut.Feed(ci, lt, data)
			}
			w, c := full.Report(), cut.Report()
			require.Len(t, c.Flows, len(w.Flows))
			assert.Equal(t, w.Capture.RoCEPackets, c.Capture.RoCEPackets)
			assert.Zero(t, c.Capture.Malformed)
			for i := range w.Flows {
				wf, cf := w.Flows[i], c.Flows[i]
				assert.Equal(t, wf.Packets, cf.Packets)
				assert.Equal(t, wf.PayloadBytes, cf.PayloadBytes)
				assert.Equal(t, wf.Requests.Missing, cf.Requests.Missing)
				assert.Equal(t, wf.Requests.Gaps, cf.Requests.Gaps)
				assert.Equal(t, wf.MTU.Inferred, cf.MTU.Inferred)
				assert.Equal(t, wf.MTU.MaxPayload, cf.MTU.MaxPayload)
				assert.Equal(t, wf.Messages, cf.Messages)
				assert.Equal(t, wf.ICRC.OK+wf.ICRC.Unverifiable, cf.ICRC.OK+cf.ICRC.Unverifiable)
				assert.Zero(t, cf.ICRC.Bad)
			}
			var unverifiable uint64
			for _, f := range c.Flows {
				unverifiable += f.ICRC.Unverifiable
			}
			assert.NotZero(t, unverifiable, "frames longer than 128 bytes cannot have their ICRC checked")
		})
	}
}

func TestZeroAllocsPerPacket(t *testing.T) {
	frames, cis, lt := readFrames(t, filepath.Join(softroce, "rdma_write_bw.pcap"))
	a := analyze.New(analyze.Options{})
	// Take one RDMA WRITE MIDDLE and make a stream of them with rising PSNs
	// and correct ICRCs: a flow in its steady state.
	var tmpl []byte
	var tci gopacket.CaptureInfo
	var base uint32
	for i := range frames {
		p := a.Feed(cis[i], lt, frames[i])
		if p.BTH != nil && p.BTH.Opcode == layers.OpcodeRCRDMAWriteMiddle {
			tmpl, tci, base = frames[i], cis[i], p.BTH.PSN+100
		}
	}
	require.NotNil(t, tmpl)
	const n = 2000
	stream := make([][]byte, n)
	for i := range stream {
		f := append([]byte(nil), tmpl...)
		psn := (base + uint32(i)) & 0xFFFFFF
		f[14+20+8+9], f[14+20+8+10], f[14+20+8+11] = byte(psn>>16), byte(psn>>8), byte(psn)
		ib := f[14+20+8 : len(f)-4]
		crc, err := layers.ComputeICRC(layers.NetworkIPv4, f[14:34], f[34:42], ib)
		require.NoError(t, err)
		binary.LittleEndian.PutUint32(f[len(f)-4:], crc)
		stream[i] = f
	}
	a.Feed(tci, lt, stream[0])
	i := 1
	allocs := testing.AllocsPerRun(n-10, func() {
		p := a.Feed(tci, lt, stream[i])
		if p.Findings != 0 || p.ICRC.Status != layers.ICRCOK {
			r := a.Report()
			t.Fatalf("frame %d: %d findings, ICRC %s: %+v", i, p.Findings, p.ICRC.Status, r.Findings[len(r.Findings)-1])
		}
		i++
	})
	assert.Zero(t, allocs)
}

// TestSteadyStateAllocations feeds a generated capture of every operation
// (writes, sends, READ requests and responses, ACKs, CM) and counts the
// allocations of its second half, once every flow exists: only the
// amortized growth of the per-interval series may allocate.
func TestSteadyStateAllocations(t *testing.T) {
	var buf bytes.Buffer
	_, err := synth.Generate(synth.Config{Scenario: synth.ScenarioMix, Packets: 100_000, QPs: 16, MTU: 1024}, &buf, nil)
	require.NoError(t, err)
	r, err := capture.NewReader(&buf)
	require.NoError(t, err)
	type frame struct {
		ci   gopacket.CaptureInfo
		data []byte
	}
	var frames []frame
	var lt gplayers.LinkType
	for {
		ci, data, l, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		lt = l
		frames = append(frames, frame{ci, append([]byte(nil), data...)})
	}
	a := analyze.New(analyze.Options{})
	half := len(frames) / 2
	for _, f := range frames[:half] {
		a.Feed(f.ci, lt, f.data)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	findings := 0
	for _, f := range frames[half:] {
		findings += a.Feed(f.ci, lt, f.data).Findings
	}
	runtime.ReadMemStats(&after)
	require.Zero(t, findings, "a clean capture")
	perPacket := float64(after.Mallocs-before.Mallocs) / float64(len(frames)-half)
	t.Logf("%.5f allocations per packet", perPacket)
	assert.Less(t, perPacket, 0.001, "%d allocations for %d packets", after.Mallocs-before.Mallocs, len(frames)-half)
}

func ptr[T any](v T) *T { return &v }
