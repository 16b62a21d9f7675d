package export

import (
	"errors"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/filename"
)

// ReportWriter writes the flows, connections, findings and pause tables
// of a report as it is built (analyze.ReportStream): its head (Head),
// then flows one at a time, so that the report is never held whole, then
// its findings. WriteReport writes a report held whole through one. Every
// table is written, with no rows when the report has none (a capture
// without pause frames has an empty pause table), so that a query over
// many exports finds each table in each.
type ReportWriter struct {
	capture, file string
	flows         *tableWriter[FlowRow]
	conns         *tableWriter[ConnectionRow]
	finds         *tableWriter[FindingRow]
	pause         *tableWriter[PauseRow]
}

// NewReportWriter creates the four tables' files in dir, each under a
// temporary name until Close puts it under its own (outFile); capture
// and file are those of WriteReport.
func NewReportWriter(dir, capture, file string) (*ReportWriter, error) {
	rw := &ReportWriter{capture: filename.UTF8(capture), file: filename.UTF8(file)}
	var err error
	if rw.flows, err = newTableWriter[FlowRow](filepath.Join(dir, FlowsFile)); err != nil {
		return nil, err
	}
	if rw.conns, err = newTableWriter[ConnectionRow](filepath.Join(dir, ConnectionsFile)); err != nil {
		rw.flows.abort()
		return nil, err
	}
	if rw.finds, err = newTableWriter[FindingRow](filepath.Join(dir, FindingsFile)); err != nil {
		rw.flows.abort()
		rw.conns.abort()
		return nil, err
	}
	if rw.pause, err = newTableWriter[PauseRow](filepath.Join(dir, PauseFile)); err != nil {
		rw.flows.abort()
		rw.conns.abort()
		rw.finds.abort()
		return nil, err
	}
	return rw, nil
}

// Head adds the rows of the report's head (ReportStream.Head, or the
// report held whole): its connections and its pause figures.
func (rw *ReportWriter) Head(rep *analyze.Report) {
	for i := range rep.Connections {
		rw.conns.add(connectionRow(rw.capture, &rep.Connections[i]))
	}
	for i := range rep.Pause {
		rw.pause.add(pauseRow(rw.capture, rep.Capture.LinkSpeedBps, &rep.Pause[i]))
	}
}

// Flow adds f's row to the flows table.
func (rw *ReportWriter) Flow(f *analyze.Flow) { rw.flows.add(flowRow(rw.capture, f)) }

// Finding adds f's row to the findings table.
func (rw *ReportWriter) Finding(f *analyze.Finding) { rw.finds.add(findingRow(rw.capture, rw.file, f)) }

// Close writes the rows still batched and the files' footers, and
// returns the errors of the tables.
func (rw *ReportWriter) Close() error {
	return errors.Join(rw.flows.close(), rw.conns.close(), rw.finds.close(), rw.pause.close())
}

// tableWriter writes a table's rows tableBatch at a time.
type tableWriter[T any] struct {
	out   *outFile
	w     *parquet.GenericWriter[T]
	batch []T
	err   error
}

func newTableWriter[T any](path string) (*tableWriter[T], error) {
	out, err := createOut(path)
	if err != nil {
		return nil, err
	}
	return &tableWriter[T]{out: out, w: parquet.NewGenericWriter[T](out.w, options()...), batch: make([]T, 0, tableBatch)}, nil
}

func (t *tableWriter[T]) add(row T) {
	t.batch = append(t.batch, row)
	if len(t.batch) == cap(t.batch) {
		t.flush()
	}
}

func (t *tableWriter[T]) flush() {
	if len(t.batch) > 0 && t.err == nil {
		_, t.err = t.w.Write(t.batch)
	}
	clear(t.batch)
	t.batch = t.batch[:0]
}

// abort removes the table's file, not written.
func (t *tableWriter[T]) abort() { t.out.Abort() }

func (t *tableWriter[T]) close() error {
	t.flush()
	if err := t.w.Close(); err != nil && t.err == nil {
		t.err = err
	}
	t.err = t.out.Commit(t.err)
	return t.err
}
