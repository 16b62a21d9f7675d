package cli_test

import (
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
)

// writeHostPairs writes n frames, each an RC SEND ONLY between a host pair
// of its own (10.a.b.c → 11.a.b.c): n one-frame flows that sharding
// spreads over every shard.
func writeHostPairs(w io.Writer, n int) error {
	pc, err := newTestPcap(w)
	if err != nil {
		return err
	}
	eth, ip, udp, err := testHosts()
	if err != nil {
		return err
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	for i := range n {
		ip.SrcIP = []byte{10, byte(i >> 16), byte(i >> 8), byte(i)}
		ip.DstIP = []byte{11, byte(i >> 16), byte(i >> 8), byte(i)}
		if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
			return err
		}
		bth := &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, DestQP: 17, PSN: uint32(i)}
		if err := bth.SetNetworkLayerForChecksum(ip, udp); err != nil {
			return err
		}
		if err := gopacket.SerializeLayers(buf, opts, eth, ip, udp, bth, gopacket.Payload("0123456789abcdef"), &layers.ICRC{}); err != nil {
			return err
		}
		if err := pc.write(uint32(1_700_000_000+i/1_000_000), uint32(i%1_000_000), buf.Bytes()); err != nil {
			return err
		}
	}
	return pc.flush()
}

// writeHostPairREQs writes n CM REQs, each between a host pair of its own
// (as writeHostPairs), with LocalCommIDs 1, 2, …: n connections that
// sharding spreads over every shard.
func writeHostPairREQs(w io.Writer, n int) error {
	pc, err := newTestPcap(w)
	if err != nil {
		return err
	}
	eth, ip, udp, err := testHosts()
	if err != nil {
		return err
	}
	buf := gopacket.NewSerializeBuffer()
	for i := range n {
		ip.SrcIP = []byte{10, byte(i >> 16), byte(i >> 8), byte(i)}
		ip.DstIP = []byte{11, byte(i >> 16), byte(i >> 8), byte(i)}
		if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
			return err
		}
		bth := &layers.BTH{Opcode: layers.OpcodeUDSendOnly, PKey: 0xFFFF, DestQP: 1}
		if err := bth.SetNetworkLayerForChecksum(ip, udp); err != nil {
			return err
		}
		mad := &cm.MAD{Header: cm.Header{BaseVersion: 1, MgmtClass: cm.ClassCM, ClassVersion: 2, Method: 3},
			Message: &cm.ConnectRequest{LocalCommID: uint32(i + 1), LocalQPN: uint32(i + 1), TransportServiceType: cm.TransportRC}}
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			eth, ip, udp, bth, &layers.DETH{QKey: 0x80010000, SrcQP: 1}, mad, &layers.ICRC{}); err != nil {
			return err
		}
		if err := pc.write(uint32(1_700_000_000+i/1_000_000), uint32(i%1_000_000), buf.Bytes()); err != nil {
			return err
		}
	}
	return pc.flush()
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
	f, err := os.Create(name)
	require.NoError(t, err)
	if os.Getenv("ROCE_DISSECT_HOST_PAIRS_KIND") == "reqs" {
		require.NoError(t, writeHostPairREQs(f, n))
	} else {
		require.NoError(t, writeHostPairs(f, n))
	}
	require.NoError(t, f.Close())
}
