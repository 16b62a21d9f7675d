package analyze_test

import (
	"fmt"
	"io"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
)

// Write a report flow by flow, each flow's state released once it is
// written: memory peaks at the flow table, not at the table plus the
// report. One Flow takes every flow in turn, and each NIC object is given
// back for the next flow's (Reuse) once written.
func ExampleAnalyzer_FinishStream() {
	r, err := capture.Open("../testdata/ecn_cnp.pcap")
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
	s := a.FinishStream()
	fmt.Printf("%d frames\n", s.Head().Capture.Frames)
	var f analyze.Flow
	for s.Next(&f) {
		fmt.Printf("%s → %s QP %#x: %d packets", f.Src, f.Dst, f.DestQP, f.Packets)
		if f.NIC != nil {
			fmt.Printf(", %d CNPs, capture at the %s side", f.NIC.CNPs, f.NIC.CaptureSide)
		}
		fmt.Println()
		s.Reuse(&f) // nothing of f is kept
	}
	fmt.Printf("%d findings\n", len(s.End().Findings))
	// Output:
	// 26 frames
	// 10.0.0.1 → 10.0.0.2 QP 0x1: 3 packets
	// 10.0.0.2 → 10.0.0.1 QP 0x1: 2 packets
	// 10.0.0.1 → 10.0.0.2 QP 0x5669: 12 packets, 3 CNPs, capture at the responder side
	// 10.0.0.2 → 10.0.0.1 QP 0x5668: 9 packets
	// 6 findings
}
