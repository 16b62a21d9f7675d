package cli_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/layers"
)

// testPcap writes a µs pcap of Ethernet frames record by record, for the
// tests that build large captures without the generator.
type testPcap struct {
	bw  *bufio.Writer
	rec [16]byte
}

// newTestPcap writes the pcap file header.
func newTestPcap(w io.Writer) (*testPcap, error) {
	p := &testPcap{bw: bufio.NewWriterSize(w, 1<<20)}
	var hdr [24]byte
	binary.LittleEndian.PutUint32(hdr[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint16(hdr[6:], 4)
	binary.LittleEndian.PutUint32(hdr[16:], 65535)
	binary.LittleEndian.PutUint32(hdr[20:], uint32(gplayers.LinkTypeEthernet))
	_, err := p.bw.Write(hdr[:])
	return p, err
}

// write writes one whole frame at sec.usec.
func (p *testPcap) write(sec, usec uint32, frame []byte) error {
	binary.LittleEndian.PutUint32(p.rec[0:], sec)
	binary.LittleEndian.PutUint32(p.rec[4:], usec)
	binary.LittleEndian.PutUint32(p.rec[8:], uint32(len(frame)))
	binary.LittleEndian.PutUint32(p.rec[12:], uint32(len(frame)))
	if _, err := p.bw.Write(p.rec[:]); err != nil {
		return err
	}
	_, err := p.bw.Write(frame)
	return err
}

// flush writes what is buffered.
func (p *testPcap) flush() error { return p.bw.Flush() }

// writeEach writes a pcap of frames first, first+1, …, first+n-1: frame
// i is RoCE v2 between testHosts' hosts (or those hosts sets on ip), its
// IB headers and payload from ib(i) (a BTH first; the ICRC is added),
// captured at 1,700,000,000 s + i µs.
func writeEach(w io.Writer, first, n int, hosts func(i int, ip *gplayers.IPv4), ib func(i int) []gopacket.SerializableLayer) error {
	pc, eth, ip, udp, err := newTestFrames(w)
	if err != nil {
		return err
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	for i := first; i < first+n; i++ {
		if hosts != nil {
			hosts(i, ip)
			if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
				return err
			}
		}
		ls := ib(i)
		if err := ls[0].(*layers.BTH).SetNetworkLayerForChecksum(ip, udp); err != nil {
			return err
		}
		if err := gopacket.SerializeLayers(buf, opts, append(append([]gopacket.SerializableLayer{eth, ip, udp}, ls...), &layers.ICRC{})...); err != nil {
			return err
		}
		if err := pc.write(uint32(1_700_000_000+i/1_000_000), uint32(i%1_000_000), buf.Bytes()); err != nil {
			return err
		}
	}
	return pc.flush()
}

// newTestFrames writes the pcap file header (newTestPcap) and returns
// the writer with testHosts' headers.
func newTestFrames(w io.Writer) (*testPcap, *gplayers.Ethernet, *gplayers.IPv4, *gplayers.UDP, error) {
	pc, err := newTestPcap(w)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	eth, ip, udp, err := testHosts()
	return pc, eth, ip, udp, err
}

// testHosts returns the Ethernet, IPv4 and UDP headers of RoCE v2 from
// 10.0.0.1 to 10.0.0.2, the UDP checksum computed over the IPv4 header.
func testHosts() (*gplayers.Ethernet, *gplayers.IPv4, *gplayers.UDP, error) {
	eth := &gplayers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4}
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2}}
	udp := &gplayers.UDP{SrcPort: 49152, DstPort: layers.UDPPortRoCEv2}
	return eth, ip, udp, udp.SetNetworkLayerForChecksum(ip)
}

// writeFiles writes n captures named fmt.Sprintf(pattern, i) in dir, file
// i by write(w, i), and returns their paths.
func writeFiles(t *testing.T, dir, pattern string, n int, write func(w io.Writer, i int) error) []string {
	t.Helper()
	var files []string
	for i := range n {
		files = append(files, writeCapture(t, filepath.Join(dir, fmt.Sprintf(pattern, i)), func(w io.Writer) error { return write(w, i) }))
	}
	return files
}
