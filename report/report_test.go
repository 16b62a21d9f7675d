package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
	"github.com/roce-dissect/roce-dissect/nccl"
	"github.com/roce-dissect/roce-dissect/report"
)

// TestWriteTextIsTheCommandsReport: the library's text and JSON reports
// are byte for byte what roce-dissect prints for the same file.
func TestWriteTextIsTheCommandsReport(t *testing.T) {
	for _, file := range []string{"../testdata/loss_nak_gobackn.pcap", "../testdata/erf.pcap", "../testdata/send_bw_ipv6.pcapng"} {
		t.Run(file, func(t *testing.T) {
			rep := reportOf(t, file)
			var lib, libJSON, cmd, cmdJSON, errb bytes.Buffer
			require.NoError(t, report.WriteText(&lib, rep, report.TextOptions{Title: file}))
			// The command's document has the "nccl" object (null: no NCCL
			// traffic in these files) and the "hosts" one, which
			// analyze.Report has not.
			d := report.ReportDocument(rep, nil)
			d.NCCL = func() *nccl.Result { return nil }
			d.Hosts = func() *report.Hosts { return report.TallyFlows(rep.Flows).Hosts(file) }
			require.NoError(t, report.WriteJSONDocument(&libJSON, d))
			require.Equal(t, 0, cli.RunWithStdin(context.Background(), []string{"--color=never", file}, nil, &cmd, &errb), errb.String())
			require.Equal(t, 0, cli.RunWithStdin(context.Background(), []string{"-o", "json", file}, nil, &cmdJSON, &errb), errb.String())
			assert.Equal(t, cmd.String(), lib.String())
			assert.Equal(t, cmdJSON.String(), libJSON.String())
			var col bytes.Buffer
			require.NoError(t, report.WriteText(&col, rep, report.TextOptions{Title: file, Colour: true}))
			assert.Contains(t, col.String(), "\x1b[")
		})
	}
}

// TestCSVText: capture-derived text that a spreadsheet would run as a
// formula is written as text (OWASP, "CSV Injection"); other text is
// written as it is.
func TestCSVText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"=cmd|' /C calc'!A0.pcap", "'=cmd|' /C calc'!A0.pcap"},
		{"+1", "'+1"},
		{"-2", "'-2"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"a.pcap", "a.pcap"},
		{"10.0.0.1", "10.0.0.1"},
		{"fe80::1", "fe80::1"},
		{"LID 1", "LID 1"},
		{"", ""},
	} {
		assert.Equal(t, tc.want, report.CSVText(tc.in), "%q", tc.in)
	}
}

// TestConnectionsTunnel: a connection whose REQ arrived in a tunnel that
// keys flows names it in the connections table, as its flows do in
// theirs (two tenants' connections of the same addresses are told
// apart). The oracle is roce-synth's truth: the VXLAN VNI it wrapped the
// capture's frames in, inside an ERSPAN III mirror.
func TestConnectionsTunnel(t *testing.T) {
	const file = "../testdata/erspan3_vxlan.pcap"
	b, err := os.ReadFile(file + ".truth.json")
	require.NoError(t, err)
	var truth struct {
		Encapsulation struct {
			Tunnels []struct {
				Kind string `json:"kind"`
				ID   uint32 `json:"id"`
			} `json:"tunnels"`
		} `json:"encapsulation"`
	}
	require.NoError(t, json.Unmarshal(b, &truth))
	vni := ""
	for _, tn := range truth.Encapsulation.Tunnels {
		if tn.Kind == "vxlan" {
			vni = fmt.Sprintf("vxlan VNI %d", tn.ID)
		}
	}
	require.NotEmpty(t, vni)
	var out bytes.Buffer
	require.NoError(t, report.WriteText(&out, reportOf(t, file), report.TextOptions{}))
	lines := strings.Split(out.String(), "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Connections") })
	require.GreaterOrEqual(t, at, 0)
	assert.True(t, strings.HasSuffix(strings.TrimSpace(lines[at+1]), "TUNNEL"), lines[at+1])
	assert.True(t, strings.HasSuffix(strings.TrimSpace(lines[at+2]), vni), lines[at+2])
}
