package analyze_test

import (
	"fmt"
	"io"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
)

// Analyze a capture on 4 shards, one goroutine each but the feeder's:
// the report is the one Analyzer's.
func ExampleSharded() {
	r, err := capture.Open("../testdata/mix_small.pcap")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	s := analyze.NewSharded(analyze.Options{}, 4)
	defer s.Close() // its goroutines end however this returns
	s.ReadChunks(r) // frames read into buffers the shards share (optional)
	for {
		ci, data, linkType, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		s.Feed(ci, linkType, data)
	}
	rep, err := s.Finish() // ErrNotDisjoint: analyze it with one Analyzer
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d frames, %d flows, %d connections, %d findings\n", rep.Capture.Frames, len(rep.Flows), len(rep.Connections), len(rep.Findings))
	// Output:
	// 400 frames, 20 flows, 8 connections, 0 findings
}
