package jsonindent_test

import (
	"fmt"
	"io"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/jsonindent"
)

// The "mtu" object of the first flow of a real capture, as -o json writes
// it inside the flows list (prefix "    "): its path MTU neither inferred
// nor negotiated, those keys are absent.
func Example() {
	r, err := capture.Open("../../testdata/read_bw.pcap")
	if err != nil {
		panic(err)
	}
	defer r.Close()
	a := analyze.New(analyze.Options{})
	for {
		ci, data, lt, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		a.Feed(ci, lt, data)
	}
	rep := a.Report()
	b, err := jsonindent.NewEncoder("    ").Append(nil, &rep.Flows[0].MTU)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
	// Output:
	// {
	//       "max_payload": 256,
	//       "above_negotiated": 0
	//     }
}
