package analyze

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// prefetchFrame is a frame read by readFrames.
type prefetchFrame struct {
	ci   gopacket.CaptureInfo
	lt   gplayers.LinkType
	data []byte
}

// readFrames reads every frame of a capture (pcap or pcapng, any link type).
func readFrames(t testing.TB, r io.Reader) []prefetchFrame {
	t.Helper()
	cr, err := capture.NewReader(r)
	require.NoError(t, err)
	var frames []prefetchFrame
	for {
		ci, data, lt, err := cr.Next()
		if err == io.EOF {
			return frames
		}
		require.NoError(t, err)
		frames = append(frames, prefetchFrame{ci, lt, bytes.Clone(data)})
	}
}

// checkPeekKey feeds f to a and checks peekKey against the decoder: when
// both give the frame a key, they give the same. It returns the packet,
// and whether peekKey gave a key.
func checkPeekKey(t *testing.T, a *Analyzer, f prefetchFrame, name string) (*Packet, bool) {
	p := a.Feed(f.ci, f.lt, f.data)
	k, ok := a.peekKey(f.lt, f.data)
	if ok && p.IsRDMA && p.Err == nil && p.BTH != nil {
		require.Equal(t, flowKey{src: p.Src, dst: p.Dst, qp: p.BTH.DestQP}, k, "%s frame %d", name, p.Frame)
	}
	return p, ok
}

// TestPeekKey checks peekKey against the decoder (Feed) on every frame of
// the captures in testdata, and of the shared real captures when they are
// here: the same key whenever both read one; a key for every plain RoCE
// v2 packet (IPv4 and IPv6, VLAN tags), and for no frame but RoCE v2 over
// Ethernet (none for RoCE v1, InfiniBand, ERF, or a packet a mirror or
// tunnel carried).
func TestPeekKey(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.pcap*")
	require.NoError(t, err)
	shared, _ := filepath.Glob("../../shared/captures/*/*.pcap")
	plain := 0
	for _, file := range append(files, shared...) {
		if filepath.Ext(file) == ".json" {
			continue
		}
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		a := New(Options{})
		for _, f := range readFrames(t, bytes.NewReader(raw)) {
			p, ok := checkPeekKey(t, a, f, file)
			roce2 := f.lt == gplayers.LinkTypeEthernet && p.Encap == EncapRoCEv2 && len(p.Wraps) == 0
			if roce2 && p.Err == nil && p.BTH != nil {
				require.True(t, ok, "%s frame %d: a plain RoCE v2 packet has a key", file, p.Frame)
				plain++
			}
			if ok {
				require.True(t, roce2, "%s frame %d: a key for RoCE v2 over Ethernet only", file, p.Frame)
			}
		}
	}
	require.Positive(t, plain)
}

// FuzzPeekKey: for any frame, peekKey stays within it, and its key is
// the decoder's whenever both read one.
func FuzzPeekKey(f *testing.F) {
	for _, file := range []string{"../testdata/write_bw_ipv4.pcap", "../testdata/atomic_vlan.pcap", "../testdata/send_bw_ipv6.pcapng", "../testdata/erspan3_vxlan.pcap"} {
		raw, err := os.ReadFile(file)
		require.NoError(f, err)
		for _, fr := range readFrames(f, bytes.NewReader(raw))[:4] {
			f.Add(fr.data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a := New(Options{RoCEPorts: []uint16{4792}})
		checkPeekKey(t, a, prefetchFrame{gopacket.CaptureInfo{CaptureLength: len(data), Length: len(data)}, gplayers.LinkTypeEthernet, data}, "fuzz")
	})
}

// manyFlows returns the frames of a roce-synth mix of n QPs, 15 packets
// each: about 2.5 n flows (CM's and data's, both directions).
func manyFlows(t *testing.T, n int) []prefetchFrame {
	var buf bytes.Buffer
	_, err := synth.Generate(synth.Config{Scenario: synth.ScenarioMix, Packets: 15 * n, QPs: n}, &buf, nil)
	require.NoError(t, err)
	return readFrames(t, &buf)
}

// TestAheadFlows feeds a capture of many flows and then asks aheadFlows
// for the flows of every group of frames: they are, in order, those the
// frames' decoded keys name (flowOf), one for each frame of a plain RoCE
// v2 packet whose flow exists.
func TestAheadFlows(t *testing.T) {
	frames := manyFlows(t, 2000)
	a := New(Options{})
	for _, f := range frames {
		a.Feed(f.ci, f.lt, f.data)
	}
	found := 0
	for start := 0; start < len(frames); start += prefetchMax {
		group := frames[start:min(start+prefetchMax, len(frames))]
		var data [][]byte
		var want []*flowState
		for _, f := range group {
			data = append(data, f.data)
			b := New(Options{})
			p := b.Feed(f.ci, f.lt, f.data)
			if p.BTH == nil || p.Err != nil {
				continue
			}
			if i, ok := a.flowOf(flowKey{src: p.Src, dst: p.Dst, qp: p.BTH.DestQP}); ok {
				want = append(want, a.flowList[i])
			}
		}
		var fs [prefetchMax]*flowState
		got := a.aheadFlows(gplayers.LinkTypeEthernet, data, &fs)
		require.Equal(t, want, got, "frames %d to %d", start+1, start+len(group))
		found += len(got)
	}
	assert.Greater(t, found, len(frames)*9/10, "the flows of most frames are found")
}

// TestPrefetchChangesNothing analyzes a capture of many flows with
// Prefetch before every 16 frames (the frames ahead, as the command
// gives them) and without: the reports are the same.
func TestPrefetchChangesNothing(t *testing.T) {
	frames := manyFlows(t, 4000)
	with, without := New(Options{}), New(Options{})
	for i, f := range frames {
		if i%prefetchMax == 0 {
			var ahead [][]byte
			for _, g := range frames[i:min(i+prefetchMax, len(frames))] {
				ahead = append(ahead, g.data)
			}
			with.Prefetch(f.lt, ahead)
		}
		with.Feed(f.ci, f.lt, f.data)
		without.Feed(f.ci, f.lt, f.data)
	}
	require.Greater(t, len(with.flowList), 2*prefetchFlows, "Prefetch reads ahead for half the frames or more")
	require.NotZero(t, with.prefetched, "Prefetch read the flows")
	require.Equal(t, without.Finish(), with.Finish())
}

// TestPrefetchRests: a Prefetch whose frames are of flows not yet made
// (their QPs changed) has the next 15 Prefetches say no, and then one
// looks again; one whose frames' flows exist does not.
func TestPrefetchRests(t *testing.T) {
	frames := manyFlows(t, 2000)
	a := New(Options{})
	for _, f := range frames {
		a.Feed(f.ci, f.lt, f.data)
	}
	var known, unknown [][]byte
	for _, f := range frames[len(frames)-prefetchMax:] {
		known = append(known, f.data)
		d := bytes.Clone(f.data)
		_, ok := a.peekKey(f.lt, d)
		require.True(t, ok)
		d[14+20+8+5] ^= 0x80 // the BTH's destination QP, behind Ethernet, IPv4 and UDP
		k, ok := a.peekKey(f.lt, d)
		require.True(t, ok)
		_, exists := a.flowOf(k)
		require.False(t, exists)
		unknown = append(unknown, d)
	}
	require.True(t, a.Prefetches())
	a.Prefetch(gplayers.LinkTypeEthernet, known)
	require.True(t, a.Prefetches(), "the flows were found")
	a.Prefetch(gplayers.LinkTypeEthernet, unknown)
	for i := range prefetchMax - 1 {
		require.False(t, a.Prefetches(), "call %d after", i+1)
	}
	require.True(t, a.Prefetches(), "the 16th looks again")
}
