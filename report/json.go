package report

import (
	"bufio"
	"fmt"
	"io"
	"iter"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/jsonindent"
	"github.com/roce-dissect/roce-dissect/nccl"
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
	return WriteJSONDocument(w, ReportDocument(rep, pts))
}

// ReportDocument is the JSONDocument of rep, with the capture points'
// "points" object when pts is not nil.
func ReportDocument(rep *analyze.Report, pts *points.Report) *JSONDocument {
	d := &JSONDocument{
		Capture:         &rep.Capture,
		Connections:     Elements(rep.Connections),
		Flows:           Elements(rep.Flows),
		Findings:        Elements(rep.Findings),
		Points:          pts,
		FindingsDropped: func() uint64 { return rep.FindingsDropped },
	}
	if len(rep.Pause) > 0 {
		d.Pause = Elements(rep.Pause)
	}
	return d
}

// JSONDocument is a report as WriteJSONDocument writes it: its capture,
// and its lists given one element at a time, so that a report streamed
// flow by flow (analyze.ReportStream) and a whole one are written by the
// same code into the same bytes.
type JSONDocument struct {
	Capture     *analyze.Capture
	Connections iter.Seq[any]
	Flows       iter.Seq[any]
	// WriteFlows, when set, writes the elements of the "flows" list in
	// place of Flows, as an encoder of JSONElementPrefix writes them
	// (jsonindent.Encoder.AppendElement). It returns how many it wrote.
	// (roce-dissect encodes flows on several cores.)
	WriteFlows func(*bufio.Writer) (int, error)
	Findings   iter.Seq[any]
	// Pause is written when not nil (the key is absent without pause
	// frames).
	Pause  iter.Seq[any]
	Points *points.Report // the capture points' "points" object, when not nil
	// NCCL, when not nil, writes the "nccl" object (roce-dissect's
	// documents have it; analyze.Report has not): NCCL's traffic, null
	// when none.
	NCCL func() *nccl.Result
	// Hosts, when not nil, writes the "hosts" object (roce-dissect's
	// documents have it), asked for once the flows are written (a stream
	// adds them up as it writes them).
	Hosts func() *Hosts
	// FindingsDropped is asked for once the findings are written (a
	// stream knows it only at its end).
	FindingsDropped func() uint64
}

// Elements gives the elements of a report list, by reference.
func Elements[T any](s []T) iter.Seq[any] {
	return func(yield func(any) bool) {
		for i := range s {
			if !yield(&s[i]) {
				return
			}
		}
	}
}

// jsonWriter writes a JSON document's parts: one encoder per indentation
// prefix, and one buffer, reused, so that an element costs no garbage but
// its own.
type jsonWriter struct {
	bw   *bufio.Writer
	buf  []byte
	encs map[string]*jsonindent.Encoder
	err  error
}

// put writes v as encoding/json's MarshalIndent(v, prefix, "  ") does,
// straight into indented form (jsonindent): a report of many flows is
// written in a fraction of the time (BenchmarkManyFlowsReport), in the
// same bytes (TestStreamedJSONIsTheReport, FuzzJSONLikeEncodingJSON).
func (j *jsonWriter) put(prefix string, v any) {
	if j.err != nil {
		return
	}
	j.write(j.encoder(prefix).Append(j.buf[:0], v))
}

// write writes b, what an encoder appended to j.buf, unless it failed
// (err): j.buf keeps b for the next value.
func (j *jsonWriter) write(b []byte, err error) {
	if j.buf, j.err = b, err; err == nil {
		_, j.err = j.bw.Write(b)
	}
}

// encoder returns the encoder of prefix.
func (j *jsonWriter) encoder(prefix string) *jsonindent.Encoder {
	enc := j.encs[prefix]
	if enc == nil {
		enc = jsonindent.NewEncoder(prefix)
		j.encs[prefix] = enc
	}
	return enc
}

// JSONElementPrefix is the indentation of the elements of the document's
// lists.
const JSONElementPrefix = "    "

// element writes v as an element of a list of the document's top-level
// object (jsonindent.Encoder.AppendElement).
func (j *jsonWriter) element(v any, first bool) {
	j.write(j.encoder(JSONElementPrefix).AppendElement(j.buf[:0], v, first))
}

// list writes the list name: the elements of seq, or those write writes
// when not nil.
func (j *jsonWriter) list(name string, seq iter.Seq[any], write func(*bufio.Writer) (int, error)) {
	if j.err != nil {
		return
	}
	fmt.Fprintf(j.bw, "  %q: [", name)
	n := 0
	if write != nil {
		n, j.err = write(j.bw)
	} else if seq != nil {
		for v := range seq {
			if j.element(v, n == 0); j.err != nil {
				return
			}
			n++
		}
	}
	if n > 0 {
		j.bw.WriteString("\n  ")
	}
	j.bw.WriteString("],\n")
}

// WriteJSONDocument writes d as roce-dissect -o json does (docs/json.md).
func WriteJSONDocument(w io.Writer, d *JSONDocument) error {
	j := &jsonWriter{bw: bufio.NewWriterSize(w, 1<<16), encs: map[string]*jsonindent.Encoder{}}
	j.bw.WriteString("{\n  \"capture\": ")
	j.put("  ", d.Capture)
	j.bw.WriteString(",\n")
	j.list("connections", d.Connections, nil)
	j.list("flows", d.Flows, d.WriteFlows)
	j.list("findings", d.Findings, nil)
	if d.Pause != nil {
		j.list("pause", d.Pause, nil)
	}
	if d.Points != nil && j.err == nil {
		j.bw.WriteString("  \"points\": ")
		j.put("  ", d.Points)
		j.bw.WriteString(",\n")
	}
	if d.NCCL != nil && j.err == nil {
		j.bw.WriteString("  \"nccl\": ")
		j.put("  ", d.NCCL())
		j.bw.WriteString(",\n")
	}
	if d.Hosts != nil && j.err == nil {
		j.bw.WriteString("  \"hosts\": ")
		j.put("  ", d.Hosts())
		j.bw.WriteString(",\n")
	}
	if j.err != nil {
		return j.err
	}
	fmt.Fprintf(j.bw, "  \"findings_dropped\": %d\n}\n", d.FindingsDropped())
	return j.bw.Flush()
}
