package layers

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// macControlGolden is a MAC Control frame written field by field from IEEE
// 802.3 Annex 31B (PAUSE) and 802.1Qbb / 802.3 Annex 31D (PFC).
type macControlGolden struct {
	name    string
	hex     []string // Ethernet header, MAC Control fields, padding
	want    MACControl
	enabled [8]bool
	quanta  [8]uint16
}

func (g macControlGolden) bytes() []byte { return mustHex(strings.Join(g.hex, "")) }

const macControlEthernet = "0180c2000001 020000000021 8808" // Ethernet: dst 01-80-C2-00-00-01, src 02:00:00:00:00:21, type 0x8808

var macControlGoldens = []macControlGolden{
	{
		name: "PFC, priority 3 paused for 0xFFFF quanta",
		hex: []string{
			macControlEthernet,
			"0101", // opcode: PFC
			"0008", // class-enable vector: priority 3
			"0000 0000 0000 ffff 0000 0000 0000 0000", // time[0..7]: priority 3 0xFFFF
			strings.Repeat("00", 26),                  // padding to 46 bytes
		},
		want:    MACControl{Opcode: MACControlOpcodePFC, ClassEnableVector: 0x0008, PauseTimes: [8]uint16{3: 0xFFFF}},
		enabled: [8]bool{3: true},
		quanta:  [8]uint16{3: 0xFFFF},
	},
	{
		name: "PFC XON, priority 3 resumed (time 0)",
		hex: []string{
			macControlEthernet,
			"0101", // opcode: PFC
			"0008", // class-enable vector: priority 3
			"0000 0000 0000 0000 0000 0000 0000 0000", // time[0..7]: all 0
			strings.Repeat("00", 26),                  // padding to 46 bytes
		},
		want:    MACControl{Opcode: MACControlOpcodePFC, ClassEnableVector: 0x0008},
		enabled: [8]bool{3: true},
	},
	{
		name: "PFC, priorities 3 and 5, a stale time for disabled priority 0",
		hex: []string{
			macControlEthernet,
			"0101", // opcode: PFC
			"0028", // class-enable vector: priorities 3 and 5
			"0010 0000 0000 ffff 0000 0400 0000 0000", // time[0..7]: 0x10 (ignored), 0xFFFF, 0x400
			strings.Repeat("00", 26),                  // padding to 46 bytes
		},
		want:    MACControl{Opcode: MACControlOpcodePFC, ClassEnableVector: 0x0028, PauseTimes: [8]uint16{0: 0x10, 3: 0xFFFF, 5: 0x400}},
		enabled: [8]bool{3: true, 5: true},
		quanta:  [8]uint16{0: 0x10, 3: 0xFFFF, 5: 0x400},
	},
	{
		name: "802.3x PAUSE, 0x0100 quanta",
		hex: []string{
			macControlEthernet,
			"0001",                   // opcode: PAUSE
			"0100",                   // pause_time 256
			strings.Repeat("00", 42), // padding to 46 bytes
		},
		want:    MACControl{Opcode: MACControlOpcodePause, PauseTime: 0x100},
		enabled: [8]bool{true, true, true, true, true, true, true, true},
		quanta:  [8]uint16{0x100, 0x100, 0x100, 0x100, 0x100, 0x100, 0x100, 0x100},
	},
	{
		name: "EPON GATE (opcode 0x0002): opcode only",
		hex: []string{
			macControlEthernet,
			"0002",                                // opcode: GATE
			"01020304" + strings.Repeat("00", 40), // timestamp and the rest: not decoded
		},
		want: MACControl{Opcode: 0x0002},
	},
}

// TestMACControlGolden decodes each golden frame with gopacket.NewPacket
// and with a DecodingLayerParser (no allocation): every field, the
// padding left in Payload, Enabled and Quanta for each priority.
func TestMACControlGolden(t *testing.T) {
	for _, g := range macControlGoldens {
		t.Run(g.name, func(t *testing.T) {
			data := g.bytes()
			require.Len(t, data, 60, "a minimum-size frame without FCS")
			pkt := gopacket.NewPacket(data, gplayers.LayerTypeEthernet, gopacket.Default)
			require.Nil(t, pkt.ErrorLayer())
			require.Len(t, pkt.Layers(), 2)
			assert.Equal(t, EthernetTypeMACControl, pkt.Layer(gplayers.LayerTypeEthernet).(*gplayers.Ethernet).EthernetType)
			m, ok := pkt.Layer(LayerTypeMACControl).(*MACControl)
			require.True(t, ok, "no MAC Control layer")
			assert.Equal(t, &g.want, header(m))
			n := macControlFieldsLen(g.want.Opcode)
			assert.Equal(t, data[14:14+n], m.Contents)
			assert.Equal(t, data[14+n:], m.Payload)
			assert.Equal(t, gopacket.LayerTypeZero, m.NextLayerType())
			for p := range 8 {
				assert.Equal(t, g.enabled[p], m.Enabled(p), "Enabled(%d)", p)
				assert.Equal(t, g.quanta[p], m.Quanta(p), "Quanta(%d)", p)
			}

			var eth gplayers.Ethernet
			var dm MACControl
			parser := gopacket.NewDecodingLayerParser(gplayers.LayerTypeEthernet, &eth, &dm)
			decoded := make([]gopacket.LayerType, 0, 4)
			require.NoError(t, parser.DecodeLayers(data, &decoded))
			assert.Equal(t, []gopacket.LayerType{gplayers.LayerTypeEthernet, LayerTypeMACControl}, decoded)
			assert.Equal(t, &g.want, header(&dm))
			allocs := testing.AllocsPerRun(100, func() { _ = parser.DecodeLayers(data, &decoded) })
			assert.Zero(t, allocs)
		})
	}
}

// TestMACControlRoundTrip: the decoded golden frames serialize (FixLengths
// padding) to the same bytes; built frames come back field for field.
func TestMACControlRoundTrip(t *testing.T) {
	for _, g := range macControlGoldens {
		t.Run(g.name, func(t *testing.T) {
			data := g.bytes()
			pkt := gopacket.NewPacket(data, gplayers.LayerTypeEthernet, gopacket.Default)
			m := pkt.Layer(LayerTypeMACControl).(*MACControl)
			var rest []gopacket.SerializableLayer
			if m.Opcode != MACControlOpcodePause && m.Opcode != MACControlOpcodePFC {
				rest = raw(m.Payload) // the body not decoded
			}
			buf := gopacket.NewSerializeBuffer()
			opts := gopacket.SerializeOptions{FixLengths: true}
			ls := append([]gopacket.SerializableLayer{pkt.Layer(gplayers.LayerTypeEthernet).(*gplayers.Ethernet), m}, rest...)
			require.NoError(t, gopacket.SerializeLayers(buf, opts, ls...))
			assert.Equal(t, data, buf.Bytes())
		})
	}
	built := []struct {
		m     MACControl
		n     int // bytes without FixLengths
		fixed int // bytes with FixLengths
	}{
		{MACControl{Opcode: MACControlOpcodePause, PauseTime: 0xFFFF}, 4, 46},
		{MACControl{Opcode: MACControlOpcodePFC, ClassEnableVector: 0xFFFF, PauseTimes: [8]uint16{1, 2, 3, 4, 5, 6, 7, 0xFFFF}}, 20, 46},
		{MACControl{Opcode: MACControlOpcodePFC}, 20, 46},
		{MACControl{Opcode: 0x0006}, 2, 46},
	}
	for _, c := range built {
		for _, fix := range []bool{false, true} {
			buf := gopacket.NewSerializeBuffer()
			require.NoError(t, c.m.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: fix}))
			want := c.n
			if fix {
				want = c.fixed
				assert.Equal(t, make([]byte, c.fixed-c.n), buf.Bytes()[c.n:], "zero padding")
			}
			require.Len(t, buf.Bytes(), want)
			got := &MACControl{}
			require.NoError(t, got.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback))
			assert.Equal(t, header(&c.m), header(got))
		}
	}
	// A payload already longer than the minimum gets no padding.
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true}
	require.NoError(t, gopacket.SerializeLayers(buf, opts, &MACControl{Opcode: 0x0003}, gopacket.Payload(make([]byte, 50))))
	assert.Len(t, buf.Bytes(), 52)
}

// TestMACControlTruncated: shorter than the fields of its opcode is
// ErrTruncated with the truncation flag, at every length, and resets what
// an earlier decode left; through gopacket.NewPacket (panics not
// recovered) the packet is flagged truncated and has no MAC Control layer.
func TestMACControlTruncated(t *testing.T) {
	for _, g := range macControlGoldens {
		t.Run(g.name, func(t *testing.T) {
			data := g.bytes()
			need := 14 + macControlFieldsLen(g.want.Opcode)
			for n := range len(data) + 1 {
				d := append([]byte(nil), data[:n]...)
				pkt := gopacket.NewPacket(d, gplayers.LayerTypeEthernet, gopacket.DecodeOptions{SkipDecodeRecovery: true})
				if n <= 14 {
					continue // gopacket's Ethernet, with nothing after it
				}
				m := &MACControl{Opcode: 0x0101, PauseTime: 1, ClassEnableVector: 2, PauseTimes: [8]uint16{3}}
				df := &feedback{}
				err := m.DecodeFromBytes(d[14:], df)
				if n < need {
					assert.ErrorIs(t, err, ErrTruncated, "n=%d", n)
					assert.True(t, df.truncated, "n=%d", n)
					assert.Equal(t, MACControl{}, *m, "n=%d: fields reset", n)
					require.NotNil(t, pkt.ErrorLayer(), "n=%d", n)
					assert.ErrorIs(t, pkt.ErrorLayer().Error(), ErrTruncated, "n=%d", n)
					assert.True(t, pkt.Metadata().Truncated, "n=%d", n)
					assert.Nil(t, pkt.Layer(LayerTypeMACControl), "n=%d", n)
					continue
				}
				require.NoError(t, err, "n=%d", n)
				assert.False(t, df.truncated, "n=%d", n)
				assert.Equal(t, &g.want, header(m), "n=%d", n)
				assert.Nil(t, pkt.ErrorLayer(), "n=%d", n)
			}
		})
	}
}

// TestMACControlPriorities covers Enabled and Quanta outside the golden
// frames: priorities out of range, the reserved high bits of the vector,
// opcodes that are neither PAUSE nor PFC.
func TestMACControlPriorities(t *testing.T) {
	pfc := &MACControl{Opcode: MACControlOpcodePFC, ClassEnableVector: 0xFF81, PauseTimes: [8]uint16{0: 5, 7: 9}}
	cases := []struct {
		name     string
		m        *MACControl
		priority int
		enabled  bool
		quanta   uint16
	}{
		{"PFC priority 0", pfc, 0, true, 5},
		{"PFC priority 7", pfc, 7, true, 9},
		{"PFC priority 1, disabled", pfc, 1, false, 0},
		{"PFC priority 8 (a reserved bit of the vector)", pfc, 8, false, 0},
		{"PFC priority -1", pfc, -1, false, 0},
		{"PAUSE, any priority", &MACControl{Opcode: MACControlOpcodePause, PauseTime: 7}, 100, true, 7},
		{"PAUSE, negative priority", &MACControl{Opcode: MACControlOpcodePause, PauseTime: 7}, -1, true, 7},
		{"other opcode", &MACControl{Opcode: 0x0002, PauseTime: 7, ClassEnableVector: 1, PauseTimes: [8]uint16{7}}, 0, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.enabled, c.m.Enabled(c.priority))
			assert.Equal(t, c.quanta, c.m.Quanta(c.priority))
		})
	}
}

func TestMACControlOpcodeString(t *testing.T) {
	cases := map[MACControlOpcode]string{
		MACControlOpcodePause: "PAUSE", MACControlOpcodePFC: "PFC", 2: "GATE", 3: "REPORT",
		4: "REGISTER_REQ", 5: "REGISTER", 6: "REGISTER_ACK", 0: "0x0000", 0x0102: "0x0102",
	}
	for op, want := range cases {
		assert.Equal(t, want, op.String())
	}
}

func TestPauseDuration(t *testing.T) {
	cases := []struct {
		quanta uint16
		bps    float64
		want   time.Duration
	}{
		{1, 1e9, 512 * time.Nanosecond},
		{0xFFFF, 100e9, 335539 * time.Nanosecond}, // 33,553,920 bits: 335.5392 µs
		{0xFFFF, 10e9, 3355392 * time.Nanosecond},
		{0xFFFF, 25e9, 1342157 * time.Nanosecond}, // 1,342,156.8 ns, rounded
		{0xFFFF, 400e9, 83885 * time.Nanosecond},  // 83,884.8 ns
		{0, 100e9, 0},
		{10, 0, 0},
		{10, -1e9, 0},
		{10, math.NaN(), 0},
		{10, math.Inf(1), 0},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, PauseDuration(c.quanta, c.bps), "%d quanta at %g b/s", c.quanta, c.bps)
	}
	assert.Equal(t, 512, QuantumBits)
}

// TestTsharkMACControl serializes PAUSE and PFC frames and requires tshark
// to read the same opcode, pause_time, class-enable vector and times.
func TestTsharkMACControl(t *testing.T) {
	frames := []*MACControl{
		{Opcode: MACControlOpcodePFC, ClassEnableVector: 0x0008, PauseTimes: [8]uint16{3: 0xFFFF}},
		{Opcode: MACControlOpcodePFC, ClassEnableVector: 0x0008},
		{Opcode: MACControlOpcodePFC, ClassEnableVector: 0x00FF, PauseTimes: [8]uint16{1, 2, 3, 4, 5, 6, 7, 0xFFFF}},
		{Opcode: MACControlOpcodePause, PauseTime: 0xFFFF},
		{Opcode: MACControlOpcodePause},
	}
	names := []string{"macc.opcode", "macc.pause_time", "macc.cbfc.enbv"}
	for p := range 8 {
		names = append(names, "macc.cbfc.pause_time.c"+string(rune('0'+p)))
	}
	var data [][]byte
	for _, m := range frames {
		buf := gopacket.NewSerializeBuffer()
		eth := &gplayers.Ethernet{DstMAC: []byte{0x01, 0x80, 0xC2, 0, 0, 1}, SrcMAC: []byte{2, 0, 0, 0, 0, 0x21}, EthernetType: EthernetTypeMACControl}
		require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, eth, m))
		require.Len(t, buf.Bytes(), 60)
		data = append(data, buf.Bytes())
	}
	rows := tsharkColumns(t, data, names...)
	compared := 0
	for i, row := range rows {
		pkt := gopacket.NewPacket(data[i], gplayers.LayerTypeEthernet, gopacket.Default)
		m := pkt.Layer(LayerTypeMACControl).(*MACControl)
		assert.Equal(t, header(frames[i]), header(m), "frame %d", i+1)
		assert.Equal(t, uint64(m.Opcode), tsharkUint(t, row[0]), "frame %d: macc.opcode", i+1)
		compared++
		switch m.Opcode {
		case MACControlOpcodePause:
			assert.Equal(t, uint64(m.PauseTime), tsharkUint(t, row[1]), "frame %d: macc.pause_time", i+1)
			assert.Empty(t, row[2], "frame %d: no class-enable vector", i+1)
			compared++
		case MACControlOpcodePFC:
			assert.Empty(t, row[1], "frame %d: no pause_time", i+1)
			assert.Equal(t, uint64(m.ClassEnableVector), tsharkUint(t, row[2]), "frame %d: macc.cbfc.enbv", i+1)
			compared++
			for p := range 8 {
				assert.Equal(t, uint64(m.Quanta(p)), tsharkUint(t, row[3+p]), "frame %d: %s", i+1, names[3+p])
				compared++
			}
		}
	}
	t.Logf("%d field values equal to tshark's", compared)
}
