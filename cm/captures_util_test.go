package cm

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/require"
)

// capturesDir is the shared capture folder, next to the repository.
const capturesDir = "../../shared/captures"

// capturePath returns the path of a shared capture, skipping the test when
// the folder is absent.
func capturePath(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(capturesDir, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("capture %s not available: %v", p, err)
	}
	return p
}

// capturedMAD is a MAD found in a capture by the minimal frame parser
// below, with its 1-based frame number.
type capturedMAD struct {
	frame int
	mad   []byte
}

// readFrames returns the frames of a pcap file and its link type.
func readFrames(t testing.TB, path string) ([][]byte, int) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	require.NoError(t, err)
	var frames [][]byte
	for {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		frames = append(frames, data)
	}
	return frames, int(r.LinkType())
}

// madOffset finds the MAD in a frame by parsing it minimally, independent
// of package layers: RoCE v2 over IPv4 on Ethernet, or native InfiniBand in
// ERF (LINKTYPE 197). It returns the offset of the MAD and whether the
// frame is a UD SEND_ONLY to or from QP0/QP1.
func madOffset(frame []byte, linkType int) (int, bool) {
	var bth int
	switch linkType {
	case 1: // Ethernet
		if len(frame) < 14+20 || binary.BigEndian.Uint16(frame[12:14]) != 0x0800 {
			return 0, false
		}
		ip := 14
		ihl := int(frame[ip]&0x0F) * 4
		udp := ip + ihl
		if frame[ip+9] != 17 || len(frame) < udp+8 || binary.BigEndian.Uint16(frame[udp+2:udp+4]) != 4791 {
			return 0, false
		}
		bth = udp + 8
	case 197: // ERF
		if len(frame) < 16 {
			return 0, false
		}
		off := 16
		if frame[8]&0x80 != 0 { // extension headers follow
			for {
				if len(frame) < off+8 {
					return 0, false
				}
				more := frame[off]&0x80 != 0
				off += 8
				if !more {
					break
				}
			}
		}
		if len(frame) < off+8 {
			return 0, false
		}
		lnh := frame[off+1] & 0x3
		bth = off + 8
		switch lnh {
		case 2:
		case 3:
			bth += 40
		default:
			return 0, false
		}
	default:
		return 0, false
	}
	if len(frame) < bth+12+8 || frame[bth] != 0x64 { // UD SEND_ONLY
		return 0, false
	}
	destQP := uint32(frame[bth+5])<<16 | uint32(frame[bth+6])<<8 | uint32(frame[bth+7])
	deth := bth + 12
	srcQP := uint32(frame[deth+5])<<16 | uint32(frame[deth+6])<<8 | uint32(frame[deth+7])
	if destQP > 1 && srcQP > 1 {
		return 0, false
	}
	return deth + 8, true
}

// capturedMADs returns every MAD of a shared capture (skipping the test
// when the capture is absent).
func capturedMADs(t testing.TB, name string) []capturedMAD {
	t.Helper()
	frames, lt := readFrames(t, capturePath(t, name))
	var mads []capturedMAD
	for i, fr := range frames {
		off, ok := madOffset(fr, lt)
		if !ok {
			continue
		}
		require.GreaterOrEqual(t, len(fr), off+MADLen, "frame %d of %s", i+1, name)
		mads = append(mads, capturedMAD{frame: i + 1, mad: fr[off : off+MADLen]})
	}
	require.NotEmpty(t, mads, "no MAD found in %s", name)
	return mads
}
