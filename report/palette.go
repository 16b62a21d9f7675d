package report

import (
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// Palette colours the text output: problems red, warnings yellow, healthy
// green. Each colour is set on or off for its Palette only (no global
// state).
type Palette struct {
	Red, Yellow, Green, Bold *color.Color
}

// NewPalette returns a Palette whose colours are on or off.
func NewPalette(on bool) Palette {
	p := Palette{Red: color.New(color.FgRed, color.Bold), Yellow: color.New(color.FgYellow), Green: color.New(color.FgGreen), Bold: color.New(color.Bold)}
	for _, c := range []*color.Color{p.Red, p.Yellow, p.Green, p.Bold} {
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return p
}

// Severity is the colour of a finding of severity s.
func (p Palette) Severity(s analyze.Severity) *color.Color {
	switch s {
	case analyze.SeverityError:
		return p.Red
	case analyze.SeverityWarning:
		return p.Yellow
	}
	return p.Green
}

// cell is one table cell with an optional colour.
type cell struct {
	text string
	c    *color.Color
	left bool
}

// spaces pads a table's cells.
const spaces = "                                                                "

// table writes aligned columns: the header, then n rows that row(i, buf)
// fills. Widths come from the plain text (a first pass over the rows),
// colour is added after padding; rows are made twice rather than kept, so
// that a table of a million flows is not held in memory.
func (p Palette) table(w io.Writer, indent string, header []cell, n int, row func(i int, buf []cell) []cell) {
	widths := make([]int, len(header))
	measure := func(cells []cell) {
		for i, c := range cells {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c.text))
		}
	}
	measure(header)
	var buf []cell
	for i := range n {
		buf = row(i, buf[:0])
		measure(buf)
	}
	var line []byte // each row in turn: its padding and its line written without a string of their own
	pad := func(n int) {
		for ; n > 0; n -= len(spaces) {
			line = append(line, spaces[:min(n, len(spaces))]...)
		}
	}
	emit := func(cells []cell) {
		line = append(line[:0], indent...)
		for i, c := range cells {
			n := widths[i] - utf8.RuneCountInString(c.text)
			text := c.text
			if c.c != nil {
				text = c.c.Sprint(c.text)
			}
			if !c.left {
				pad(n)
			}
			line = append(line, text...)
			if c.left {
				pad(n)
			}
			if i < len(cells)-1 {
				line = append(line, "  "...)
			}
		}
		line = append(bytes.TrimRight(line, " "), '\n')
		_, _ = w.Write(line)
	}
	emit(header)
	for i := range n {
		buf = row(i, buf[:0])
		emit(buf)
	}
}
