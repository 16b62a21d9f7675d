package capture_test

import (
	"io"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/require"
)

// TestGzipMembers: a gzip file of several members (cat a.gz b.gz, or a
// stream compressed in pieces) is one stream, split anywhere, even in
// the middle of a record, and with an empty member.
func TestGzipMembers(t *testing.T) {
	frames := testFrames(50, layers.LinkTypeEthernet)
	pcap := writePcap(t, false, 65535, layers.LinkTypeEthernet, frames)
	for _, cuts := range [][]int{{24}, {100}, {len(pcap) / 2}, {7, 500, 501, len(pcap) - 1}, {len(pcap)}} {
		var file []byte
		prev := 0
		for _, c := range append(cuts, len(pcap)) {
			file = append(file, gz(t, pcap[prev:c])...)
			prev = c
		}
		r := mustReader(t, file)
		got, err := readAll(t, r)
		require.ErrorIs(t, err, io.EOF, "cuts %v", cuts)
		requireFrames(t, frames, got)
	}
}
