package decode_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
	"github.com/roce-dissect/roce-dissect/layers"
)

// capture is a pcap file's frames and link type.
type capture struct {
	frames [][]byte
	cis    []gopacket.CaptureInfo
	lt     gplayers.LinkType
}

// readPcap reads a pcap file.
func readPcap(t testing.TB, path string) capture {
	fh, err := os.Open(path)
	require.NoError(t, err)
	defer fh.Close()
	r, err := pcapgo.NewReader(fh)
	require.NoError(t, err)
	c := capture{lt: r.LinkType()}
	for {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			return c
		}
		require.NoError(t, err)
		c.frames, c.cis = append(c.frames, data), append(c.cis, ci)
	}
}

// tunnelName names a tunnel by its kind, outer addresses and identifier
// ("-" for none).
func tunnelName(kind, src, dst string, id *uint32) string {
	if id == nil {
		return fmt.Sprintf("%s %s %s -", kind, src, dst)
	}
	return fmt.Sprintf("%s %s %s %d", kind, src, dst, *id)
}

// TestDecodeTruth decodes every frame of the captures roce-synth wrote
// into testdata and compares with the generator's truth: the RDMA packets
// decoded whole (RDMA, no error), the malformed ones, and the frames of
// each chain of encapsulations and of each tunnel. The frame a tunnel
// carried (an Ethernet frame, whole in these captures) is as long as its
// Ethernet header and the IP packet inside declares.
func TestDecodeTruth(t *testing.T) {
	files, err := filepath.Glob("../../../testdata/*.pcap")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file + ".truth.json")
			if os.IsNotExist(err) {
				t.Skip("no truth")
			}
			require.NoError(t, err)
			var truth struct {
				Frames        int `json:"frames"`
				RoCEPackets   int `json:"roce_packets"`
				Malformed     int `json:"malformed"`
				Encapsulation struct {
					Chains  map[string]int `json:"chains"`
					Tunnels []struct {
						Kind, Src, Dst string
						ID             *uint32
						Frames         int
					} `json:"tunnels"`
				} `json:"encapsulation"`
			}
			require.NoError(t, json.Unmarshal(b, &truth))
			c := readPcap(t, file)
			d := decode.New(decode.Options{})
			rdma, malformed := 0, 0
			chains := map[string]int{}
			tunnels := map[string]int{}
			for i, fr := range c.frames {
				p := d.Decode(uint64(i+1), c.cis[i], c.lt, fr)
				switch {
				case p.IsRDMA && p.Err == nil:
					rdma++
				case p.IsRDMA:
					malformed++
				}
				if len(p.Wraps) == 0 {
					continue
				}
				chains[decode.ChainName(p.Wraps)]++
				for _, w := range p.Wraps {
					var id *uint32
					if w.Kind.IDName() != "" {
						id = &w.ID
					}
					tunnels[tunnelName(w.Kind.String(), w.Src.String(), w.Dst.String(), id)]++
				}
				if p.IsRDMA && p.Err == nil && p.CapLength == p.Length && p.VLAN < 0 {
					assert.Equal(t, 14+d.Headers().Lens.Packet(), p.CarriedLength, "frame %d", i+1)
				}
			}
			assert.Equal(t, truth.Frames, len(c.frames))
			assert.Equal(t, truth.RoCEPackets, rdma, "RDMA packets")
			assert.Equal(t, truth.Malformed, malformed, "malformed")
			if len(truth.Encapsulation.Chains) > 0 || len(chains) > 0 {
				assert.Equal(t, truth.Encapsulation.Chains, chains)
				want := map[string]int{}
				for _, tu := range truth.Encapsulation.Tunnels {
					want[tunnelName(tu.Kind, tu.Src, tu.Dst, tu.ID)] = tu.Frames
				}
				assert.Equal(t, want, tunnels)
			}
		})
	}
}

// TestDecodeAllocs: decoding a frame allocates nothing, whatever its
// headers (RoCE v2, a mirror's ERSPAN and VXLAN, native IB, pause frames).
func TestDecodeAllocs(t *testing.T) {
	for _, file := range []string{"write_bw_ipv4.pcap", "erspan3_vxlan.pcap", "ib.pcap", "erf.pcap", "pfc_storm.pcap", "short_mad.pcap"} {
		t.Run(file, func(t *testing.T) {
			c := readPcap(t, filepath.Join("../../../testdata", file))
			d := decode.New(decode.Options{})
			i := 0
			allocs := testing.AllocsPerRun(100, func() {
				d.Decode(uint64(i+1), c.cis[i%len(c.frames)], c.lt, c.frames[i%len(c.frames)])
				i++
			})
			assert.Zero(t, allocs)
		})
	}
}

// fuzzLinkTypes are the link types FuzzDecode decodes its input as: every
// one a Decoder decodes, and one it does not.
var fuzzLinkTypes = []gplayers.LinkType{
	gplayers.LinkTypeEthernet, layers.LinkTypeInfiniBand, layers.LinkTypeERF, gplayers.LinkTypeLinuxSLL,
	gplayers.LinkTypeLinuxSLL2, gplayers.LinkTypeRaw, gplayers.LinkTypeIPv4, gplayers.LinkTypeIPv6, gplayers.LinkTypeNull,
}

// FuzzDecode decodes arbitrary bytes as a frame of each link type, with an
// original length up to 64 KiB longer than captured (or beyond
// MaxOriginalLength): it must not panic, and the Packet's lengths must
// agree with the frame's.
func FuzzDecode(f *testing.F) {
	for _, file := range []string{"write_bw_ipv4.pcap", "erspan3_vxlan.pcap", "ib.pcap", "erf.pcap", "pfc_storm.pcap", "short_mad.pcap", "rocev1.pcap", "atomic_vlan.pcap"} {
		c := readPcap(f, filepath.Join("../../../testdata", file))
		i := slices.Index(fuzzLinkTypes, c.lt)
		require.GreaterOrEqual(f, i, 0, "%s: link type %s", file, c.lt)
		for _, fr := range c.frames[:min(4, len(c.frames))] {
			f.Add(uint8(i), fr, uint32(0))
		}
	}
	f.Add(uint8(0), writeOnly(), uint32(1<<20))
	f.Fuzz(func(t *testing.T, lt uint8, data []byte, extra uint32) {
		d := decode.New(decode.Options{RoCEPorts: []uint16{4792}})
		linkType := fuzzLinkTypes[int(lt)%len(fuzzLinkTypes)]
		orig := len(data) + int(extra)
		p := d.Decode(7, gopacket.CaptureInfo{CaptureLength: len(data), Length: orig}, linkType, data)
		h := d.Headers()
		require.Equal(t, uint64(7), p.Frame)
		require.Equal(t, len(data), p.CapLength)
		if orig > decode.MaxOriginalLength {
			require.Equal(t, len(data), p.Length, "an original length past the maximum is the captured one")
		} else {
			require.Equal(t, orig, p.Length)
		}
		require.Equal(t, orig, h.OrigLength)
		require.LessOrEqual(t, p.CarriedLength, p.Length, "a carried frame is inside its frame")
		require.GreaterOrEqual(t, p.CarriedLength, p.Length-len(data), "a carried frame starts inside what was captured")
		require.LessOrEqual(t, len(p.Wraps), decode.MaxWraps)
		require.LessOrEqual(t, len(p.Payload), len(data))
		require.LessOrEqual(t, len(p.MAD), len(data))
		require.GreaterOrEqual(t, h.Lens.Declared(), 0)
		if p.Err != nil || p.BTH != nil {
			require.True(t, p.IsRDMA, "only an RDMA packet has an error or a BTH")
		}
	})
}
