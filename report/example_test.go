package report_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/report"
)

// Analyze a capture and print roce-dissect's text report; here only its
// findings are kept.
func Example() {
	r, err := capture.Open("../testdata/loss_nak_gobackn.pcap")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	a := analyze.New(analyze.Options{})
	for {
		ci, data, linkType, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		a.Feed(ci, linkType, data)
	}
	var b strings.Builder
	if err := report.WriteText(&b, a.Finish(), report.TextOptions{Title: "loss_nak_gobackn.pcap"}); err != nil {
		fmt.Println(err)
		return
	}
	text := b.String()
	fmt.Println(text[:strings.Index(text, "\n")])
	fmt.Print(text[strings.Index(text, "Findings"):])
	// Output:
	// Capture loss_nak_gobackn.pcap
	// Findings (worst first): 1 error, 3 warnings, 2 info
	//   ERROR   frame 15 nak  10.0.0.2 → 10.0.0.1 QP 0x005668: NAK PSN_SEQUENCE_ERROR at PSN 1007
	//   WARNING 3 × retransmission  10.0.0.1 → 10.0.0.2 QP 0x005669: frames 16 to 19
	//     frame 16: PSN 1007 seen before (RC_RDMA_WRITE_MIDDLE)
	//     frame 17: PSN 1008 seen before (RC_RDMA_WRITE_LAST)
	//     frame 19: PSN 1009 seen before (RC_RDMA_WRITE_FIRST)
	//   INFO    frame 7 incomplete_message  10.0.0.1 → 10.0.0.2 QP 0x005669: message begun at frame 4 is incomplete (2048 bytes seen); only PSNs the capture missed are missing (the responder acknowledged them)
	//   INFO    frame 7 capture_gap  10.0.0.1 → 10.0.0.2 QP 0x005669: 1 request PSN missing from the capture acknowledged by the responder and never resent: capture-side drops, not network loss
}
