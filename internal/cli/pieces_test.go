package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// rotation is a capture cut into pieces as tcpdump -C or editcap -c cut
// it: the pieces' names and the stream's number of each one's first
// frame (the test's own oracle for mapping a piece's frame numbers back).
type rotation struct {
	files []string
	first map[string]uint64 // by display name
	sizes map[string]uint64
}

// rotate cuts file into up to n pieces of about equal frames, written as
// pcap files in dir, each beginning at a later instant than the one
// before (a piece beginning at the same instant as the one before is
// not a rotation's). It returns false when the capture's timestamps go
// back (a rotation of it would not follow one another) or it cannot be
// cut in two.
func rotate(t *testing.T, dir, file string, n int) (rotation, bool) {
	t.Helper()
	cr, err := capture.Open(file)
	require.NoError(t, err)
	defer cr.Close()
	var cis []gopacket.CaptureInfo
	var frames [][]byte
	var lt gplayers.LinkType
	for {
		ci, data, flt, err := cr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if len(cis) == 0 {
			lt = flt
		}
		if flt != lt {
			return rotation{}, false
		}
		cis, frames = append(cis, ci), append(frames, slices.Clone(data))
	}
	for i := 1; i < len(cis); i++ {
		if cis[i].Timestamp.Before(cis[i-1].Timestamp) {
			return rotation{}, false
		}
	}
	cuts := []int{0}
	for k := 1; k < n; k++ {
		c := max(k*len(cis)/n, cuts[len(cuts)-1]+1)
		for c < len(cis) && !cis[c].Timestamp.After(cis[c-1].Timestamp) {
			c++
		}
		if c < len(cis) {
			cuts = append(cuts, c)
		}
	}
	if len(cuts) < 2 {
		return rotation{}, false
	}
	cuts = append(cuts, len(cis))
	rot := rotation{first: map[string]uint64{}, sizes: map[string]uint64{}}
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	for k := range len(cuts) - 1 {
		name := filepath.Join(dir, fmt.Sprintf("%s_%05d.pcap", base, k))
		writePcap(t, name, lt, frames[cuts[k]:cuts[k+1]], cis[cuts[k]:cuts[k+1]])
		rot.files = append(rot.files, name)
		rot.first[name] = uint64(cuts[k] + 1)
		rot.sizes[name] = uint64(cuts[k+1] - cuts[k])
	}
	return rot, true
}

// frameOfFile matches a detail's reference to a frame of a piece.
var frameOfFile = regexp.MustCompile(`frame (\d+) of (\S+\.pcap)`)

// unrotate turns the frame references of a report of the pieces back into
// the whole file's numbers, with the rotation's own record of where each
// piece began, and drops what names the pieces: what is left must be the
// whole file's report.
func (rot rotation) unrotate(t *testing.T, v any) any {
	switch x := v.(type) {
	case map[string]any:
		if f, ok := x["file"].(string); ok {
			first, known := rot.first[f]
			require.True(t, known, "a frame reference names %q, not a piece", f)
			if fr, ok := x["frame"].(float64); ok {
				x["frame"] = float64(uint64(fr) + first - 1)
			}
			delete(x, "file")
		}
		if files, ok := x["files"].(map[string]any); ok { // a connection's frames
			for k, f := range files {
				x[k] = float64(uint64(x[k].(float64)) + rot.first[f.(string)] - 1)
			}
			delete(x, "files")
		}
		for k, e := range x {
			x[k] = rot.unrotate(t, e)
		}
	case []any:
		for i, e := range x {
			x[i] = rot.unrotate(t, e)
		}
	case string:
		return frameOfFile.ReplaceAllStringFunc(x, func(m string) string {
			sub := frameOfFile.FindStringSubmatch(m)
			n, err := strconv.ParseUint(sub[1], 10, 64)
			require.NoError(t, err)
			first, known := rot.first[sub[2]]
			require.True(t, known, "a detail names %q, not a piece", sub[2])
			return fmt.Sprintf("frame %d", n+first-1)
		})
	}
	return v
}

// TestRotatedPiecesAreTheWholeFile: a capture cut into pieces, given in
// any order, reports what the whole file reports, at every -j: the JSON
// report equal once each frame reference (findings, malformed frames,
// gaps, CM frames, details) is mapped back through where the test cut
// the pieces; the CSV flows byte for byte. The report names each piece
// read, in time order, with its frames.
func TestRotatedPiecesAreTheWholeFile(t *testing.T) {
	caps, err := filepath.Glob("../../testdata/*.pcap*")
	require.NoError(t, err)
	real, _ := filepath.Glob("../../../shared/captures/*/*.pcap*")
	caps = append(caps, real...)
	gen := t.TempDir()
	caps = append(caps,
		generate(t, gen, "mix_naks.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: 6000, QPs: 64, Seed: 4}),
		generate(t, gen, "mix_cut.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: 4000, QPs: 16, Artefacts: synth.Artefacts{CutFrames: 243}}))
	tested := 0
	for _, file := range caps {
		if strings.HasSuffix(file, ".json") {
			continue
		}
		rot, ok := rotate(t, t.TempDir(), file, 4)
		if !ok {
			continue
		}
		tested++
		t.Run(filepath.Base(file), func(t *testing.T) {
			orders := map[string][]string{"in order": rot.files, "reversed": slices.Clone(rot.files)}
			slices.Reverse(orders["reversed"])
			if len(rot.files) > 2 {
				orders["shuffled"] = append(slices.Clone(rot.files[1:]), rot.files[0])
			}
			for _, jobs := range []string{"1", "2", "3"} {
				code, whole, errs := runCLI("-o", "json", "-j", jobs, file)
				require.Equal(t, 0, code, errs)
				var want any
				require.NoError(t, json.Unmarshal([]byte(whole), &want))
				_, wholeCSV, _ := runCLI("-o", "csv", "-j", jobs, file)
				for order, files := range orders {
					code, out, errs := runCLI(append([]string{"-o", "json", "-j", jobs}, files...)...)
					require.Equal(t, 0, code, "%s -j %s: %s", order, jobs, errs)
					var got map[string]any
					require.NoError(t, json.Unmarshal([]byte(out), &got))
					c := got["capture"].(map[string]any)
					read, ok := c["files"].([]any)
					require.True(t, ok, "%s -j %s: no capture.files: not read as pieces", order, jobs)
					require.Len(t, read, len(rot.files))
					for i, x := range read {
						e := x.(map[string]any)
						assert.Equal(t, rot.files[i], e["file"], "pieces in time order")
						assert.Equal(t, float64(rot.sizes[rot.files[i]]), e["frames"])
					}
					delete(c, "files")
					assert.Equal(t, unnameHostFiles(want), rot.unrotate(t, any(got)), "%s -j %s", order, jobs)

					_, csvOut, _ := runCLI(append([]string{"-o", "csv", "-j", jobs}, files...)...)
					assert.Equal(t, wholeCSV, csvOut, "%s -j %s: CSV", order, jobs)
				}
			}
		})
	}
	require.GreaterOrEqual(t, tested, 20, "captures cut into pieces")
}

// TestRotatedPiecesText: the text report of pieces is one report with a
// line per piece, frame references naming their piece; no report per
// file.
func TestRotatedPiecesText(t *testing.T) {
	rot, ok := rotate(t, t.TempDir(), "../../testdata/loss_nak_gobackn.pcap", 4)
	require.True(t, ok)
	files := slices.Clone(rot.files)
	slices.Reverse(files)
	code, out, errs := runCLI(append([]string{"--color=never"}, files...)...)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, 1, strings.Count(out, "\nCapture ")+strings.Count(out[:8], "Capture "), "one report:\n%s", out)
	assert.Contains(t, out, "Capture 4 files read as one\n  32 frames: 32 RDMA, 0 other, 0 malformed")
	assert.Contains(t, out, "  read as one capture: 4 files whose time ranges follow one another; frames are numbered in their files\n")
	for _, f := range rot.files {
		assert.Regexp(t, `(?m)^    `+regexp.QuoteMeta(f)+` +\d+ frames  2026-01-01T`, out)
	}
	// The whole file's frame 15 is the NAK, frame 7 the incomplete
	// message begun at frame 4, frames 1 and 2 the REQ and REP.
	ref := func(n uint64) string { f, m := rot.local(n); return fmt.Sprintf("%s %d", f, m) }
	assert.Contains(t, out, "ERROR   "+strings.Replace(ref(15), " ", " frame ", 1)+" nak")
	file4, n4 := rot.local(4)
	assert.Contains(t, out, "INFO    "+strings.Replace(ref(7), " ", " frame ", 1)+" incomplete_message")
	assert.Contains(t, out, fmt.Sprintf("message begun at frame %d of %s is incomplete", n4, file4))
	assert.Contains(t, out, "frames REQ "+ref(1)+" REP "+ref(2))
}

// local is the piece frame n of the whole file is in, and its number
// there.
func (rot rotation) local(n uint64) (string, uint64) {
	for i := len(rot.files) - 1; i >= 0; i-- {
		if f := rot.files[i]; rot.first[f] <= n {
			return f, n - rot.first[f] + 1
		}
	}
	return "", 0
}

// TestOverlappingFilesAreNotPieces: files whose time ranges overlap
// (here a rotation's second piece moved back into the first one's time)
// are not read one after another as pieces: they are merged by time
// (TestMergedByTime checks the report against mergecap's), and the report
// says why they are not pieces, with the evidence.
func TestOverlappingFilesAreNotPieces(t *testing.T) {
	dir := t.TempDir()
	rot, ok := rotate(t, dir, "../../testdata/loss_nak_gobackn.pcap", 2)
	require.True(t, ok)
	shifted := filepath.Join(dir, "shifted.pcap")
	shiftCapture(t, rot.files[1], shifted, -2*time.Microsecond)
	files := []string{rot.files[0], shifted}
	code, out, errs := runCLI(append([]string{"-o", "json"}, files...)...)
	require.Equal(t, 0, code, errs)
	var rep struct {
		Capture map[string]any `json:"capture"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, true, rep.Capture["files_merged"], "merged by time, not read one after another")
	code, out, _ = runCLI(append([]string{"--color=never"}, files...)...)
	require.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(out, "Capture 2 files merged by time\n"), out)
	assert.Regexp(t, `\n  not read one after another as the pieces of one capture: .*shifted\.pcap begins at 2026-01-01T00:00:00\.00000\dZ, before .* ends at 2026-01-01T00:00:00\.00000\dZ: the files are not pieces of one capture\n`, out, "the report says why, with the evidence")
}

// TestRotatedPiecesCount: -c N counts the frames of the pieces read as
// one capture, as it counts the whole file's: the report of the first N
// frames, whichever pieces hold them.
func TestRotatedPiecesCount(t *testing.T) {
	file := "../../testdata/loss_nak_gobackn.pcap"
	rot, ok := rotate(t, t.TempDir(), file, 4)
	require.True(t, ok)
	for _, n := range []string{"1", "9", "20", "31", "1000"} {
		code, whole, errs := runCLI("-o", "json", "-c", n, file)
		require.Equal(t, 0, code, errs)
		var want any
		require.NoError(t, json.Unmarshal([]byte(whole), &want))
		code, out, errs := runCLI(append([]string{"-o", "json", "-c", n}, rot.files...)...)
		require.Equal(t, 0, code, errs)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		delete(got["capture"].(map[string]any), "files")
		assert.Equal(t, unnameHostFiles(want), rot.unrotate(t, any(got)), "-c %s", n)
	}
}

// TestRotatedPiecesCapAndEmpty: the pieces of a 64-QP mix with a flow cap
// hit across the shards (a second reading of the pieces) report each
// piece's own frames, not the sum of both readings (review: 6,000 for
// pieces of 3,000), and a piece with no frame (a rotation's file cut
// before its first record) is listed last with none, the others still
// one capture: the report is the whole file's at every -j.
func TestRotatedPiecesCapAndEmpty(t *testing.T) {
	dir := t.TempDir()
	file := generate(t, dir, "mix.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: 6000, QPs: 64, Seed: 5})
	rot, ok := rotate(t, dir, file, 4)
	require.True(t, ok)
	empty := filepath.Join(dir, "empty.pcap")
	f, err := os.Create(empty)
	require.NoError(t, err)
	require.NoError(t, pcapgo.NewWriterNanos(f).WriteFileHeader(262144, gplayers.LinkTypeEthernet))
	require.NoError(t, f.Close())
	args := []string{"-o", "json", "--max-flows", "40"}
	for _, j := range []string{"1", "2", "3"} {
		code, whole, errs := runCLI(append(args, "-j", j, file)...)
		require.Equal(t, 0, code, errs)
		var want any
		require.NoError(t, json.Unmarshal([]byte(whole), &want))
		files := append([]string{rot.files[2], empty}, rot.files[0], rot.files[3], rot.files[1])
		code, out, errs := runCLI(append(append(args, "-j", j), files...)...)
		require.Equal(t, 0, code, errs)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		c := got["capture"].(map[string]any)
		read := c["files"].([]any)
		require.Len(t, read, len(rot.files)+1, "-j %s", j)
		for i, x := range read {
			e := x.(map[string]any)
			if i == len(rot.files) {
				assert.Equal(t, empty, e["file"], "the empty piece last")
				assert.Equal(t, 0.0, e["frames"])
				continue
			}
			assert.Equal(t, rot.files[i], e["file"])
			assert.Equal(t, float64(rot.sizes[rot.files[i]]), e["frames"], "-j %s: %s", j, rot.files[i])
		}
		delete(c, "files")
		assert.Equal(t, unnameHostFiles(want), rot.unrotate(t, any(got)), "-j %s", j)
	}
}

// unnameHostFiles drops the names of the files in doc's "hosts" (a
// decoded -o json document), for comparing the report of pieces, or of
// several files merged, with the whole file's: the same hosts, of files
// named otherwise.
func unnameHostFiles(doc any) any {
	for _, f := range doc.(map[string]any)["hosts"].(map[string]any)["files"].([]any) {
		delete(f.(map[string]any), "file")
	}
	return doc
}
