package cli

import (
	"io"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// WriteReport renders a report as the text roce-dissect prints (capture
// summary, connections, flows, findings) under the title "Capture
// TITLE", with ANSI colours when colour is set. It returns the first
// error writing to w.
func WriteReport(w io.Writer, title string, rep *analyze.Report, colour bool) error {
	mode := "never"
	if colour {
		mode = "always"
	}
	ew := &errWriter{w: w}
	r := &runner{stdout: ew, pal: newPalette(mode, ew)}
	r.writeText(title, rep, "")
	return ew.err
}

// WriteReportJSON writes a report as roce-dissect -o json does
// (docs/json.md).
func WriteReportJSON(w io.Writer, rep *analyze.Report) error { return writeJSON(w, rep) }
