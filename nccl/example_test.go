package nccl_test

import (
	"encoding/json"
	"fmt"

	"github.com/roce-dissect/roce-dissect/layers"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// A receiver (10.0.0.2) posts a receive with a CTS written to its sender
// (10.0.0.1, rank 0), which then writes 100 bytes to the buffer the CTS
// named. (Packets as analyze.Analyzer.Feed decodes them; in use, the
// Collector is the Analyzer's Options.Observer.)
func Example() {
	col := nccl.NewCollector()
	col.Add(write(layers.OpcodeRCRDMAWriteOnly, hostB, hostA, 0x20, 0x7000, 0x99, 64, -1, ctsEntry(0xa000, 1<<20, 0x55, 1, 0, 1)))
	col.Add(write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xa000, 0x55, 100, 100, nil))
	res := nccl.Combine(col)
	out, _ := json.Marshal(res.Connections[0])
	fmt.Println(res.FIFOLayout, res.Ranks)
	fmt.Println(string(out))
	// Output:
	// 2.20 [{0 10.0.0.1}]
	// {"sender_rank":0,"receiver_rank":null,"sender":"10.0.0.1","receiver":"10.0.0.2","data_qps":[48],"cts_qp":32,"fifo_rkey":153,"fifo_addr":"0x7000","cts":1,"messages":1,"bytes":100,"active":true}
}
