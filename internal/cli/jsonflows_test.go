package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
)

// testdataFlows returns the flows of a testdata capture, analyzed whole.
func testdataFlows(t *testing.T, name string) []analyze.Flow {
	t.Helper()
	r, err := capture.Open(filepath.Join("..", "..", "testdata", name))
	require.NoError(t, err)
	defer r.Close()
	a := analyze.New(analyze.Options{})
	for {
		ci, data, lt, err := r.Next()
		if err != nil {
			break
		}
		a.Feed(ci, lt, data)
	}
	return a.Finish().Flows
}

// failAfter is a writer that fails once it has taken n bytes.
type failAfter struct{ n int }

var errFull = errors.New("disk full")

func (w *failAfter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errFull
	}
	w.n -= len(p)
	return len(p), nil
}

// TestWriteFlowsJSON checks the flows list the encoders write in parallel
// against json.MarshalIndent of each flow joined in order, for 1 to 5
// workers and 0 to all of a capture's flows; and that an error of
// encoding or writing stops it, without a hang, having asked for few
// flows more than it wrote.
func TestWriteFlowsJSON(t *testing.T) {
	var flows []analyze.Flow // more than the slots of every worker: the capture's flows, repeated
	for len(flows) < 100 {
		flows = append(flows, testdataFlows(t, "mix_small.pcap")...)
	}
	for _, workers := range []int{1, 2, 3, 5} {
		for _, n := range []int{0, 1, 2, 17, len(flows)} {
			var want bytes.Buffer
			for i, f := range flows[:n] {
				if i > 0 {
					want.WriteByte(',')
				}
				b, err := json.MarshalIndent(f, "    ", "  ")
				require.NoError(t, err)
				want.WriteString("\n    ")
				want.Write(b)
			}
			var got bytes.Buffer
			bw := bufio.NewWriter(&got)
			i := 0
			wrote, err := writeFlowsJSON(bw, workers, func(f *analyze.Flow) bool {
				if i == n {
					return false
				}
				i++
				*f = flows[i-1]
				return true
			})
			require.NoError(t, err)
			require.NoError(t, bw.Flush())
			assert.Equal(t, n, wrote, "workers %d, %d flows", workers, n)
			require.Equal(t, want.String(), got.String(), "workers %d, %d flows", workers, n)
		}
	}

	bad := flows[3]
	nan := math.NaN()
	bad.ThroughputBps = &nan // json: unsupported value
	for _, tc := range []struct {
		name    string
		out     *failAfter
		badAt   int // the flow that does not encode (-1: none)
		wantErr error
	}{
		{"the writer fails", &failAfter{n: 20_000}, -1, errFull},
		{"a flow does not encode", &failAfter{n: math.MaxInt}, 10, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, workers := range []int{1, 2, 4} {
				calls := 0
				bw := bufio.NewWriterSize(tc.out, 4096)
				wrote, err := writeFlowsJSON(bw, workers, func(f *analyze.Flow) bool {
					calls++
					if calls-1 == tc.badAt {
						*f = bad
						return true
					}
					*f = flows[calls%len(flows)] // endless: only the error stops it
					return true
				})
				require.Error(t, err)
				if tc.wantErr != nil {
					assert.ErrorIs(t, err, tc.wantErr)
				} else {
					assert.Contains(t, err.Error(), "unsupported value")
					assert.Equal(t, tc.badAt, wrote, "the flows before the bad one are written")
				}
				// Asked for after the error: at most the flows in the slots,
				// the batch being filled and the one being asked for when
				// it came.
				assert.LessOrEqual(t, calls, wrote+(workers*slotsPerWorker+1)*flowsPerSlot+2, "flows asked for after the error")
			}
		})
	}
}
