package fuzz_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// sequence cuts a fuzz input into frames. Each frame is a control byte, a
// length byte and that many bytes (fewer at the end). The control byte's
// low 3 bits pick the link type; bit 3 moves the clock back instead of
// forward; bits 4–7 add 16 × that many bytes of zeros to the original
// length (a header-only capture).
type sequenceFrame struct {
	linkType uint8
	back     bool
	extra    int
	data     []byte
}

func cutSequence(in []byte) []sequenceFrame {
	var out []sequenceFrame
	for len(in) >= 2 {
		ctl, n := in[0], int(in[1])
		in = in[2:]
		n = min(n, len(in))
		out = append(out, sequenceFrame{linkType: ctl & 7, back: ctl&8 != 0, extra: int(ctl>>4) * 16, data: in[:n]})
		in = in[n:]
	}
	return out
}

// encodeSequence is the inverse of cutSequence for frames of up to 255
// bytes (longer ones are cut).
func encodeSequence(frames []seedFrame) []byte {
	var out []byte
	for _, f := range frames {
		d := f.data
		if len(d) > 255 {
			d = d[:255]
		}
		out = append(out, linkIndex(f.linkType), byte(len(d)))
		out = append(out, d...)
	}
	return out
}

// FuzzAnalyzerSequence feeds the analyzer a sequence of frames (link types
// mixed, the clock going back and forth, header-only frames) with small
// caps on flows and findings, in one part and in two merged parts. It
// checks what must hold whatever the input: no panic or hang; frames =
// RDMA + other + malformed; the packets of the flows plus those of
// dropped flows are the RDMA packets; the caps hold; the report encodes
// as JSON; a second Report call gives the same report; and the two parts
// merged count the same frames as the whole.
func FuzzAnalyzerSequence(f *testing.F) {
	caps := seedCaptures(f)
	for _, name := range sortedKeys(caps) {
		frames := readFrames(f, name, caps[name])
		if len(frames) > 12 {
			frames = frames[:12] // small seeds: see FuzzCapture
		}
		f.Add(uint8(len(frames)/2), encodeSequence(frames))
	}
	split, lying := lyingPastListSeed()
	f.Add(split, lying)
	f.Fuzz(func(t *testing.T, split uint8, in []byte) {
		defer watchdog(in)()
		frames := cutSequence(in)
		opts := analyze.Options{MaxFlows: 8, MaxFindings: 32, Interval: time.Microsecond}
		whole := analyze.New(opts)
		parts := [2]*analyze.Analyzer{analyze.New(opts), analyze.New(opts)}
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i, fr := range frames {
			if fr.back {
				ts = ts.Add(-time.Duration(len(fr.data)) * time.Microsecond)
			} else {
				ts = ts.Add(time.Duration(len(fr.data)) * time.Nanosecond)
			}
			ci := gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(fr.data), Length: len(fr.data) + fr.extra}
			lt := linkTypes[int(fr.linkType)%len(linkTypes)]
			whole.Feed(ci, lt, fr.data)
			part := parts[0]
			if i >= int(split) {
				part = parts[1]
			}
			part.Feed(ci, lt, fr.data)
		}
		r := whole.Report()
		c := r.Capture
		require.Equal(t, uint64(len(frames)), c.Frames)
		require.Equal(t, c.Frames, c.RoCEPackets+c.OtherPackets+c.Malformed)
		var flowPackets uint64
		for _, fl := range r.Flows {
			flowPackets += fl.Packets
		}
		require.Equal(t, c.RoCEPackets, flowPackets+c.PacketsOfDroppedFlows)
		require.LessOrEqual(t, len(r.Flows), opts.MaxFlows)
		require.LessOrEqual(t, len(r.Findings), opts.MaxFindings+len(r.Flows)*2*256, "findings beyond the cap (only the end-of-capture incomplete messages may add)")
		require.LessOrEqual(t, len(c.MalformedFrames), opts.MaxFindings)
		if c.PacketsOfDroppedFlows > 0 {
			require.Positive(t, c.FlowsDropped, "dropped packets but no dropped flow")
		}
		b1, err := json.Marshal(r)
		require.NoError(t, err)
		b2, err := json.Marshal(whole.Report())
		require.NoError(t, err)
		require.JSONEq(t, string(b1), string(b2), "a second Report")

		merged := parts[0].Report()
		require.NoError(t, merged.Merge(parts[1].Report()))
		mc := merged.Capture
		require.Equal(t, c.Frames, mc.Frames)
		require.Equal(t, c.RoCEPackets+c.Malformed, mc.RoCEPackets+mc.Malformed)
		// A frame whose length fields point past its end is judged against
		// the frames before it (a tool's systematic cut, or a lying frame:
		// docs/robustness.md): the second half, without the first, may
		// judge such a frame otherwise. Every other frame counts the same.
		lying := func(ms []analyze.Malformed) (n uint64) {
			for _, m := range ms {
				if strings.Contains(m.Reason, analyze.ErrFrameLength.Error()) {
					n++
				}
			}
			return n
		}
		// Such a frame is a tool's cut on one side and malformed on the
		// other (toolcut.Stage.Frame has no third answer), so the two move
		// together, whatever the lists show.
		require.Equal(t, c.Malformed+c.CutFrames, mc.Malformed+mc.CutFrames, "malformed + cut")
		// The lists name the lying frames only while they hold every
		// malformed frame: they stop at MaxFindings in each part (Merge
		// appends the halves' lists, up to twice that), so a lying frame
		// past the whole's cap is listed in the halves only.
		if uint64(len(c.MalformedFrames)) == c.Malformed && uint64(len(mc.MalformedFrames)) == mc.Malformed {
			require.Equal(t, c.Malformed-lying(c.MalformedFrames), mc.Malformed-lying(mc.MalformedFrames),
				"whole %v\nhalves %v", c.MalformedFrames, mc.MalformedFrames)
		}
		_, err = json.Marshal(merged)
		require.NoError(t, err)
	})
}
