package analyze_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// FuzzAnalyzer feeds a sequence of frames, cut from the input, to the
// analyzer under every link type it decodes: it must never panic, and the
// report's counts must reconcile.
func FuzzAnalyzer(f *testing.F) {
	f.Add(uint8(0), writeOnly(5, []byte("hello")))
	f.Add(uint8(0), append(writeOnly(5, make([]byte, 100)), writeOnly(9, make([]byte, 3))...))
	f.Add(uint8(1), []byte{0xF0, 0x02, 0xFF, 0xFF, 0x00, 0x48, 0xFF, 0xFF, 0x64})
	f.Add(uint8(2), []byte{0, 0, 0, 0, 0, 0, 0, 0, 21, 0, 0, 40, 0, 0, 0, 24})
	// Frames as a switch mirror delivers them and pause frames (testdata).
	for _, file := range []string{"../testdata/erspan3_vxlan.pcap", "../testdata/pfc_storm.pcap"} {
		frames, _, _, err := loadFrames(file)
		require.NoError(f, err)
		for _, fr := range frames[:6] {
			f.Add(uint8(0), fr)
		}
	}
	// Frames of the shared captures, when present (never copied into the repo).
	for _, dir := range []string{"../../shared/captures/vectors", "../../shared/captures/softroce"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.pcap"))
		for _, file := range files {
			frames, _, _, _ := loadFrames(file)
			for i, fr := range frames {
				if i < 8 {
					f.Add(uint8(0), fr)
				}
			}
		}
	}
	linkTypes := []gplayers.LinkType{gplayers.LinkTypeEthernet, layers.LinkTypeInfiniBand, layers.LinkTypeERF, gplayers.LinkTypeRaw}
	f.Fuzz(func(t *testing.T, lt uint8, data []byte) {
		a := analyze.New(analyze.Options{MaxFlows: 16, MaxFindings: 64})
		linkType := linkTypes[int(lt)%len(linkTypes)]
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		// The input is one frame, then the same bytes cut into 64-byte
		// frames, so that flows see sequences.
		frames := [][]byte{data}
		for len(data) > 64 {
			frames = append(frames, data[:64])
			data = data[64:]
		}
		for i, fr := range frames {
			ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i)), CaptureLength: len(fr), Length: len(fr) + i%3}
			a.Feed(ci, linkType, fr)
		}
		r := a.Report()
		c := r.Capture
		require.Equal(t, c.Frames, c.RoCEPackets+c.OtherPackets+c.Malformed)
		require.Equal(t, uint64(len(frames)), c.Frames)
	})
}
