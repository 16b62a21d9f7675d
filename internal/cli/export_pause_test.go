package cli_test

import (
	"fmt"
	"math"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// pauseStream is a --pfc or --pause of the generator.
type pauseStream struct {
	kind synth.PauseKind
	spec string
}

// pauseTruthCapture writes a capture of RDMA WRITEs (on priority 3)
// with the pause frames of streams, timed at 25 Gb/s, to dir/name; it
// returns its path, the generator's truth and each pause frame as
// written, by frame number.
func pauseTruthCapture(t *testing.T, dir, name string, streams ...pauseStream) (string, *synth.Truth, map[int]synth.FrameInfo) {
	t.Helper()
	cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 20, MsgSize: 4096, MTU: 1024}
	cfg.Pause.LinkSpeedGbps = 25
	for _, s := range streams {
		ps, err := synth.ParsePauseSpec(s.kind, false, s.spec)
		require.NoError(t, err)
		cfg.Pause.Streams = append(cfg.Pause.Streams, ps)
	}
	frames := map[int]synth.FrameInfo{}
	cfg.OnFrame = func(fi *synth.FrameInfo) {
		if fi.Pause != nil {
			c := *fi
			c.Data, c.Pause = nil, new(*fi.Pause)
			frames[fi.Index] = c
		}
	}
	path, truth := truthCapture(t, dir, name, cfg)
	require.NotEmpty(t, truth.Pause)
	require.NotEmpty(t, frames)
	return path, truth, frames
}

// within asserts got is want within 1 % (the analyzer times pauses as
// the truth does, to rounding: analyze's TestPauseIsTruth).
func within(t *testing.T, want, got float64, msg string, args ...any) {
	t.Helper()
	assert.LessOrEqual(t, math.Abs(got-want), 0.01*want+1, "want %v, got %v: %s", want, got, fmt.Sprintf(msg, args...))
}

// TestPauseInEveryOutput: a capture with PFC and 802.3x PAUSE frames
// shows what they did as the generator's truth says: the Parquet pause
// table (each sender and priority: frames, XOFF, XON, quanta exactly,
// paused and longest times within 1 %, the link speed), written from the
// report held whole and while it is built (-o parquet, -j 1 and -j 3);
// the flows' priority and paused time in the flows table and the flows
// CSV (0, not null, where PFC paused only another priority); each
// pause frame in -P -o json and -P -o csv, with its sender, its
// priorities and quanta (and in JSON their time at --link-speed), which
// --qp leaves out.
func TestPauseInEveryOutput(t *testing.T) {
	dir := t.TempDir()
	file, truth, frames := pauseTruthCapture(t, dir, "pfc.pcap", pauseStream{synth.PausePFC, "3+4,senders=2,episodes=3"}, pauseStream{synth.Pause8023x, "quanta=1000,start=30us"})
	require.Len(t, truth.Pause, 5, "two PFC senders × two priorities, one 802.3x sender")
	other, otherTruth, _ := pauseTruthCapture(t, dir, "pfc4.pcap", pauseStream{synth.PausePFC, "4"})
	speed := "25"

	flowPaused := map[string]map[string]float64{} // by file, then "src dst qp"
	var paused int
	flowPaused[file], paused = truthPausedNs(truth)
	require.NotZero(t, paused, "no flow was paused: the flows' columns would test nothing")
	flowPaused[other], paused = truthPausedNs(otherTruth)
	require.Zero(t, paused, "priority 4 paused a flow of priority 3")

	for _, args := range [][]string{{"-o", "json", "-j", "1"}, {"-o", "json", "-j", "3"}, {"-o", "parquet"}, {"-o", "parquet", "-j", "3"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			for _, c := range []struct {
				file  string
				truth *synth.Truth
			}{{file, truth}, {other, otherTruth}} {
				out := t.TempDir()
				code, _, errs := run(t, nil, append(args, "--link-speed", speed, "--export", out, c.file)...)
				require.Equal(t, 0, code, errs)
				checkPauseTable(t, readParquet(t, filepath.Join(out, "pause.parquet")), c.file, c.truth)
				checkFlowsPaused(t, readParquet(t, filepath.Join(out, "flows.parquet")), flowPaused[c.file])
			}
		})
	}

	// The flows CSV: priority and paused_ns, the last columns.
	for _, file := range []string{file, other} {
		code, out, errs := run(t, nil, "-o", "csv", "--link-speed", speed, file)
		require.Equal(t, 0, code, errs)
		checkFlowsCSVPaused(t, out, flowPaused[file])
	}

	// -P -o json and -P -o csv list the pause frames.
	code, nd, errs := run(t, nil, "-P", "-o", "json", "--link-speed", speed, file)
	require.Equal(t, 0, code, errs)
	checkPauseFramesJSON(t, nd, frames)
	code, csvOut, errs := run(t, nil, "-P", "-o", "csv", file)
	require.Equal(t, 0, code, errs)
	checkPauseFramesCSV(t, csvOut, frames)

	// --qp selects RDMA packets: no pause frame.
	for _, format := range []string{"json", "csv"} {
		code, out, errs := run(t, nil, "-P", "-o", format, "--qp", fmt.Sprint(truth.Flows[0].DestQP), file)
		require.Equal(t, 0, code, errs)
		assert.NotContains(t, out, "01:80:c2:00:00:01", format)
	}
}

// truthPausedNs returns the paused time of each flow of truth, by "src
// dst qp", and how many flows were paused.
func truthPausedNs(truth *synth.Truth) (map[string]float64, int) {
	byFlow := map[string]float64{}
	paused := 0
	for _, f := range truth.Flows {
		byFlow[fmt.Sprintf("%s %s %d", f.Src, f.Dst, f.DestQP)] = float64(f.PausedNs)
		paused += b2i(f.PausedNs > 0)
	}
	return byFlow, paused
}

// checkPauseTable checks the rows of the Parquet pause table of file
// against the truth's pause statistics, in order: each sender and
// priority's frames, XOFF, XON and quanta exactly, the link speed, the
// paused and longest times within 1 %.
func checkPauseTable(t *testing.T, rows []map[string]any, file string, truth *synth.Truth) {
	t.Helper()
	require.Len(t, rows, len(truth.Pause))
	for i, w := range truth.Pause {
		g := rows[i]
		name := fmt.Sprintf("%s %s %v", w.SrcMAC, w.Kind, g["priority"])
		var prio any
		if w.Priority != nil {
			prio = float64(*w.Priority)
		}
		assert.Equal(t, map[string]any{"capture": file, "src_mac": w.SrcMAC, "kind": w.Kind, "priority": prio,
			"frames": float64(w.Frames), "xoff_frames": float64(w.XOFFFrames), "xon_frames": float64(w.XONFrames),
			"quanta": float64(w.Quanta), "link_speed_bps": float64(truth.LinkSpeedBps)},
			map[string]any{"capture": g["capture"], "src_mac": g["src_mac"], "kind": g["kind"], "priority": g["priority"],
				"frames": g["frames"], "xoff_frames": g["xoff_frames"], "xon_frames": g["xon_frames"],
				"quanta": g["quanta"], "link_speed_bps": g["link_speed_bps"]}, name)
		within(t, float64(w.PausedNs), g["paused_ns"].(float64), "%s paused_ns", name)
		within(t, float64(w.LongestPauseNs), g["longest_pause_ns"].(float64), "%s longest_pause_ns", name)
	}
}

// checkFlowsPaused checks the rows of the Parquet flows table against
// the truth's paused time of each flow (want, by "src dst qp"): every
// flow there, priority 3, its paused time within 1 % (0, not null, where
// none).
func checkFlowsPaused(t *testing.T, flows []map[string]any, want map[string]float64) {
	t.Helper()
	require.Len(t, flows, len(want))
	for _, f := range flows {
		key := fmt.Sprintf("%s %s %v", f["src"], f["dst"], f["dest_qp"])
		ns, ok := want[key]
		require.True(t, ok, key)
		assert.Equal(t, 3.0, f["priority"], "%s: the generator's DSCP 26", key)
		require.NotNil(t, f["paused_ns"], key)
		within(t, ns, f["paused_ns"].(float64), "%s paused_ns", key)
	}
}

// checkFlowsCSVPaused checks the flows CSV out: priority and paused_ns
// follow icrc_unverifiable, and each flow has priority 3 and the truth's
// paused time (want, by "src dst qp") within 1 %.
func checkFlowsCSVPaused(t *testing.T, out string, want map[string]float64) {
	t.Helper()
	header, _, _ := strings.Cut(out, "\n")
	assert.Contains(t, header, ",icrc_unverifiable,priority,paused_ns,", header)
	recs := csvRecords(t, out)
	require.Len(t, recs, len(want))
	for _, r := range recs {
		key := fmt.Sprintf("%s %s %s", r["src"], r["dst"], r["dest_qp"])
		assert.Equal(t, "3", r["priority"], key)
		ns, err := strconv.ParseFloat(r["paused_ns"], 64)
		require.NoError(t, err, key)
		within(t, want[key], ns, "%s paused_ns", key)
	}
}

// checkPauseFramesJSON checks the lines of -P -o json at 25 Gb/s, nd:
// each pause frame the generator wrote (frames, by number) is listed with
// its sender, opcode, kind, class-enable vector (PFC) and its priorities'
// quanta and time, and no other frame has MAC Control.
func checkPauseFramesJSON(t *testing.T, nd string, frames map[int]synth.FrameInfo) {
	t.Helper()
	listed := 0
	for _, line := range jsonLines(t, nd) {
		mc, ok := line["mac_control"].(map[string]any)
		if !ok {
			continue
		}
		listed++
		n := int(line["frame"].(float64))
		fi, ok := frames[n]
		require.True(t, ok, "frame %d is no pause frame", n)
		assert.Equal(t, []any{fi.Src, fi.Dst}, []any{line["src"], line["dst"]}, "frame %d", n)
		assert.Equal(t, float64(fi.Pause.Opcode), mc["opcode"], "frame %d", n)
		if fi.Pause.Kind == synth.PausePFC {
			assert.Equal(t, "pfc", mc["kind"], "frame %d", n)
			assert.Equal(t, float64(fi.Pause.ClassEnable), mc["class_enable_vector"], "frame %d", n)
		} else {
			assert.Equal(t, "802.3x", mc["kind"], "frame %d", n)
			assert.NotContains(t, mc, "class_enable_vector", "frame %d", n)
		}
		assert.Equal(t, pausePrioritiesJSON(fi.Pause), mc["priorities"], "frame %d", n)
	}
	assert.Equal(t, len(frames), listed, "pause frames listed")
}

// pausePrioritiesJSON is the priorities of pause frame p as -P -o json
// lists them at 25 Gb/s: each priority PFC enables (none for 802.3x)
// with its quanta and their time.
func pausePrioritiesJSON(p *synth.PauseInfo) []any {
	quantum := 512 / 25e9 * 1e9 // ns per quantum at 25 Gb/s
	pause := func(prio any, q uint16) map[string]any {
		return map[string]any{"priority": prio, "quanta": float64(q), "pause_ns": math.Round(float64(q) * quantum)}
	}
	if p.Kind != synth.PausePFC {
		return []any{pause(nil, p.Quanta[0])}
	}
	var want []any
	for prio := range 8 {
		if p.ClassEnable&(1<<prio) != 0 {
			want = append(want, pause(float64(prio), p.Quanta[prio]))
		}
	}
	return want
}

// checkPauseFramesCSV checks the records of -P -o csv, csvOut: each pause
// frame the generator wrote (frames, by number) with its sender, kind and
// quanta, and no opcode; every other record is an RDMA packet.
func checkPauseFramesCSV(t *testing.T, csvOut string, frames map[int]synth.FrameInfo) {
	t.Helper()
	listed := 0
	for _, r := range csvRecords(t, csvOut) {
		if r["mac_control"] == "" {
			assert.NotEmpty(t, r["opcode"], "frame %s: neither RDMA nor a pause frame", r["frame"])
			continue
		}
		listed++
		n, err := strconv.Atoi(r["frame"])
		require.NoError(t, err)
		fi, ok := frames[n]
		require.True(t, ok, "frame %d is no pause frame", n)
		kind, times := pauseQuantaCSV(fi.Pause)
		_, err = net.ParseMAC(r["src"])
		assert.NoError(t, err, "frame %d: src", n)
		assert.Equal(t, []string{fi.Src, fi.Dst, kind, times, ""},
			[]string{r["src"], r["dst"], r["mac_control"], r["pause_quanta"], r["opcode"]}, "frame %d", n)
	}
	assert.Equal(t, len(frames), listed, "pause frames listed")
}

// pauseQuantaCSV is the kind and the quanta of pause frame p as -P -o csv
// writes them: "pfc" and priority:quanta for each priority it enables, or
// "802.3x" and all:quanta.
func pauseQuantaCSV(p *synth.PauseInfo) (kind, quanta string) {
	if p.Kind != synth.PausePFC {
		return "802.3x", fmt.Sprintf("all:%d", p.Quanta[0])
	}
	var times []string
	for prio := range 8 {
		if p.ClassEnable&(1<<prio) != 0 {
			times = append(times, fmt.Sprintf("%d:%d", prio, p.Quanta[prio]))
		}
	}
	return "pfc", strings.Join(times, " ")
}
