package cli_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
)

// writeREQs writes a pcap of n CM REQs (UD SEND ONLY to QP1, 256-byte
// MADs encoded by package cm, correct ICRCs) with LocalCommIDs first,
// first+1, …: n connections.
func writeREQs(w io.Writer, first, n int) error { return writeEach(w, first, n, nil, reqLayers) }

// reqLayers are the IB headers of a REQ with LocalCommID and LocalQPN i.
func reqLayers(i int) []gopacket.SerializableLayer {
	mad := &cm.MAD{Header: cm.Header{BaseVersion: 1, MgmtClass: cm.ClassCM, ClassVersion: 2, Method: 3},
		Message: &cm.ConnectRequest{LocalCommID: uint32(i), LocalQPN: uint32(i), TransportServiceType: cm.TransportRC}}
	return []gopacket.SerializableLayer{&layers.BTH{Opcode: layers.OpcodeUDSendOnly, PKey: 0xFFFF, DestQP: 1}, &layers.DETH{QKey: 0x80010000, SrcQP: 1}, mad}
}

// TestMaxConnections: --max-connections caps the CM connections of the run
// (two files of 1,500 REQs each with --max-connections 1000 keep 1,000),
// the others are counted in capture.connections_dropped, said in the text
// report and a connection_table_full finding. Before the cap a REQ flood
// of 1M packets made 1M connections (1.43 GiB, 216 MB of text report).
func TestMaxConnections(t *testing.T) {
	files := writeFiles(t, t.TempDir(), "reqs%d.pcap", 2, func(w io.Writer, i int) error { return writeREQs(w, 1+1500*i, 1500) })
	code, out, errs := run(t, nil, append([]string{"-o", "json", "--max-connections", "1000"}, files...)...)
	require.Equal(t, 0, code, errs)
	var rep struct {
		Capture struct {
			ConnectionsDropped int `json:"connections_dropped"`
		} `json:"capture"`
		Connections []json.RawMessage `json:"connections"`
		Findings    []struct {
			Kind string `json:"kind"`
		} `json:"findings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Len(t, rep.Connections, 1000)
	assert.Equal(t, 2000, rep.Capture.ConnectionsDropped)
	full := 0
	for _, f := range rep.Findings {
		if f.Kind == "connection_table_full" {
			full++
		}
	}
	assert.NotZero(t, full)

	code, out, errs = run(t, nil, append([]string{"--color=never", "--max-connections", "1000"}, files...)...)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "connection table full: 2000 more CM connections (REQs) counted but not tracked (--max-connections)")

	code, out, _ = run(t, nil, "--color=never", files[0])
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "connection table full", "the default cap (100,000) is not reached")

	code, _, errs = run(t, nil, "--max-connections", "0", files[0])
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--max-connections must be positive")
}

// TestWriteCMFlood writes the REQ flood of the measurement of
// docs/robustness.md (ROCE_DISSECT_CM_FLOOD_N REQs with distinct CommIDs
// in one flow, default 1,000,000) to the file named by
// ROCE_DISSECT_CM_FLOOD, when set:
//
//	ROCE_DISSECT_CM_FLOOD=/tmp/reqs.pcap go test ./internal/cli -run TestWriteCMFlood
func TestWriteCMFlood(t *testing.T) {
	file := os.Getenv("ROCE_DISSECT_CM_FLOOD")
	if file == "" {
		t.Skip("set ROCE_DISSECT_CM_FLOOD to write the capture")
	}
	n := 1_000_000
	if s := os.Getenv("ROCE_DISSECT_CM_FLOOD_N"); s != "" {
		_, err := fmt.Sscan(s, &n)
		require.NoError(t, err)
	}
	f, err := os.Create(file)
	require.NoError(t, err)
	require.NoError(t, writeREQs(f, 1, n))
	require.NoError(t, f.Close())
}
