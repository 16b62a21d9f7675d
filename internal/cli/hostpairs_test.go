package cli_test

import (
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// writeHostPairs writes n frames, each an RC SEND ONLY between a host pair
// of its own (10.a.b.c → 11.a.b.c): n one-frame flows that sharding
// spreads over every shard.
func writeHostPairs(w io.Writer, n int) error {
	return writeEach(w, 0, n, ownHostPair, func(i int) []gopacket.SerializableLayer {
		return []gopacket.SerializableLayer{&layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, DestQP: 17, PSN: uint32(i)}, gopacket.Payload("0123456789abcdef")}
	})
}

// writeHostPairREQs writes n CM REQs, each between a host pair of its own
// (as writeHostPairs), with LocalCommIDs 1, 2, …: n connections that
// sharding spreads over every shard.
func writeHostPairREQs(w io.Writer, n int) error {
	return writeEach(w, 1, n, ownHostPair, reqLayers)
}

// ownHostPair sets frame i's hosts to 10.a.b.c → 11.a.b.c (i = a.b.c).
func ownHostPair(i int, ip *gplayers.IPv4) {
	ip.SrcIP = []byte{10, byte(i >> 16), byte(i >> 8), byte(i)}
	ip.DstIP = []byte{11, byte(i >> 16), byte(i >> 8), byte(i)}
}

// TestWriteHostPairs writes the captures of the -j memory checks of
// docs/robustness.md (1,000,000 one-frame host pairs; with
// ROCE_DISSECT_HOST_PAIRS_KIND=reqs, CM REQs of as many host pairs) to
// the file named by ROCE_DISSECT_HOST_PAIRS, when set:
//
//	ROCE_DISSECT_HOST_PAIRS=/tmp/pairs.pcap go test ./internal/cli -run TestWriteHostPairs
//	/usr/bin/time -v roce-dissect --max-flows 100000 /tmp/pairs.pcap
func TestWriteHostPairs(t *testing.T) {
	name := os.Getenv("ROCE_DISSECT_HOST_PAIRS")
	if name == "" {
		t.Skip("ROCE_DISSECT_HOST_PAIRS not set")
	}
	n := 1_000_000
	if s := os.Getenv("ROCE_DISSECT_HOST_PAIRS_N"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	write := writeHostPairs
	if os.Getenv("ROCE_DISSECT_HOST_PAIRS_KIND") == "reqs" {
		write = writeHostPairREQs
	}
	writeCapture(t, name, func(w io.Writer) error { return write(w, n) })
}
