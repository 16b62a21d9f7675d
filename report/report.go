// Package report renders an analyze.Report the way the roce-dissect
// command prints it: as the text report (capture summary, connections,
// flow table, findings worst first) or as its JSON (docs/json.md).
package report

import (
	"io"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/cli"
)

// TextOptions say how WriteText renders.
type TextOptions struct {
	// Title follows "Capture " on the first line (a file name, say).
	Title string
	// Colour adds ANSI colours (errors red, warnings yellow).
	Colour bool
}

// WriteText writes rep as roce-dissect's text report and returns the
// first write error.
func WriteText(w io.Writer, rep *analyze.Report, o TextOptions) error {
	return cli.WriteReport(w, o.Title, rep, o.Colour)
}

// WriteJSON writes rep as roce-dissect -o json does.
func WriteJSON(w io.Writer, rep *analyze.Report) error { return cli.WriteReportJSON(w, rep) }
