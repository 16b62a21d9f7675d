package capture_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/capture"
)

// BenchmarkReaderNext measures one Next over in-memory captures of 10,000
// frames (60 to 1100 bytes, like RoCE traffic). The reader is reopened,
// outside the timer, when a file runs out, so allocs/op is the steady state.
func BenchmarkReaderNext(b *testing.B) {
	frames := testFrames(10000, layers.LinkTypeEthernet)
	for i := range frames {
		if i%2 == 1 {
			frames[i].ifIndex, frames[i].linkType = 1, linkTypeInfiniBand
		}
	}
	total := 0
	for _, f := range frames {
		total += len(f.data)
	}
	pcap := writePcap(b, false, 65535, layers.LinkTypeEthernet, frames)
	ng := writeNg(b, []layers.LinkType{layers.LinkTypeEthernet, linkTypeInfiniBand}, frames)
	files := []struct {
		name string
		file []byte
	}{
		{"pcap", pcap},
		{"pcapng", ng},
		{"pcap.gz", gz(b, pcap)},
		{"pcapng.gz", gz(b, ng)},
	}
	for _, bc := range files {
		b.Run(bc.name, func(b *testing.B) {
			open := func() *capture.Reader {
				r, err := capture.NewReader(bytes.NewReader(bc.file))
				if err != nil {
					b.Fatal(err)
				}
				return r
			}
			r := open()
			b.SetBytes(int64(total / len(frames)))
			b.ReportAllocs()
			for b.Loop() {
				_, data, _, err := r.Next()
				if err == io.EOF {
					b.StopTimer()
					r = open()
					b.StartTimer()
					_, data, _, err = r.Next()
				}
				if err != nil || len(data) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}
