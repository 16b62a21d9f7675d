package cli

import (
	"bufio"
	"sync"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/jsonindent"
	"github.com/roce-dissect/roce-dissect/report"
)

// flowSlot is a batch of flows on its way through writeFlowsJSON: the
// flows, their JSON once a worker has encoded them (done), or the error of
// encoding one.
type flowSlot struct {
	flows []analyze.Flow
	n     int  // how many of flows were encoded
	first bool // holds the list's first flow: no comma before it
	buf   []byte
	err   error
	done  chan struct{}
}

const (
	// slotsPerWorker is how many batches each encoder may hold: enough
	// that a worker rarely waits for the writer.
	slotsPerWorker = 4
	// flowsPerSlot is how many flows a batch holds: enough that a flow of
	// one packet does not pay three channel operations of its own (which
	// made -j 2 slower than -j 1 on one-packet flows), few enough that a
	// report of many flows holds only a few hundred of them at once.
	flowsPerSlot = 32
)

// writeFlowsJSON writes the elements of the "flows" list of streamJSON:
// each flow next writes (into a batch's slot; false after the last), as
// report.JSONDocument.WriteFlows asks, in order. workers goroutines encode them, a batch at a time, while next
// builds the following flows and one goroutine writes them, so that
// encoding, the longest part of writing a flow, takes the cores -j allows
// (docs/parallel.md). It returns how many flows it wrote and the first
// error of encoding or writing; once the writer has seen an error it asks
// next for no more flows (those asked for before are encoded and dropped).
func writeFlowsJSON(bw *bufio.Writer, workers int, next func(*analyze.Flow) bool) (int, error) {
	slots := make([]flowSlot, workers*slotsPerWorker)
	free := make(chan *flowSlot, len(slots))
	for i := range slots {
		slots[i].done = make(chan struct{}, 1)
		slots[i].flows = make([]analyze.Flow, 0, flowsPerSlot)
		free <- &slots[i]
	}
	jobs := make(chan *flowSlot, len(slots))
	order := make(chan *flowSlot, len(slots))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			enc := jsonindent.NewEncoder(report.JSONElementPrefix) // one per worker: its plans are built once
			enc.Prepare(&analyze.Flow{})                           // whether it is given flows or not (TestShardNoAllocsPerFrame)
			for s := range jobs {
				s.buf, s.n, s.err = encodeFlows(enc, s.buf[:0], s.flows, s.first)
				clear(s.flows) // their memory goes as soon as they are encoded
				s.flows = s.flows[:0]
				s.done <- struct{}{}
			}
		}()
	}
	// The writer takes the batches in the order they were given.
	var n int
	var werr error
	failed := make(chan struct{})
	written := make(chan struct{})
	go func() {
		defer close(written)
		for s := range order {
			<-s.done
			if werr == nil {
				// the flows before one that does not encode are written
				if _, err := bw.Write(s.buf); err != nil {
					werr = err
				} else if n += s.n; s.err != nil {
					werr = s.err
				}
				if werr != nil {
					close(failed)
				}
			}
			free <- s
		}
	}()
	first, end := true, false
feed:
	for !end {
		select { // a failure first: select takes either of two ready cases
		case <-failed:
			break feed
		default:
		}
		var s *flowSlot
		select {
		case s = <-free:
		case <-failed:
			break feed
		}
		for !end && len(s.flows) < flowsPerSlot {
			s.flows = append(s.flows, analyze.Flow{})
			if end = !next(&s.flows[len(s.flows)-1]); end {
				s.flows = s.flows[:len(s.flows)-1]
			}
		}
		if len(s.flows) == 0 {
			free <- s
			break
		}
		s.first, first = first, false
		order <- s
		jobs <- s
	}
	close(jobs)
	close(order)
	wg.Wait()
	<-written
	return n, werr
}

// encodeFlows appends the flows to b as elements of the list (after a
// comma but for the list's first), and returns how many it appended: all,
// or those before the first that fails, and its error.
func encodeFlows(enc *jsonindent.Encoder, b []byte, flows []analyze.Flow, first bool) ([]byte, int, error) {
	for i := range flows {
		mark := len(b)
		var err error
		if b, err = enc.AppendElement(b, &flows[i], first && i == 0); err != nil {
			return b[:mark], i, err
		}
	}
	return b, len(flows), nil
}
