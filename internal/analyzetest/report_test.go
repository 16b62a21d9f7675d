package analyzetest_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/analyzetest"
)

// TestReport: every frame of the file is analyzed, as many RoCE packets
// and flows as the generator's truth says.
func TestReport(t *testing.T) {
	for _, file := range []string{"read_bw.pcap", "mix_small.pcap"} {
		path := "../../testdata/" + file
		raw, err := os.ReadFile(path + ".truth.json")
		require.NoError(t, err)
		var truth struct {
			RoCEPackets uint64 `json:"roce_packets"`
			Flows       []any  `json:"flows"`
		}
		require.NoError(t, json.Unmarshal(raw, &truth))
		rep := analyzetest.Report(t, path, analyze.Options{})
		require.Equal(t, truth.RoCEPackets, rep.Capture.RoCEPackets, file)
		require.Len(t, rep.Flows, len(truth.Flows), file)
	}
}
