package fuzz_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/cli"
)

// FuzzSeveralFiles gives the command one capture as several files: the
// pieces of a rotation (cut where the bits of cuts say), in their order
// or the reverse, at -j 1 and -j 3. Whatever the input, the command ends
// with a report or a clear error (no panic or hang, status 0 or 1), and
// its JSON report is valid. When it reads the files as one capture (the
// pieces of a rotation, or merged by time), its report is the one file's
// (the oracle), frame references and all, once each reference is
// renumbered from its file's frame to the capture's; only the findings'
// texts, which name frames by file, are left out of the comparison.
func FuzzSeveralFiles(f *testing.F) {
	caps := seedCaptures(f)
	for _, name := range sortedKeys(caps) {
		frames := readFrames(f, name, caps[name])
		frames = frames[:min(len(frames), 16)] // small seeds: see FuzzCapture
		f.Add(uint64(1<<3|1<<9), false, encodeSequence(frames))
		f.Add(uint64(0x5555), true, encodeSequence(frames))
	}
	f.Fuzz(func(t *testing.T, cuts uint64, reverse bool, in []byte) {
		defer watchdog(in)()
		frames := cutSequence(in)
		if len(frames) < 2 {
			return
		}
		dir := t.TempDir()
		lt := linkTypes[int(frames[0].linkType)%len(linkTypes)] // a rotation has one link type
		whole := filepath.Join(dir, "whole.pcap")
		pieces := writePieces(t, dir, lt, frames, cuts|1) // at least two pieces
		want, wantCode := runJSON(t, whole)
		names := slices.Clone(pieces)
		if reverse {
			slices.Reverse(names)
		}
		for _, j := range []string{"1", "3"} {
			got, code := runJSON(t, append([]string{"-j", j}, names...)...)
			require.Equal(t, wantCode, code, "-j %s: the pieces end as the one file does", j)
			if want == nil || got == nil || code != cli.ExitOK || len(got.Capture.Files) == 0 {
				continue // no report to compare, or not read as one capture: capture points, or files apart
			}
			require.Equal(t, normalized(t, want, nil), normalized(t, got, got.Capture.Files), "-j %s: the pieces' report is the one file's", j)
		}
	})
}

// writePieces writes frames to dir as whole.pcap and as the pieces of a
// rotation, cap_00000.pcap …, a new piece after frame i where bit i%64
// of cuts is set; a frame's time is a microsecond after the one before.
func writePieces(t *testing.T, dir string, lt gplayers.LinkType, frames []sequenceFrame, cuts uint64) []string {
	t.Helper()
	var pieces []string
	var piece bytes.Buffer
	var whole bytes.Buffer
	wholeW := newPcap(t, &whole, lt)
	pw := newPcap(t, &piece, lt)
	flush := func() {
		name := filepath.Join(dir, fmt.Sprintf("cap_%05d.pcap", len(pieces)))
		require.NoError(t, os.WriteFile(name, piece.Bytes(), 0o644))
		pieces = append(pieces, name)
		piece.Reset()
		pw = newPcap(t, &piece, lt)
	}
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, fr := range frames {
		ts = ts.Add(time.Microsecond)
		ci := gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(fr.data), Length: len(fr.data) + fr.extra}
		require.NoError(t, wholeW.WritePacket(ci, fr.data))
		require.NoError(t, pw.WritePacket(ci, fr.data))
		if cuts&(1<<(i%64)) != 0 && i < len(frames)-1 {
			flush()
		}
	}
	flush()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "whole.pcap"), whole.Bytes(), 0o644))
	return pieces
}

func newPcap(t *testing.T, w *bytes.Buffer, lt gplayers.LinkType) *pcapgo.Writer {
	t.Helper()
	pw := pcapgo.NewWriterNanos(w)
	require.NoError(t, pw.WriteFileHeader(65535, lt))
	return pw
}

// runJSON runs the command's JSON report of the files and checks what
// holds for any input: status 0 or 1, each error one line naming a file,
// valid JSON. It returns the report (nil without one) and the status.
func runJSON(t *testing.T, args ...string) (*analyze.Report, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), append([]string{"-o", "json"}, args...), &out, &errb)
	require.Contains(t, []int{cli.ExitOK, cli.ExitDamaged}, code, "stderr %q", errb.String())
	for _, line := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		if line != "" {
			require.True(t, strings.HasPrefix(line, "roce-dissect: "), "stderr %q", line)
		}
	}
	if out.Len() == 0 {
		return nil, code
	}
	require.True(t, json.Valid(out.Bytes()), "JSON report: %s", out.String())
	var r analyze.Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &r))
	return &r, code
}

// normalized is r as a comparable JSON document: every frame reference
// numbered in the capture (files, the pieces in the order read, give
// each file's first frame), the files' names and list gone, and the
// findings without their texts, in the order of their frames.
func normalized(t *testing.T, r *analyze.Report, files []analyze.CaptureFile) string {
	t.Helper()
	base := map[string]uint64{}
	var n uint64
	for _, f := range files {
		base[f.File] = n
		n += f.Frames
	}
	global := func(file *string, frame *uint64) {
		if *frame != 0 {
			*frame += base[*file]
		}
		*file = ""
	}
	c := *r
	c.Capture.Files, c.Capture.FilesMerged = nil, false
	c.Capture.MalformedFrames = slices.Clone(c.Capture.MalformedFrames)
	for i := range c.Capture.MalformedFrames {
		m := &c.Capture.MalformedFrames[i]
		global(&m.File, &m.Frame)
	}
	c.Findings = slices.Clone(c.Findings)
	for i := range c.Findings {
		fd := &c.Findings[i]
		global(&fd.File, &fd.Frame)
		fd.Detail = ""
	}
	slices.SortStableFunc(c.Findings, func(a, b analyze.Finding) int { return int(a.Frame) - int(b.Frame) })
	c.Flows = slices.Clone(c.Flows)
	for i := range c.Flows {
		gaps := slices.Clone(c.Flows[i].Requests.Gaps)
		for j := range gaps {
			global(&gaps[j].File, &gaps[j].Frame)
		}
		c.Flows[i].Requests.Gaps = gaps
	}
	c.Connections = slices.Clone(c.Connections)
	for i := range c.Connections {
		fr := &c.Connections[i].Frames
		if fs := fr.Files; fs != nil {
			global(&fs.REQ, &fr.REQ)
			global(&fs.REP, &fr.REP)
			global(&fs.RTU, &fr.RTU)
			global(&fs.REJ, &fr.REJ)
			global(&fs.DREQ, &fr.DREQ)
			global(&fs.DREP, &fr.DREP)
			fr.Files = nil
		}
	}
	b, err := json.MarshalIndent(&c, "", " ")
	require.NoError(t, err)
	return string(b)
}
