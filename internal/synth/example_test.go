package synth_test

import (
	"bytes"
	"fmt"

	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// Generate an ib_write_bw-like capture in which the tap missed one request
// and a NAK triggered a go-back-N resend, and read its truth.
func Example() {
	start := uint32(1000)
	cfg := synth.Config{
		Scenario: synth.ScenarioWriteBW,
		Messages: 4,
		MsgSize:  2048, // two packets per message at a 1024-byte path MTU
		MTU:      1024,
		StartPSN: &start,
		Impairments: synth.Impairments{
			Drop: []synth.PSNRef{{Value: 1001}},
			NAK:  []synth.PSNRef{{Value: 1004}},
		},
	}
	var capture bytes.Buffer
	truth, err := synth.Generate(cfg, &capture, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("frames:", truth.Frames)
	for _, f := range truth.Flows {
		if f.DestQP == 1 {
			continue // CM MADs
		}
		r := f.Requests
		if r.Packets > 0 {
			fmt.Printf("%s -> %s QP %d: %d requests, missing %v, %d retransmitted, %d messages\n",
				f.Src, f.Dst, f.DestQP, r.Packets, r.Gaps, r.Retransmitted, f.Messages.Count)
		} else {
			fmt.Printf("%s -> %s QP %d: %d ACKs, %d NAK\n", f.Src, f.Dst, f.DestQP, f.Responses.ACKs, f.Responses.NAKs)
		}
	}
	// Output:
	// frames: 20
	// 10.0.0.1 -> 10.0.0.2 QP 22121: 10 requests, missing [{1001 1001 1}], 3 retransmitted, 3 messages
	// 10.0.0.2 -> 10.0.0.1 QP 22120: 4 ACKs, 1 NAK
}
