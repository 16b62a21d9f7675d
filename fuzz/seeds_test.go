package fuzz_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/wrap"
	"github.com/roce-dissect/roce-dissect/layers"
)

// sharedCaptures is the folder of the real captures beside the repository.
// They are never copied into it: targets add their frames with f.Add at
// run time when the folder is present.
const sharedCaptures = "../../shared/captures"

// linkTypes are the link types the analyzer decodes; a fuzz input names
// one by its index (modulo the length).
var linkTypes = []gplayers.LinkType{
	gplayers.LinkTypeEthernet,
	layers.LinkTypeInfiniBand,
	layers.LinkTypeERF,
	gplayers.LinkTypeRaw,
	gplayers.LinkTypeIPv4,
	gplayers.LinkTypeIPv6,
	gplayers.LinkTypeLinuxSLL,
	gplayers.LinkTypeLinuxSLL2,
}

// linkIndex returns the index of lt in linkTypes (0 when absent).
func linkIndex(lt gplayers.LinkType) uint8 {
	for i, l := range linkTypes {
		if l == lt {
			return uint8(i)
		}
	}
	return 0
}

// seedFrame is one frame of a seed capture.
type seedFrame struct {
	linkType gplayers.LinkType
	data     []byte
}

// readFrames returns the frames of a seed capture. Every seed capture is
// whole, so any error but the end of the capture fails the test.
func readFrames(t testing.TB, name string, data []byte) []seedFrame {
	t.Helper()
	r, err := capture.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("seed capture %s: %v", name, err)
	}
	var out []seedFrame
	for {
		_, fr, lt, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("seed capture %s: after %d frames: %v", name, len(out), err)
		}
		out = append(out, seedFrame{lt, bytes.Clone(fr)})
	}
}

// generated returns small captures written by roce-synth: every
// encapsulation, impairments, header-only snap length, pcapng.
func generated(t testing.TB) map[string][]byte {
	t.Helper()
	one := uint32(0xFFFFF0) // PSNs wrap
	cfgs := map[string]synth.Config{
		"write-ipv4-loss": {Scenario: synth.ScenarioWriteBW, Messages: 3, MsgSize: 2048, Impairments: synth.Impairments{Drop: []synth.PSNRef{{Value: 2, Relative: true}}, NAK: []synth.PSNRef{{Value: 4, Relative: true}}}},
		"read-ipv6":       {Scenario: synth.ScenarioReadBW, Encap: synth.EncapIPv6, Messages: 2, MsgSize: 2048, Format: synth.FormatPcapNG},
		"send-vlan-ecn":   {Scenario: synth.ScenarioSendBW, Encap: synth.EncapVLAN, Messages: 2, MsgSize: 1500, Impairments: synth.Impairments{ECN: []synth.PSNRef{{Value: 1, Relative: true}}}},
		"atomic-rocev1":   {Scenario: synth.ScenarioAtomic, Encap: synth.EncapRoCEv1, Messages: 2},
		"ud-ib":           {Scenario: synth.ScenarioUD, Encap: synth.EncapIB, Messages: 3},
		"write-erf-rnr":   {Scenario: synth.ScenarioWriteBW, Encap: synth.EncapERF, Messages: 2, MsgSize: 1024, Impairments: synth.Impairments{RNR: []synth.PSNRef{{Value: 1, Relative: true}}, CorruptICRC: []synth.PSNRef{{Value: 0, Relative: true}}}},
		"write-sniffer":   {Scenario: synth.ScenarioWriteBW, Encap: synth.EncapIPv6, Messages: 2, MsgSize: 2048, SnifferSrcPort: true},
		"mix-snap":        {Scenario: synth.ScenarioMix, Packets: 40, QPs: 3, SnapLen: 80, Nanos: true},
		"wrap-dup":        {Scenario: synth.ScenarioWriteBW, Messages: 6, MsgSize: 4096, StartPSN: &one, Impairments: synth.Impairments{Dup: []synth.PSNRef{{Value: 3, Relative: true}}, Reorder: []synth.PSNRef{{Value: 6, Relative: true}}}},
	}
	// As a switch mirror delivers it (ERSPAN III around VXLAN, with a loss),
	// and among the PFC and PAUSE frames of a lossless fabric.
	mirror := synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 2, MsgSize: 2048, Impairments: synth.Impairments{Drop: []synth.PSNRef{{Value: 1, Relative: true}}, NAK: []synth.PSNRef{{Value: 1, Relative: true}}}}
	var err error
	if mirror.Wrap, err = wrap.Parse("erspan3,vxlan"); err != nil {
		t.Fatal(err)
	}
	cfgs["mirror-erspan3-vxlan"] = mirror
	paused := synth.Config{Scenario: synth.ScenarioSendBW, Encap: synth.EncapVLAN, Messages: 2, MsgSize: 1024}
	for _, ps := range []struct {
		kind synth.PauseKind
		spec string
	}{{synth.PausePFC, "3+4,episodes=2,refresh=2us"}, {synth.Pause8023x, "episodes=1,xon=no"}} {
		st, err := synth.ParsePauseSpec(ps.kind, false, ps.spec)
		if err != nil {
			t.Fatal(err)
		}
		paused.Pause.Streams = append(paused.Pause.Streams, st)
	}
	cfgs["pfc-pause-vlan"] = paused
	out := make(map[string][]byte, len(cfgs))
	for name, cfg := range cfgs {
		var b bytes.Buffer
		if _, err := synth.Generate(cfg, &b, nil); err != nil {
			t.Fatalf("synth %s: %v", name, err)
		}
		out[name] = b.Bytes()
	}
	return out
}

// repoCaptures returns the captures of testdata/ (written by roce-synth,
// committed) and of the shared folder when it is present.
func repoCaptures(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	var files []string
	for _, pat := range []string{"../testdata/*.pcap", "../testdata/*.pcapng", sharedCaptures + "/*/*.pcap"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("reading %s: %v", f, err)
		}
		out[f] = b
	}
	return out
}

// seedCaptures returns every seed capture: generated and on disk.
func seedCaptures(t testing.TB) map[string][]byte {
	out := generated(t)
	for k, v := range repoCaptures(t) {
		out[k] = v
	}
	return out
}

// seedFrames returns up to perCapture frames of each seed capture.
func seedFrames(t testing.TB, perCapture int) []seedFrame {
	var out []seedFrame
	caps := seedCaptures(t)
	for _, name := range sortedKeys(caps) {
		frames := readFrames(t, name, caps[name])
		if len(frames) > perCapture {
			// Spread the picks over the capture: CM, data, ACKs.
			step := len(frames) / perCapture
			picked := make([]seedFrame, 0, perCapture)
			for i := 0; i < len(frames) && len(picked) < perCapture; i += step {
				picked = append(picked, frames[i])
			}
			frames = picked
		}
		out = append(out, frames...)
	}
	return out
}

// slowInput is how long one fuzz input may take before the watchdog calls
// it a hang. Go's fuzzing has no per-input timeout of its own.
const slowInput = 10 * time.Second

// watchdog panics, killing the fuzz worker so that the input is kept as a
// crasher, when the input takes longer than slowInput. Call the function
// it returns when the input is done.
func watchdog(data []byte) func() {
	timer := time.AfterFunc(slowInput, func() {
		panic(fmt.Sprintf("input took more than %v (a hang): %d bytes", slowInput, len(data)))
	})
	return func() { timer.Stop() }
}

// sortedKeys returns the keys of m in order, for a stable seed corpus.
func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// pcapOf writes the first n frames as a little-endian µs pcap of the
// first frame's link type, the others' frames cut to 200 bytes.
func pcapOf(frames []seedFrame, n int) []byte {
	lt := gplayers.LinkTypeEthernet
	if len(frames) > 0 {
		lt = frames[0].linkType
	}
	b := make([]byte, 24, 2048)
	binary.LittleEndian.PutUint32(b[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(b[4:], 2)
	binary.LittleEndian.PutUint16(b[6:], 4)
	binary.LittleEndian.PutUint32(b[16:], 65535)
	binary.LittleEndian.PutUint32(b[20:], uint32(lt))
	for i, f := range frames[:min(n, len(frames))] {
		d := f.data
		if len(d) > 200 {
			d = d[:200]
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(1_700_000_000+i))
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(d)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(f.data)))
		b = append(b, d...)
	}
	return b
}
