package cli

import (
	"bufio"
	"sync"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/jsonindent"
)

// flowSlot is one flow on its way through writeFlowsJSON: the flow, its
// JSON once a worker has encoded it (done), or the error of encoding it.
type flowSlot struct {
	f    analyze.Flow
	buf  []byte
	err  error
	done chan struct{}
}

// slotsPerWorker is how many flows each encoder may hold: enough that a
// worker rarely waits for the writer, few enough that a report of many
// flows holds only a few of them at once.
const slotsPerWorker = 8

// writeFlowsJSON writes the elements of the "flows" list of streamJSON:
// each flow next gives, indented as encoding/json's MarshalIndent with prefix
// "    " indents it, after a comma and a new line (but the first), in
// order. workers goroutines encode them while next builds the following
// flows and one goroutine writes them, so that encoding, the longest
// part of writing a flow, takes the cores -j allows (docs/parallel.md).
// It returns how many flows it wrote and the first error of encoding or
// writing; once the writer has seen an error it asks next for no more
// flows (those asked for before are encoded and dropped).
func writeFlowsJSON(bw *bufio.Writer, workers int, next func() (analyze.Flow, bool)) (int, error) {
	slots := make([]flowSlot, workers*slotsPerWorker)
	free := make(chan *flowSlot, len(slots))
	for i := range slots {
		slots[i].done = make(chan struct{}, 1)
		free <- &slots[i]
	}
	jobs := make(chan *flowSlot, len(slots))
	order := make(chan *flowSlot, len(slots))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One encoder into the worker's buffer, which then trades
			// places with the slot's: no encoder or buffer per flow.
			var own []byte
			enc := jsonindent.NewEncoder("    ")
			for s := range jobs {
				own, s.err = enc.Append(own[:0], &s.f)
				s.buf, own = own, s.buf
				s.f = analyze.Flow{} // its memory goes as soon as it is encoded
				s.done <- struct{}{}
			}
		}()
	}
	// The writer takes the flows in the order they were given.
	var n int
	var werr error
	failed := make(chan struct{})
	written := make(chan struct{})
	go func() {
		defer close(written)
		for s := range order {
			<-s.done
			switch {
			case werr != nil:
			case s.err != nil:
				werr = s.err
				close(failed)
			default:
				if n > 0 {
					bw.WriteByte(',')
				}
				bw.WriteString("\n    ")
				if _, err := bw.Write(s.buf); err != nil {
					werr = err
					close(failed)
					break
				}
				n++
			}
			free <- s
		}
	}()
feed:
	for {
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
		f, ok := next()
		if !ok {
			break
		}
		s.f = f
		order <- s
		jobs <- s
	}
	close(jobs)
	close(order)
	wg.Wait()
	<-written
	return n, werr
}
