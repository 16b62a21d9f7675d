package wrap

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/require"
)

// capFrame is one frame of a capture.
type capFrame struct {
	data []byte
	ci   gopacket.CaptureInfo
}

// sharedCaptures is the folder of real captures next to the repository
// (skipped when absent).
const sharedCaptures = "../../../shared/captures/softroce"

// ethernetCaptures returns the Ethernet captures of the repository's
// testdata and, when present, the shared Soft-RoCE captures.
func ethernetCaptures(tb testing.TB) []string {
	tb.Helper()
	names := []string{"write_bw_ipv4.pcap", "read_bw.pcap", "send_bw_ipv6.pcapng", "atomic_vlan.pcap",
		"rocev1.pcap", "ecn_cnp.pcap", "header_only_snap128.pcap", "mix_small.pcap"}
	var paths []string
	for _, n := range names {
		paths = append(paths, filepath.Join("..", "..", "testdata", n))
	}
	shared, _ := filepath.Glob(filepath.Join(sharedCaptures, "*.pcap"))
	return append(paths, shared...)
}

// readCapture reads a pcap or pcapng capture of Ethernet frames.
func readCapture(tb testing.TB, path string) []capFrame {
	tb.Helper()
	f, err := os.Open(path)
	require.NoError(tb, err)
	defer f.Close()
	var src interface {
		ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	}
	if strings.HasSuffix(path, ".pcapng") {
		r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
		require.NoError(tb, err)
		require.Equal(tb, gplayers.LinkTypeEthernet, r.LinkType(), path)
		src = r
	} else {
		r, err := pcapgo.NewReader(f)
		require.NoError(tb, err)
		require.Equal(tb, gplayers.LinkTypeEthernet, r.LinkType(), path)
		src = r
	}
	var out []capFrame
	for {
		data, ci, err := src.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(tb, err, path)
		out = append(out, capFrame{data: append([]byte(nil), data...), ci: ci})
	}
	require.NotEmpty(tb, out, path)
	return out
}

// unwrapOne removes the outermost encapsulation k from b: the decoder's
// side of each kind, written from the formats, not from the wrapper.
func unwrapOne(tb testing.TB, k Kind, b []byte) []byte {
	tb.Helper()
	switch k {
	case QinQ:
		require.Equal(tb, uint16(0x88A8), binary.BigEndian.Uint16(b[12:]))
		return append(append([]byte{}, b[:12]...), b[16:]...)
	case MPLS:
		at := 12
		for isTag(binary.BigEndian.Uint16(b[at:])) {
			at += 4
		}
		require.Equal(tb, uint16(0x8847), binary.BigEndian.Uint16(b[at:]))
		second := binary.BigEndian.Uint32(b[at+6:])
		rest := b[at+2+8:]
		t := uint16(0x8847)
		if second&0x100 != 0 { // bottom of stack: guess IPv4 or IPv6, as decoders do
			require.NotEmpty(tb, rest)
			switch rest[0] >> 4 {
			case 4:
				t = 0x0800
			case 6:
				t = 0x86DD
			default:
				tb.Fatalf("MPLS payload starts with 0x%02x", rest[0])
			}
		}
		out := append([]byte{}, b[:at]...)
		out = binary.BigEndian.AppendUint16(out, t)
		return append(out, rest...)
	}
	return b[k.Overhead():]
}
