package synth

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/wrap"
	"github.com/roce-dissect/roce-dissect/layers"
)

// rfc1071 is the Internet checksum of b (0 when b holds a valid one).
func rfc1071(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	for sum > 0xFFFF {
		sum = sum&0xFFFF + sum>>16
	}
	return ^uint16(sum)
}

// TestWritePointsFrames: each point's frames have the TTL its hops left
// (valid IPv4 checksum), a good ICRC (TTL is masked) except the corrupted
// packet downstream, timestamps on the point's clock, and the tap drops
// and losses missing.
func TestWritePointsFrames(t *testing.T) {
	nak, _ := ParsePSNList("+4,+6")
	cor, _ := ParsePSNList("+6")
	drop, _ := ParsePSNList("+2")
	ecn, _ := ParsePSNList("+1,+3")
	pc := PointsConfig{
		Base: Config{Scenario: ScenarioWriteBW, Messages: 4, Nanos: true, Impairments: Impairments{NAK: nak}},
		Points: []Point{
			{Name: "a", ClockOffset: -time.Millisecond},
			{Name: "b", ClockOffset: 2 * time.Millisecond, Delay: 4 * time.Microsecond, TTLDec: 3, TapDrop: drop, ECN: ecn},
		},
		Corrupt: cor,
	}
	var bufs [2]bytes.Buffer
	tr, err := WritePoints(pc, []io.Writer{&bufs[0], &bufs[1]})
	require.NoError(t, err)
	require.NotNil(t, tr.Stream.Connections[0].Requester.SendPSN)
	start := *tr.Stream.Connections[0].Requester.SendPSN
	requester := tr.Stream.Connections[0].Requester.IP

	var atA map[uint32]int
	for i := range bufs {
		r, err := pcapgo.NewReader(bytes.NewReader(bufs[i].Bytes()))
		require.NoError(t, err)
		var prev time.Time
		psns, ce := map[uint32]int{}, map[uint32]int{}
		bad := 0
		for {
			data, ci, err := r.ReadPacketData()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			require.False(t, ci.Timestamp.Before(prev), "file %d in time order", i)
			prev = ci.Timestamp
			require.False(t, ci.Timestamp.Before(StartTime.Add(pc.Points[i].ClockOffset)), "on the point's clock")
			ip := data[14:34]
			assert.Equal(t, uint16(0), rfc1071(ip), "IPv4 checksum")
			src := netIP(ip[12:16])
			wantTTL := 64 - 3*i // requester → responder crosses the hop into b
			if src != requester {
				wantTTL = 64 - 3*(1-i)
			}
			assert.Equal(t, uint8(wantTTL), ip[8], "TTL at point %d from %s", i, src)
			var bth layers.BTH
			require.NoError(t, bth.DecodeFromBytes(data[42:], nilFeedback{}))
			if src == requester && bth.Opcode.IsRequest() && bth.DestQP != 1 {
				psns[bth.PSN]++
				if ip[1]&3 == 3 {
					ce[bth.PSN]++
				}
			}
			icrc, err := layers.ComputeICRC(layers.NetworkIPv4, data[14:34], data[34:42], data[42:len(data)-4])
			require.NoError(t, err)
			if icrc != binary.LittleEndian.Uint32(data[len(data)-4:]) {
				bad++
			}
		}
		// Point a saw every transmission; b missed +2 (tap) and the first
		// +4 (lost), saw the first +6 corrupted and +1, +3 CE-marked.
		if i == 0 {
			atA = psns
			assert.Equal(t, 1, psns[start+2])
			assert.GreaterOrEqual(t, psns[start+4], 2, "sent and resent")
			assert.GreaterOrEqual(t, psns[start+6], 2, "sent and resent")
			assert.Equal(t, 0, bad)
			assert.Empty(t, ce, "no mark before the hop that adds them")
		} else {
			assert.Equal(t, map[uint32]int{start + 1: 1, start + 3: 1}, ce, "marked by the hop into b, IPv4 checksum and ICRC still good")
			assert.Equal(t, 0, psns[start+2], "tap drop")
			assert.Equal(t, atA[start+4]-1, psns[start+4], "first transmission lost")
			assert.Equal(t, atA[start+6], psns[start+6], "corrupted, not lost")
			assert.Equal(t, atA[start+5], psns[start+5])
			assert.Equal(t, 1, bad, "the corrupted transmission")
		}
	}
}

type nilFeedback struct{}

func (nilFeedback) SetTruncated() {}

func netIP(b []byte) string {
	return strings.Join([]string{itoa(b[0]), itoa(b[1]), itoa(b[2]), itoa(b[3])}, ".")
}

func itoa(v byte) string {
	if v >= 10 {
		return itoa(v/10) + string(rune('0'+v%10))
	}
	return string(rune('0' + v))
}

// TestRunPoints: the subcommand writes one file per point and the truth.
func TestRunPoints(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.pcap")
	var so, se bytes.Buffer
	code := Run([]string{"points", "send-bw", "--messages", "3", "--point", "a", "--point", "b,offset=1ms,delay=2us,drop=+1", "-o", out}, &so, &se)
	require.Equal(t, 0, code, se.String())
	for _, f := range []string{"x.a.pcap", "x.b.pcap"} {
		st, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Greater(t, st.Size(), int64(24))
	}
	b, err := os.ReadFile(filepath.Join(dir, "x.points.truth.json"))
	require.NoError(t, err)
	var tr PointsTruth
	require.NoError(t, json.Unmarshal(b, &tr))
	require.Len(t, tr.Files, 2)
	assert.Equal(t, int64(time.Millisecond), tr.Files[1].ClockOffsetNs)
	notCaptured := 0
	for _, l := range tr.Links {
		notCaptured += l.NotCaptured
	}
	assert.Equal(t, 1, notCaptured)

	for _, bad := range [][]string{
		{"points", "send-bw", "--point", "a"},                     // one point
		{"points", "send-bw", "--point", "a", "--point", "b,x=1"}, // bad key
		{"points", "send-bw", "--point", "a", "--point", "b", "--loss-hop", "3"},
		{"points", "mix", "--point", "a", "--point", "b"},
	} {
		so.Reset()
		se.Reset()
		assert.NotEqual(t, 0, Run(append(bad, "-o", out), &so, &se), "%v", bad)
	}
}

// TestWritePointsWrap: a point with Wrap holds the frames of the same
// point without it, each wrapped whole (ERSPAN II and VXLAN put their
// headers in front), at the same times, with the wrapper's truth in its
// file truth; the links' truth does not change.
func TestWritePointsWrap(t *testing.T) {
	nak, _ := ParsePSNList("+3")
	for _, chain := range []string{"erspan2", "vxlan", "erspan3,vxlan"} {
		t.Run(chain, func(t *testing.T) {
			c, err := wrap.Parse(chain)
			require.NoError(t, err)
			write := func(w wrap.Chain) ([2]bytes.Buffer, *PointsTruth) {
				pc := PointsConfig{
					Base:   Config{Scenario: ScenarioWriteBW, Messages: 4, Nanos: true, Impairments: Impairments{NAK: nak}},
					Points: []Point{{Name: "host"}, {Name: "mirror", Delay: 2 * time.Microsecond, TTLDec: 1, Wrap: w}},
				}
				var bufs [2]bytes.Buffer
				tr, err := WritePoints(pc, []io.Writer{&bufs[0], &bufs[1]})
				require.NoError(t, err)
				return bufs, tr
			}
			plain, plainTruth := write(nil)
			wrapped, tr := write(c)
			assert.Equal(t, plain[0].Bytes(), wrapped[0].Bytes(), "the point without Wrap is unchanged")
			assert.Equal(t, plainTruth.Links, tr.Links)
			assert.Nil(t, tr.Files[0].Encapsulation)
			require.NotNil(t, tr.Files[1].Encapsulation)
			pr, err := pcapgo.NewReader(bytes.NewReader(plain[1].Bytes()))
			require.NoError(t, err)
			wr, err := pcapgo.NewReader(bytes.NewReader(wrapped[1].Bytes()))
			require.NoError(t, err)
			n := 0
			for {
				pd, pci, perr := pr.ReadPacketData()
				wd, wci, werr := wr.ReadPacketData()
				if perr == io.EOF {
					require.Equal(t, io.EOF, werr, "as many frames")
					break
				}
				require.NoError(t, perr)
				require.NoError(t, werr)
				n++
				assert.Equal(t, pci.Timestamp, wci.Timestamp)
				assert.Equal(t, pd, wd[len(wd)-len(pd):], "frame %d wrapped whole", n)
				assert.Equal(t, c.Overhead(), wci.Length-pci.Length, "frame %d", n)
			}
			assert.Equal(t, map[string]int{chain2name(chain): n}, tr.Files[1].Encapsulation.Chains)
		})
	}
}

// chain2name spells a --wrap list as the truth's chains do.
func chain2name(chain string) string { return strings.ReplaceAll(chain, ",", "/") }

// TestWritePointsResendAfterNAK: the requester's tap (Points[0]) sees
// each NAK before the resend it asks for (issue 23: the resend was written
// before the NAK reached the requester's tap, so the report timed it as a
// timeout and sometimes found a go-back-N violation the truth has not).
func TestWritePointsResendAfterNAK(t *testing.T) {
	nak, _ := ParsePSNList("+5,+10")
	pc := PointsConfig{
		Base: Config{Scenario: ScenarioWriteBW, Messages: 8, Nanos: true, Impairments: Impairments{NAK: nak}},
		Points: []Point{{Name: "a"}, {Name: "m", Delay: 2 * time.Microsecond},
			{Name: "b", ClockOffset: time.Millisecond, Delay: 3 * time.Microsecond, Jitter: 200 * time.Nanosecond}},
		LossHop: 2,
	}
	bufs := make([]bytes.Buffer, len(pc.Points))
	ws := make([]io.Writer, len(bufs))
	for i := range bufs {
		ws[i] = &bufs[i]
	}
	_, err := WritePoints(pc, ws)
	require.NoError(t, err)
	checked := 0
	for i := range bufs {
		r, err := pcapgo.NewReader(bytes.NewReader(bufs[i].Bytes()))
		require.NoError(t, err)
		nakAt, resentAt := map[uint32]time.Time{}, map[uint32]time.Time{}
		seen := map[uint32]bool{}
		for {
			data, ci, err := r.ReadPacketData()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			pkt := gopacket.NewPacket(data, r.LinkType(), gopacket.Default)
			bth, ok := pkt.Layer(layers.LayerTypeBTH).(*layers.BTH)
			if !ok || bth.DestQP <= 1 {
				continue
			}
			if aeth, ok := pkt.Layer(layers.LayerTypeAETH).(*layers.AETH); ok {
				if _, first := nakAt[bth.PSN]; aeth.IsNAK() && !first {
					nakAt[bth.PSN] = ci.Timestamp
				}
				continue
			}
			if _, first := resentAt[bth.PSN]; seen[bth.PSN] && !first {
				resentAt[bth.PSN] = ci.Timestamp
			}
			seen[bth.PSN] = true
		}
		if i > 0 {
			continue // downstream of the loss, the first transmission never came
		}
		for psn, at := range nakAt {
			resent, ok := resentAt[psn]
			require.True(t, ok, "PSN %d NAKed, never resent", psn)
			assert.False(t, resent.Before(at), "point %s: PSN %d resent at %s, before its NAK at %s", pc.Points[i].Name, psn, resent, at)
			checked++
		}
	}
	assert.Equal(t, 2, checked, "both NAKs checked at the requester's tap")
}
