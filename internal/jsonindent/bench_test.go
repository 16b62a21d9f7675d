package jsonindent_test

import (
	"bytes"
	"strconv"
	"testing"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/analyzetest"
	"github.com/roce-dissect/roce-dissect/internal/jsonindent"
)

// BenchmarkFlows writes every flow of a real capture (testdata's
// mix_small: 20 flows, NIC figures, gaps, RTTs) as -o json writes the
// flows list, with an Encoder and with go-json-experiment/json's
// jsontext.Encoder with encoding/json's options (the library the Encoder
// leaves the values it does not plan to); bytes/s is of the JSON written. Its
// floor is the least any encoder of these flows must do: append, for
// each line of their JSON, a key as long as the line's and a number.
func BenchmarkFlows(b *testing.B) {
	flows := analyzetest.Report(b, "../../testdata/mix_small.pcap", analyze.Options{}).Flows
	var err error
	b.Run("floor", func(b *testing.B) {
		// each flow's lines, as a key and a number to write
		type line struct {
			key []byte
			n   uint64
		}
		var lines [][]line
		e := jsonindent.NewEncoder("    ")
		for i := range flows {
			js, err := e.Append(nil, &flows[i])
			require.NoError(b, err)
			var ls []line
			for j, l := range bytes.Split(js, []byte("\n")) {
				ls = append(ls, line{key: l, n: uint64(j) * 12345})
			}
			lines = append(lines, ls)
		}
		b.ReportAllocs()
		var buf []byte
		n := 0
		for b.Loop() {
			n = 0
			for _, ls := range lines {
				buf = buf[:0]
				for _, l := range ls {
					buf = append(buf, '\n')
					buf = append(buf, l.key...)
					buf = strconv.AppendUint(buf, l.n, 10)
				}
				n += len(buf)
			}
		}
		b.SetBytes(int64(n))
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(flows)), "ns/flow")
	})
	b.Run("jsonindent", func(b *testing.B) {
		b.ReportAllocs()
		e := jsonindent.NewEncoder("    ")
		var buf []byte
		n := 0
		for b.Loop() {
			n = 0
			for i := range flows {
				if buf, err = e.Append(buf[:0], &flows[i]); err != nil {
					b.Fatal(err)
				}
				n += len(buf)
			}
		}
		b.SetBytes(int64(n))
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(flows)), "ns/flow")
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		e := jsontext.NewEncoder(&buf, jsonv1.DefaultOptionsV1(), jsontext.WithIndentPrefix("    "), jsontext.WithIndent(jsonindent.Indent))
		n := 0
		for b.Loop() {
			n = 0
			for i := range flows {
				buf.Reset()
				if err = json.MarshalEncode(e, &flows[i]); err != nil {
					b.Fatal(err)
				}
				n += buf.Len()
			}
		}
		b.SetBytes(int64(n))
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(flows)), "ns/flow")
	})
}
