package analyze_test

import (
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// Offsets in roceFrame's frames (Ethernet, IPv4 without options, UDP).
const (
	ipLenOffset  = 14 + 2
	udpLenOffset = 14 + 20 + 4
)

// lie returns a copy of frame whose IPv4 total length and UDP length
// declare an IP packet of ipLen bytes (0: unchanged) and a UDP length of
// udpLen (0: unchanged).
func lie(frame []byte, ipLen, udpLen int) []byte {
	out := append([]byte(nil), frame...)
	if ipLen > 0 {
		binary.BigEndian.PutUint16(out[ipLenOffset:], uint16(ipLen))
	}
	if udpLen > 0 {
		binary.BigEndian.PutUint16(out[udpLenOffset:], uint16(udpLen))
	}
	return out
}

// erfRecord wraps an Ethernet frame in an ERF record (type 2, 2-byte pad)
// whose record and wire lengths say rlen and wlen (0: the true ones).
func erfRecord(frame []byte, rlen, wlen int) []byte {
	rec := make([]byte, 18, 18+len(frame))
	rec[8] = layers.ERFTypeEthernet
	if rlen == 0 {
		rlen = 18 + len(frame)
	}
	if wlen == 0 {
		wlen = len(frame)
	}
	binary.BigEndian.PutUint16(rec[10:], uint16(rlen))
	binary.BigEndian.PutUint16(rec[14:], uint16(wlen))
	return append(rec, frame...)
}

type fed struct {
	lt   gplayers.LinkType
	data []byte
}

// TestLyingLengths: a length field that points past a frame recorded whole
// (original length = captured length) makes it malformed, never payload
// or throughput, unless the capture shows the pattern of a tool that cut
// its frames (one captured length, no RDMA frame captured longer). A
// 74-byte frame whose UDP length said 65535 was "655.1 kB payload,
// 582 Gb/s" with no finding.
func TestLyingLengths(t *testing.T) {
	send := func(psn uint32, n int) []byte {
		return roceFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, DestQP: 0x11, PSN: psn}, gopacket.Payload(make([]byte, n)))
	}
	small := send(9, 16) // 74 bytes
	require.Len(t, small, 74)
	eth := func(fr ...[]byte) []fed {
		var out []fed
		for _, f := range fr {
			out = append(out, fed{gplayers.LinkTypeEthernet, f})
		}
		return out
	}
	normal := eth(send(1, 1024), send(2, 1024), send(3, 1024))
	tests := []struct {
		name      string
		frames    []fed
		malformed uint64
		cut       uint64
		cutSev    string // severity of the tool_cut_frames finding, "" when none
	}{
		{"IP and UDP lengths 65535 on 74 bytes", slices.Concat(normal, eth(lie(small, 65535, 65515))), 1, 0, ""},
		{"IP and UDP lengths 65535 as the first frame", eth(lie(small, 65535, 65515)), 1, 0, ""},
		{"UDP length past the IP payload", slices.Concat(normal, eth(lie(small, 0, 65535))), 1, 0, ""},
		{"IP length 1,000 on 74 bytes after longer frames", slices.Concat(normal, eth(lie(small, 1000, 980))), 1, 0, ""},
		{"tool cut: every long frame at 243", eth(send(1, 1024)[:243], send(2, 100), send(3, 1024)[:243], send(4, 8)), 0, 2, analyze.SeverityInfo},
		{"a second captured length is malformed", eth(send(1, 1024)[:243], send(2, 1024)[:200], send(3, 1024)[:243]), 1, 2, analyze.SeverityInfo},
		{"a frame longer than the cut length breaks the pattern", eth(lie(small, 1000, 980), send(2, 1024), lie(small, 1000, 980)), 1, 1, analyze.SeverityWarning},
		{"ERF record honest", []fed{{layers.LinkTypeERF, erfRecord(send(1, 1024), 0, 0)}}, 0, 0, ""},
		{"ERF record length padded to 8 bytes (dropped by the pcap writer)", []fed{{layers.LinkTypeERF, erfRecord(small, 96, 0)}}, 0, 0, ""},
		{"ERF record length shorter than its headers", []fed{{layers.LinkTypeERF, erfRecord(send(1, 1024), 8, 0)}}, 1, 0, ""},
		{"ERF record length past the record", []fed{
			{layers.LinkTypeERF, erfRecord(send(1, 1024), 0, 0)}, {layers.LinkTypeERF, erfRecord(small, 4000, 0)}}, 1, 0, ""},
		{"ERF wire length past the record", []fed{
			{layers.LinkTypeERF, erfRecord(send(1, 1024), 0, 0)}, {layers.LinkTypeERF, erfRecord(small, 0, 2000)}}, 1, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := analyze.New(analyze.Options{NoICRC: true})
			ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			var captured, honestPayload uint64
			for i, f := range tt.frames {
				p := a.Feed(gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(f.data), Length: len(f.data)}, f.lt, f.data)
				captured += uint64(len(f.data))
				if p.Err == nil && p.PayloadLen > 0 {
					honestPayload += uint64(p.PayloadLen)
				}
				if p.Err != nil {
					want := "length fields past the end of the frame"
					if tt.name == "UDP length past the IP payload" {
						want = "UDP length beyond the IP payload" // checked before the frame's end (main)
					}
					assert.ErrorContains(t, p.Err, want)
				}
			}
			r := a.Finish()
			c := r.Capture
			assert.Equal(t, tt.malformed, c.Malformed)
			assert.Equal(t, tt.cut, c.CutFrames)
			assert.Len(t, c.MalformedFrames, int(tt.malformed))
			if tt.cut == 0 {
				assert.Equal(t, captured, c.Bytes, "no length is taken from a header")
				var payload uint64
				for _, f := range r.Flows {
					payload += f.PayloadBytes
				}
				assert.Equal(t, honestPayload, payload)
			}
			kinds := map[string]int{}
			sev := ""
			for _, f := range r.Findings {
				kinds[f.Kind]++
				if f.Kind == analyze.KindToolCutFrames {
					sev = f.Severity
				}
			}
			assert.Equal(t, int(tt.malformed), kinds[analyze.KindMalformed])
			assert.Equal(t, tt.cutSev, sev)
		})
	}
}
