package export

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// ReportWriter writes the flows, connections and findings tables of a
// report as it is built (analyze.ReportStream): flows one at a time, so
// that the report is never held whole. WriteReport writes a report held
// whole; both write the same rows.
type ReportWriter struct {
	capture, file string
	flows         *tableWriter[FlowRow]
	conns         *tableWriter[ConnectionRow]
	finds         *tableWriter[FindingRow]
}

// NewReportWriter creates the three tables' files in dir; capture and
// file are those of WriteReport.
func NewReportWriter(dir, capture, file string) (*ReportWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rw := &ReportWriter{capture: capture, file: file}
	var err error
	if rw.flows, err = newTableWriter[FlowRow](filepath.Join(dir, FlowsFile)); err != nil {
		return nil, err
	}
	if rw.conns, err = newTableWriter[ConnectionRow](filepath.Join(dir, ConnectionsFile)); err != nil {
		rw.flows.close()
		return nil, err
	}
	if rw.finds, err = newTableWriter[FindingRow](filepath.Join(dir, FindingsFile)); err != nil {
		rw.flows.close()
		rw.conns.close()
		return nil, err
	}
	return rw, nil
}

// Flow adds f's row to the flows table.
func (rw *ReportWriter) Flow(f *analyze.Flow) { rw.flows.add(flowRow(rw.capture, f)) }

// Connection adds c's row to the connections table.
func (rw *ReportWriter) Connection(c *analyze.Connection) {
	rw.conns.add(connectionRow(rw.capture, c))
}

// Finding adds f's row to the findings table.
func (rw *ReportWriter) Finding(f *analyze.Finding) { rw.finds.add(findingRow(rw.capture, rw.file, f)) }

// Close writes the rows still batched and the files' footers, and
// returns the first error of the three tables.
func (rw *ReportWriter) Close() error {
	return errors.Join(rw.flows.close(), rw.conns.close(), rw.finds.close())
}

// tableWriter writes a table's rows tableBatch at a time.
type tableWriter[T any] struct {
	f     *os.File
	w     *parquet.GenericWriter[T]
	batch []T
	err   error
}

func newTableWriter[T any](path string) (*tableWriter[T], error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &tableWriter[T]{f: f, w: parquet.NewGenericWriter[T](f, options()...), batch: make([]T, 0, tableBatch)}, nil
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

func (t *tableWriter[T]) close() error {
	t.flush()
	if err := t.w.Close(); err != nil && t.err == nil {
		t.err = err
	}
	if err := t.f.Close(); err != nil && t.err == nil {
		t.err = err
	}
	return t.err
}
