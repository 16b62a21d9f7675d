package report_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/report"
)

// TestAppendFlowCSVRow: a row appended to the row of the flow before,
// emptied, is the row of its own flow, cell for cell under the header
// against the Flow's fields, with nothing left of the one before; a row
// given with cells keeps them.
func TestAppendFlowCSVRow(t *testing.T) {
	header := report.FlowCSVHeader()
	col := func(name string) int {
		i := slices.Index(header, name)
		require.GreaterOrEqual(t, i, 0, name)
		return i
	}
	for _, file := range []string{"../testdata/mix_small.pcap", "../testdata/ecn_cnp.pcap", "../testdata/pfc_storm.pcap", "../testdata/erspan3_vxlan.pcap"} {
		t.Run(file, func(t *testing.T) {
			rep := reportOf(t, file)
			require.Greater(t, len(rep.Flows), 1, "flows enough to reuse a row")
			var row []string
			for i := range rep.Flows {
				f := &rep.Flows[i]
				row = report.AppendFlowCSVRow(row[:0], f)
				require.Len(t, row, len(header))
				assert.Equal(t, f.Src, row[col("src")])
				assert.Equal(t, f.Dst, row[col("dst")])
				assert.Equal(t, strconv.FormatUint(uint64(f.DestQP), 10), row[col("dest_qp")])
				assert.Equal(t, f.Transport, row[col("transport")])
				assert.Equal(t, strconv.FormatUint(f.Packets, 10), row[col("packets")])
				assert.Equal(t, strconv.FormatUint(f.PayloadBytes, 10), row[col("payload_bytes")])
				assert.Equal(t, strconv.FormatUint(f.Congestion.CNPs, 10), row[col("cnps")])
				assert.Equal(t, strconv.FormatUint(f.ICRC.Unverifiable, 10), row[col("icrc_unverifiable")])
				// erspan3_vxlan.pcap: roce-synth --wrap erspan3,vxlan, whose VNI is 5001.
				tunnel := []string{"", "", ""}
				if strings.HasSuffix(file, "erspan3_vxlan.pcap") {
					tunnel = []string{"vxlan", "5001", "VNI"}
				}
				assert.Equal(t, tunnel, row[col("tunnel_kind"):col("tunnel_id_name")+1])
				assert.Equal(t, report.AppendFlowCSVRow(nil, f), row, "flow %d", i)
			}
			withCells := report.AppendFlowCSVRow([]string{"a.pcap"}, &rep.Flows[0])
			assert.Equal(t, "a.pcap", withCells[0])
			assert.Equal(t, report.AppendFlowCSVRow(nil, &rep.Flows[0]), withCells[1:])
		})
	}
}
