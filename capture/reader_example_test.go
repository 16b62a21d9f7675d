package capture_test

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/roce-dissect/roce-dissect/capture"
)

func ExampleReader() {
	// A tiny capture in memory; capture.Open reads a file the same way.
	var file bytes.Buffer
	w := pcapgo.NewWriter(&file)
	w.WriteFileHeader(65535, layers.LinkTypeEthernet)
	for i, n := range []int{60, 1082} {
		ts := time.Date(2024, 3, 1, 12, 0, i, 0, time.UTC)
		w.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: n, Length: n}, make([]byte, n))
	}

	r, err := capture.NewReader(&file)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	fmt.Println(r.Format())
	for {
		ci, data, linkType, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err) // e.g. capture: truncated record at byte offset 100: ...
			return
		}
		fmt.Println(ci.Timestamp.Format(time.TimeOnly), len(data), linkType, r.Offset())
	}
	// Output:
	// pcap
	// 12:00:00 60 Ethernet 100
	// 12:00:01 1082 Ethernet 1198
}
