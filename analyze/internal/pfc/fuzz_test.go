package pfc_test

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze/internal/pfc"
	"github.com/roce-dissect/roce-dissect/layers"
)

// event is one MAC Control frame of a fuzzed sequence.
type event struct {
	frame uint64
	at    time.Time
	src   net.HardwareAddr
	mc    layers.MACControl
}

// fuzzEvents reads 8 bytes an event: the sender (4 of them) and the
// opcode (PFC, PAUSE or another), the class-enable vector, the quanta
// (0: XON), and a time step of ±2^31 ns, so that the clock may go back.
func fuzzEvents(data []byte) []event {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var out []event
	for i := 0; i+8 <= len(data); i += 8 {
		b := data[i : i+8]
		t = t.Add(time.Duration(int32(binary.BigEndian.Uint32(b[4:]))))
		e := event{frame: uint64(len(out) + 1), at: t, src: net.HardwareAddr{2, 0, 0, 0, 0, b[0] & 3}}
		q := binary.BigEndian.Uint16(b[2:])
		switch b[0] >> 2 & 3 {
		case 0, 1:
			e.mc = layers.MACControl{Opcode: layers.MACControlOpcodePFC, ClassEnableVector: uint16(b[1])}
			for p := range 8 {
				e.mc.PauseTimes[p] = q >> (p & 3) // the priorities of a frame pause for different times
			}
		case 2:
			e.mc = layers.MACControl{Opcode: layers.MACControlOpcodePause, PauseTime: q}
		default:
			e.mc = layers.MACControl{Opcode: 0x0002} // GATE: no pause
		}
		out = append(out, e)
	}
	return out
}

// feed feeds evs to a new track and returns its snapshot.
func feed(c pfc.Config, evs []event) *pfc.Track {
	t := pfc.New(c)
	for _, e := range evs {
		t.Frame(e.frame, e.at, e.src, &e.mc)
	}
	return t.Snapshot()
}

// split returns the events of the senders odd says and the others'.
func split(evs []event, odd bool) []event {
	var out []event
	for _, e := range evs {
		if e.src[5]&1 == 1 == odd {
			out = append(out, e)
		}
	}
	return out
}

// quiet is an event from which on every time is beyond every time
// before it and the longest pause at the link speed, so that every pause
// asked before it has ended: the parts before and after it combine
// exactly. It is 0 when there is none.
func quiet(evs []event, c pfc.Config) int {
	longest := layers.PauseDuration(0xFFFF, c.LinkSpeed) + time.Nanosecond
	for k := 1; k < len(evs); k++ {
		before, after := evs[0].at, evs[k].at
		for _, e := range evs[:k] {
			if e.at.After(before) {
				before = e.at
			}
		}
		for _, e := range evs[k:] {
			if e.at.Before(after) {
				after = e.at
			}
		}
		if after.Sub(before) > longest {
			return k
		}
	}
	return 0
}

// FuzzTrack feeds arbitrary MAC Control frames at arbitrary times (the
// clock going back too) to the stage: it never panics, no paused time is
// negative, the timeline lies within the capture's frames and their
// deadlines and its figures add up over a range's halves, and two parts
// fed to two tracks and combined (Add, in either order) give the
// figures, storms and timeline of one track fed them all: the frames of
// some senders and the others', and the frames before a quiet time (when
// every pause asked has ended) and after it.
func FuzzTrack(f *testing.F) {
	step := func(b0, cev byte, q uint16, dt int32) []byte {
		b := []byte{b0, cev, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint16(b[2:], q)
		binary.BigEndian.PutUint32(b[4:], uint32(dt))
		return b
	}
	join := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	f.Add(uint8(2), uint8(1), join(step(0, 8, 0xFFFF, 0), step(0, 8, 0xFFFF, 100_000), step(0, 8, 0, 150_000)))
	f.Add(uint8(0), uint8(0), join(step(8, 0, 1000, 0), step(1, 0xFF, 200, 10), step(8, 0, 0, -5_000), step(9, 0, 50, 1)))
	f.Add(uint8(3), uint8(255), join(step(12, 0, 9, 0), step(1, 0x81, 0xFFFF, 1<<30), step(5, 0x81, 7, -1<<31)))
	f.Fuzz(func(t *testing.T, speed, storm uint8, data []byte) {
		c := pfc.Config{LinkSpeed: []float64{10e9, 25e9, 100e9, 400e9}[speed&3], Storm: time.Duration(storm) * time.Microsecond}
		evs := fuzzEvents(data)
		whole := feed(c, evs)
		if whole == nil {
			return
		}
		lo, hi := evs[0].at.UnixNano(), evs[0].at.UnixNano()
		for _, e := range evs {
			lo, hi = min(lo, e.at.UnixNano()), max(hi, e.at.UnixNano())
		}
		hi += int64(layers.PauseDuration(0xFFFF, c.LinkSpeed)) + 1 // the last deadline
		for _, p := range whole.Stats() {
			require.GreaterOrEqual(t, p.PausedNs, int64(0))
			require.GreaterOrEqual(t, p.LongestPauseNs, int64(0))
			require.LessOrEqual(t, p.LongestPauseNs, p.PausedNs)
			require.Equal(t, p.Frames, p.XOFFFrames+p.XONFrames)
		}
		tl := whole.Timeline()
		for p := range 8 {
			n := tl.Overlap(p, lo, hi)
			require.GreaterOrEqual(t, n, int64(0))
			require.LessOrEqual(t, n, hi-lo)
			mid := lo + (hi-lo)/2
			a, b := tl.Overlap(p, lo, mid), tl.Overlap(p, mid, hi)
			require.GreaterOrEqual(t, a, int64(0))
			require.GreaterOrEqual(t, b, int64(0))
			require.Equal(t, n, a+b, "priority %d: the halves of a range add up", p)
		}

		parts := [][2][]event{{split(evs, true), split(evs, false)}}
		if k := quiet(evs, c); k > 0 {
			parts = append(parts, [2][]event{evs[:k], evs[k:]})
		}
		for _, part := range parts {
			for _, order := range [][2]int{{0, 1}, {1, 0}} {
				sum := pfc.New(c)
				for _, i := range order {
					if s := feed(c, part[i]); s != nil {
						sum.Add(s)
					}
				}
				assert.Equal(t, whole.Stats(), sum.Stats())
				assert.Equal(t, whole.Storms(), sum.Storms())
				assert.Equal(t, whole.Unlisted(), sum.Unlisted())
				stl := sum.Timeline()
				for p := range 8 {
					assert.Equal(t, tl.Overlap(p, lo, hi), stl.Overlap(p, lo, hi), "priority %d", p)
				}
			}
		}
	})
}
