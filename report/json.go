package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/points"
)

// WriteJSON writes rep as roce-dissect -o json does (docs/json.md):
// indented JSON, exactly the JSON of analyze.Report, one element of its
// lists at a time (encoding the whole report at once holds it twice in
// memory: a million flows are gigabytes).
func WriteJSON(w io.Writer, rep *analyze.Report) error { return WriteJSONPoints(w, rep, nil) }

// WriteJSONPoints is WriteJSON with the capture points' "points" object
// when pts is not nil.
func WriteJSONPoints(w io.Writer, rep *analyze.Report, pts *points.Report) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	put := func(prefix string, v any) error {
		b, err := json.MarshalIndent(v, prefix, "  ")
		if err == nil {
			_, err = bw.Write(b)
		}
		return err
	}
	list := func(name string, n int, elem func(int) any) error {
		fmt.Fprintf(bw, "  %q: [", name)
		for i := range n {
			if i > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n    ")
			if err := put("    ", elem(i)); err != nil {
				return err
			}
		}
		if n > 0 {
			bw.WriteString("\n  ")
		}
		_, err := bw.WriteString("],\n")
		return err
	}
	bw.WriteString("{\n  \"capture\": ")
	if err := put("  ", rep.Capture); err != nil {
		return err
	}
	bw.WriteString(",\n")
	for _, l := range []struct {
		name string
		n    int
		elem func(int) any
	}{
		{"connections", len(rep.Connections), func(i int) any { return &rep.Connections[i] }},
		{"flows", len(rep.Flows), func(i int) any { return &rep.Flows[i] }},
		{"findings", len(rep.Findings), func(i int) any { return &rep.Findings[i] }},
	} {
		if err := list(l.name, l.n, l.elem); err != nil {
			return err
		}
	}
	if len(rep.Pause) > 0 {
		if err := list("pause", len(rep.Pause), func(i int) any { return &rep.Pause[i] }); err != nil {
			return err
		}
	}
	if pts != nil {
		bw.WriteString("  \"points\": ")
		if err := put("  ", pts); err != nil {
			return err
		}
		bw.WriteString(",\n")
	}
	fmt.Fprintf(bw, "  \"findings_dropped\": %d\n}\n", rep.FindingsDropped)
	return bw.Flush()
}
