package report

import (
	"bufio"
	"io"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/nccl"
	"github.com/roce-dissect/roce-dissect/points"
)

// TextOptions say how WriteText renders.
type TextOptions struct {
	// Title follows "Capture " on the first line as it is (a file name
	// quoted by filename.Text, say); the file names of the report and of
	// Inputs and Points are quoted as they are written.
	Title string
	// Colour adds ANSI colours (errors red, warnings yellow).
	Colour bool
	// ReadErr, when not empty, says why the capture could not be read to
	// its end: the report covers what was read, and says so.
	ReadErr string
	// AllFlows lists every flow in the flow table; otherwise a report of
	// more than TextFlowLimit flows lists the TextFlowLimit with the most
	// payload and every flow with a problem (FlowHasProblem).
	AllFlows bool
	// Listed, when not nil, are the flows (indexes into the report's) the
	// flow table lists, chosen by the caller (a report written while it
	// was built keeps only those); Unlisted is how many it leaves out.
	Listed   []int
	Unlisted int
	// Points, when not nil, adds the "Capture points" section.
	Points *points.Report
	// NCCL, when not nil, adds the "Collectives (NCCL)" section.
	NCCL *nccl.Result
	// Hosts, when not nil, adds the "Hosts" section (after the capture
	// points, before the collectives).
	Hosts *Hosts
	// Notes are lines said under the capture's summary (how its files
	// were read, say).
	Notes []string
	// Inputs are the files of a run that analyzed several each on its own
	// (capture points of one traffic, or unrelated captures), one line each
	// under the summary of their combined report.
	Inputs []Input
	// AllFindings lists every finding; otherwise the findings section
	// rolls them up by kind, flow and severity (FindingExamples each).
	AllFindings bool
	// FindingsFilter, when not empty, says how the report's findings were
	// filtered ("--severity error", say): the Findings title names it, and
	// a report left without findings says so rather than "No problems
	// found."
	FindingsFilter string
}

// Input is one file of a run of several (TextOptions.Inputs): its name
// (quoted as it is written, filename.Text), what was read of it, and why
// it could not be read to its end ("" when it could).
type Input struct {
	File    string
	Capture analyze.Capture
	Err     string
}

// WriteText writes rep as roce-dissect's text report and returns the
// first write error.
func WriteText(w io.Writer, rep *analyze.Report, o TextOptions) error {
	bw := bufio.NewWriter(w) // keeps the first error, and writes nothing after it
	t := &textWriter{w: bw, p: NewPalette(o.Colour), o: o}
	t.report(rep)
	t.writePoints(o.Points, rep)
	t.writeHosts(o.Hosts)
	t.writeNCCL(o.NCCL)
	return bw.Flush()
}

// textWriter writes one text report.
type textWriter struct {
	w io.Writer
	p Palette
	o TextOptions
}
