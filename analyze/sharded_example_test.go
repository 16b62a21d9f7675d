package analyze_test

import (
	"fmt"
	"io"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
)

// readCapture feeds feed every frame of the capture file at path.
func readCapture(path string, feed func(gopacket.CaptureInfo, gplayers.LinkType, []byte)) error {
	r, err := capture.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		ci, data, linkType, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		feed(ci, linkType, data)
	}
}

// Analyze a capture on 4 shards, one goroutine each but the feeder's:
// the report is the one Analyzer's.
func ExampleSharded() {
	const path = "../testdata/mix_small.pcap"
	s := analyze.NewSharded(analyze.Options{}, 4)
	defer s.Close() // its goroutines end however this returns
	// When the shards cannot be combined exactly, Finish reads the
	// capture again with one Analyzer.
	s.Reread(func(feed func(gopacket.CaptureInfo, gplayers.LinkType, []byte)) error {
		return readCapture(path, feed)
	})
	if err := readCapture(path, s.Feed); err != nil {
		fmt.Println(err)
		return
	}
	rep, err := s.Finish()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d frames, %d flows, %d connections, %d findings\n", rep.Capture.Frames, len(rep.Flows), len(rep.Connections), len(rep.Findings))
	// Output:
	// 400 frames, 20 flows, 8 connections, 0 findings
}
