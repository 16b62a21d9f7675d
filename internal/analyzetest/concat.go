package analyzetest

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// Concat returns the frames of testdata's captures names (RoCE v2 over
// Ethernet and IPv4, in dir) one after another, each file shifted to 1 ms
// after the one before and between hosts of its own (10.1xx.0.x for the
// file's place xx, with the ICRCs that were good made good again), and the
// CM MADs of all but the first file left out (the files' CommIDs are the
// same): one capture of several flows, each with what its file shows.
func Concat(tb testing.TB, dir string, names ...string) ([][]byte, []gopacket.CaptureInfo) {
	tb.Helper()
	var (
		frames [][]byte
		cis    []gopacket.CaptureInfo
		last   time.Time
	)
	for i, name := range names {
		check := analyze.New(analyze.Options{})
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			tb.Fatal(err)
		}
		r, err := pcapgo.NewReader(f)
		if err != nil {
			tb.Fatal(err)
		}
		if r.LinkType() != gplayers.LinkTypeEthernet {
			tb.Fatalf("%s: link type %v, want Ethernet", name, r.LinkType())
		}
		var shift time.Duration
		for first := true; ; first = false {
			data, ci, err := r.ReadPacketData()
			if err != nil {
				break
			}
			if first {
				shift = last.Sub(ci.Timestamp) + time.Millisecond
			}
			ci.Timestamp = ci.Timestamp.Add(shift)
			last = ci.Timestamp
			pkt := check.Feed(ci, gplayers.LinkTypeEthernet, data)
			if i > 0 && pkt.BTH != nil && pkt.BTH.DestQP == 1 {
				continue
			}
			if binary.BigEndian.Uint16(data[12:14]) != uint16(gplayers.EthernetTypeIPv4) {
				tb.Fatalf("%s: a frame that is not IPv4", name)
			}
			good := pkt.ICRC.Status == layers.ICRCOK
			data[14+12+1], data[14+16+1] = byte(100+i), byte(100+i)
			if p := analyze.New(analyze.Options{}).Feed(ci, gplayers.LinkTypeEthernet, data); good && p.ICRC.Status == layers.ICRCBad {
				end := 14 + int(binary.BigEndian.Uint16(data[16:18]))
				binary.LittleEndian.PutUint32(data[end-4:end], p.ICRC.Expected)
			}
			frames, cis = append(frames, data), append(cis, ci)
		}
		if err := f.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	return frames, cis
}
