package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
)

// testdataCaptures returns every capture of testdata (not the truths).
func testdataCaptures(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob("../../testdata/*.pcap*")
	require.NoError(t, err)
	files := slices.DeleteFunc(all, func(f string) bool { return strings.HasSuffix(f, ".json") })
	require.GreaterOrEqual(t, len(files), 21)
	return files
}

func runRaw(t *testing.T, args ...string) []byte {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), append([]string{"--progress", "never", "--color", "never"}, args...), &out, &errb)
	require.Equal(t, cli.ExitOK, code, errb.String())
	return out.Bytes()
}

// TestCapturePointsDeterministic: all the testdata captures together
// (generated with one seed, so they share byte-identical packets) give
// byte-identical JSON and text on every run and whatever the number of
// cores; issue 13's run changed offsets, links and the combined figures
// from run to run.
func TestCapturePointsDeterministic(t *testing.T) {
	files := testdataCaptures(t)
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			want := runRaw(t, append([]string{"-o", format}, files...)...)
			for run, jobs := range []string{"0", "1", "2", "0", "3", "0"} {
				got := runRaw(t, append([]string{"-o", format, "-j", jobs}, files...)...)
				require.Equal(t, string(want), string(got), "run %d, -j %s", run, jobs)
			}
		})
	}
}

// permReport is the part of the JSON report that must not depend on the
// order of the files after the first (the reference clock): totals, the
// flows' packets, the points' offsets and what each link matched. Flow
// details (gaps, frame numbers) of files that do not meet follow their
// order: they are merged as consecutive files.
type permReport struct {
	Capture  json.RawMessage `json:"capture"`
	Findings []struct {
		Kind string `json:"kind"`
	} `json:"findings"`
	Flows []struct {
		Src     string `json:"src"`
		Dst     string `json:"dst"`
		DestQP  uint32 `json:"dest_qp"`
		Packets uint64 `json:"packets"`
	} `json:"flows"`
	Points *struct {
		Files []struct {
			File          string `json:"file"`
			ClockOffsetNs int64  `json:"clock_offset_ns"`
			OffsetErrorNs int64  `json:"offset_error_ns"`
			Method        string `json:"method"`
		} `json:"files"`
		Links []struct {
			Src     string `json:"src"`
			Dst     string `json:"dst"`
			DestQP  uint32 `json:"dest_qp"`
			From    string `json:"from"`
			To      string `json:"to"`
			Matched uint64 `json:"matched"`
		} `json:"links"`
	} `json:"points"`
}

// canonical returns the order-free summary of a permReport.
func (r permReport) canonical() []string {
	// capture.not_captured aside: the files that meet no other are merged
	// as consecutive files (rotated files of one tap), and which PSNs of
	// one flow fall between two of them follows their order.
	var c map[string]any
	_ = json.Unmarshal(r.Capture, &c)
	delete(c, "not_captured")
	capture, _ := json.Marshal(c)
	out := []string{"capture " + string(capture)}
	var s []string
	for _, f := range r.Findings {
		s = append(s, "finding "+f.Kind)
	}
	for _, f := range r.Flows {
		s = append(s, "flow "+f.Src+" "+f.Dst+" "+strconvU(uint64(f.DestQP))+" "+strconvU(f.Packets))
	}
	if r.Points != nil {
		var methods []string
		for _, f := range r.Points.Files {
			s = append(s, "file "+f.File+" "+strconvI(f.ClockOffsetNs)+" "+strconvI(f.OffsetErrorNs))
			methods = append(methods, f.Method)
		}
		slices.Sort(methods)
		s = append(s, "methods "+strings.Join(methods, ","))
		for _, l := range r.Points.Links {
			ends := []string{l.From, l.To}
			slices.Sort(ends)
			s = append(s, "link "+l.Src+" "+l.Dst+" "+strconvU(uint64(l.DestQP))+" "+strings.Join(ends, " ")+" "+strconvU(l.Matched))
		}
	}
	slices.Sort(s)
	return append(out, s...)
}

func strconvU(v uint64) string { b, _ := json.Marshal(v); return string(b) }
func strconvI(v int64) string  { b, _ := json.Marshal(v); return string(b) }

// TestCapturePointsPermuted: the files after the first in other orders
// give the same totals, flows, offsets and links; and the figures are
// sane: of the 21 captures only write_bw_ipv4 and header_only_snap128 are
// points of one traffic (the generator's arguments: the same write-bw run,
// the second one longer and cut at 128 bytes; the others have another
// start PSN, message size, MTU or scenario), every packet of write_bw_ipv4
// is seen in header_only_snap128 and counted once, and nothing is "not
// captured" in the report of the two (5,405,022 in issue 13's run, of
// all the files, the combined analyzer being fed the packets of every
// file).
func TestCapturePointsPermuted(t *testing.T) {
	files := testdataCaptures(t)
	parse := func(raw []byte) permReport {
		var r permReport
		require.NoError(t, json.Unmarshal(raw, &r))
		return r
	}
	base := parse(runRaw(t, append([]string{"-o", "json"}, files...)...))
	rng := rand.New(rand.NewPCG(13, 13))
	for k := range 4 {
		perm := slices.Clone(files[1:])
		switch k {
		case 0:
			slices.Reverse(perm)
		default:
			rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		}
		got := parse(runRaw(t, append([]string{"-o", "json", files[0]}, perm...)...))
		assert.Equal(t, base.canonical(), got.canonical(), "order %v", perm)
	}

	// The oracle: the truths' frame counts and flows.
	type truth struct {
		Frames uint64 `json:"frames"`
		Flows  []struct {
			Src     string `json:"src"`
			Dst     string `json:"dst"`
			DestQP  uint32 `json:"dest_qp"`
			Packets uint64 `json:"packets"`
		} `json:"flows"`
	}
	truths := map[string]truth{}
	var frames uint64
	for _, f := range files {
		raw, err := os.ReadFile(f + ".truth.json")
		require.NoError(t, err)
		var tr truth
		require.NoError(t, json.Unmarshal(raw, &tr))
		frames += tr.Frames
		truths[filepath.Base(f)] = tr
	}
	wb, ho := truths["write_bw_ipv4.pcap"], truths["header_only_snap128.pcap"]
	var capture struct {
		Frames uint64 `json:"frames"`
	}
	require.NoError(t, json.Unmarshal(base.Capture, &capture))
	assert.Equal(t, frames-wb.Frames, capture.Frames, "write_bw_ipv4's frames are counted once")

	require.NotNil(t, base.Points)
	met := map[string]bool{}
	for _, f := range base.Points.Files {
		if f.Method != "none" && f.Method != "reference" {
			met[filepath.Base(f.File)] = true
		}
	}
	assert.Len(t, met, 1, "one group of two files: one file of it has its offset from the other")
	type flowKey struct {
		src, dst string
		qp       uint32
	}
	matched := map[flowKey]uint64{}
	for _, l := range base.Points.Links {
		ends := []string{filepath.Base(l.From), filepath.Base(l.To)}
		slices.Sort(ends)
		assert.Equal(t, []string{"header_only_snap128.pcap", "write_bw_ipv4.pcap"}, ends)
		matched[flowKey{l.Src, l.Dst, l.DestQP}] += l.Matched
	}
	var sum uint64
	for _, f := range wb.Flows {
		assert.Equal(t, f.Packets, matched[flowKey{f.Src, f.Dst, f.DestQP}], "%s → %s QP %d: every packet of write_bw_ipv4 matched", f.Src, f.Dst, f.DestQP)
		sum += f.Packets
	}
	assert.Equal(t, wb.Frames, sum)

	// The two alone: their combined report is header_only_snap128's
	// traffic, each packet once; nothing is missing.
	var two struct {
		Capture struct {
			Frames      uint64 `json:"frames"`
			NotCaptured uint64 `json:"not_captured"`
		} `json:"capture"`
		Flows []struct {
			Src      string `json:"src"`
			Dst      string `json:"dst"`
			DestQP   uint32 `json:"dest_qp"`
			Packets  uint64 `json:"packets"`
			Requests struct {
				Missing       uint64 `json:"missing"`
				Retransmitted uint64 `json:"retransmitted"`
			} `json:"requests"`
		} `json:"flows"`
	}
	require.NoError(t, json.Unmarshal(runRaw(t, "-o", "json", "../../testdata/write_bw_ipv4.pcap", "../../testdata/header_only_snap128.pcap"), &two))
	assert.Equal(t, ho.Frames, two.Capture.Frames)
	assert.Zero(t, two.Capture.NotCaptured)
	require.Len(t, two.Flows, len(ho.Flows))
	for _, f := range ho.Flows {
		i := slices.IndexFunc(two.Flows, func(g struct {
			Src      string `json:"src"`
			Dst      string `json:"dst"`
			DestQP   uint32 `json:"dest_qp"`
			Packets  uint64 `json:"packets"`
			Requests struct {
				Missing       uint64 `json:"missing"`
				Retransmitted uint64 `json:"retransmitted"`
			} `json:"requests"`
		}) bool {
			return g.Src == f.Src && g.Dst == f.Dst && g.DestQP == f.DestQP
		})
		require.GreaterOrEqual(t, i, 0, "%+v", f)
		assert.Equal(t, f.Packets, two.Flows[i].Packets)
		assert.Zero(t, two.Flows[i].Requests.Missing)
		assert.Zero(t, two.Flows[i].Requests.Retransmitted)
	}
}
