package export

import (
	"errors"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/filename"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// ReportWriter writes the flows, connections, findings and pause tables
// of a report as it is built (analyze.ReportStream): its head (Head),
// then flows one at a time, so that the report is never held whole, then
// its findings; and the collectives tables of its NCCL traffic (NCCL). WriteReport writes a report held whole through one. Every
// table is written, with no rows when the report has none (a capture
// without pause frames has an empty pause table), so that a query over
// many exports finds each table in each.
type ReportWriter struct {
	capture, file string
	flows         *tableWriter[FlowRow]
	conns         *tableWriter[ConnectionRow]
	finds         *tableWriter[FindingRow]
	pause         *tableWriter[PauseRow]
	colls         *tableWriter[CollectiveRow]
	links         *tableWriter[CollectiveLinkRow]
	arrivals      *tableWriter[CollectiveArrivalRow]
}

// NewReportWriter creates the tables' files in dir, each under a
// temporary name until Close puts it under its own (outFile); capture
// and file are those of WriteReport.
func NewReportWriter(dir, capture, file string) (*ReportWriter, error) {
	rw := &ReportWriter{capture: filename.UTF8(capture), file: filename.UTF8(file)}
	var made []func() // the aborts of the tables created
	err := openTable(&rw.flows, dir, FlowsFile, &made)
	for _, open := range []func() error{
		func() error { return openTable(&rw.conns, dir, ConnectionsFile, &made) },
		func() error { return openTable(&rw.finds, dir, FindingsFile, &made) },
		func() error { return openTable(&rw.pause, dir, PauseFile, &made) },
		func() error { return openTable(&rw.colls, dir, CollectivesFile, &made) },
		func() error { return openTable(&rw.links, dir, CollectiveLinksFile, &made) },
		func() error { return openTable(&rw.arrivals, dir, CollectiveArrivalsFile, &made) },
	} {
		if err != nil {
			break
		}
		err = open()
	}
	if err != nil {
		for _, abort := range made {
			abort()
		}
		return nil, err
	}
	return rw, nil
}

// openTable creates the table name in dir as *t and adds its abort to
// made.
func openTable[T any](t **tableWriter[T], dir, name string, made *[]func()) error {
	w, err := newTableWriter[T](filepath.Join(dir, name))
	if err != nil {
		return err
	}
	*t = w
	*made = append(*made, w.abort)
	return nil
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

// NCCL adds the rows of res's collectives, their links and arrivals
// (nil: no NCCL traffic, no rows).
func (rw *ReportWriter) NCCL(res *nccl.Result) {
	if res == nil {
		return
	}
	for i := range res.Collectives {
		c := &res.Collectives[i]
		rw.colls.add(collectiveRow(rw.capture, c))
		for _, l := range c.Links {
			rw.links.add(CollectiveLinkRow{Capture: rw.capture, Index: int32(c.Index), SenderRank: rank32(l.SenderRank), ReceiverRank: rank32(l.ReceiverRank),
				Bytes: l.Bytes, Messages: l.Messages, Steps: l.Steps})
		}
		for _, a := range c.Arrivals {
			rw.arrivals.add(CollectiveArrivalRow{Capture: rw.capture, Index: int32(c.Index), Rank: int32(a.Rank),
				FirstCTS: timeNano(a.FirstCTS), FirstData: timeNano(a.FirstData), LateNs: a.LateNs})
		}
	}
}

// Close writes the rows still batched and the files' footers, and
// returns the errors of the tables.
func (rw *ReportWriter) Close() error {
	return errors.Join(rw.flows.close(), rw.conns.close(), rw.finds.close(), rw.pause.close(),
		rw.colls.close(), rw.links.close(), rw.arrivals.close())
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
