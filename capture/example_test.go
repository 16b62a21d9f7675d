package capture_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gopacket/gopacket"

	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/layers"
)

// Read a pcapng capture frame by frame and decode each frame with
// gopacket; the same code reads pcap, ERF and gzip-compressed files.
func Example() {
	r, err := capture.Open("../testdata/send_bw_ipv6.pcapng")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	fmt.Println("format:", r.Format().Container)
	frames, ib := 0, 0
	for {
		ci, data, linkType, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		frames++
		pkt := gopacket.NewPacket(data, linkType, gopacket.NoCopy)
		if bth, ok := pkt.Layer(layers.LayerTypeBTH).(*layers.BTH); ok && frames == 1 {
			fmt.Printf("frame 1: %s, %d bytes, %s\n", ci.Timestamp.UTC().Format("2006-01-02 15:04:05.000000"), ci.Length, bth.Opcode)
		}
		if pkt.Layer(layers.LayerTypeBTH) != nil {
			ib++
		}
	}
	fmt.Println(frames, "frames,", ib, "with a BTH")
	// Output:
	// format: pcapng
	// frame 1: 2026-01-01 00:00:00.000000, 342 bytes, UD_SEND_ONLY
	// 29 frames, 29 with a BTH
}

// A file that is not a capture is an error wrapping ErrNotCapture.
func ExampleNewReader() {
	_, err := capture.NewReader(strings.NewReader("hello, not a capture"))
	fmt.Println(errors.Is(err, capture.ErrNotCapture))
	// Output:
	// true
}
