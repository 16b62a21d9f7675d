package analyze

import (
	"net"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze/internal/pfc"
	"github.com/roce-dissect/roce-dissect/layers"
)

// pfcFrame is a PFC frame from src pausing priority 3 for q quanta.
func pfcFrame(t testing.TB, src net.HardwareAddr, q uint16) []byte {
	t.Helper()
	eth := &gplayers.Ethernet{SrcMAC: src, DstMAC: net.HardwareAddr{0x01, 0x80, 0xC2, 0, 0, 1}, EthernetType: layers.EthernetTypeMACControl}
	mc := &layers.MACControl{Opcode: layers.MACControlOpcodePFC, ClassEnableVector: 1 << 3}
	mc.PauseTimes[3] = q
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, eth, mc))
	return append([]byte(nil), buf.Bytes()...)
}

// TestPauseBounded: pause frames from more senders than pfc.MaxKeys
// list the first ones and count the frames of the others, sequentially,
// in shards and merged.
func TestPauseBounded(t *testing.T) {
	t.Run("senders", func(t *testing.T) {
		const senders = pfc.MaxKeys + 76
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var frames [][]byte
		for i := range senders {
			frames = append(frames, pfcFrame(t, net.HardwareAddr{2, 0, 0, byte(i >> 16), byte(i >> 8), byte(i)}, 100))
		}
		a := New(Options{})
		s := NewSharded(Options{}, 3)
		half := [2]*Analyzer{New(Options{}), New(Options{})}
		for i, f := range frames {
			ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(f), Length: len(f)}
			a.Feed(ci, gplayers.LinkTypeEthernet, f)
			s.Feed(ci, gplayers.LinkTypeEthernet, f)
			half[i*2/senders].Feed(ci, gplayers.LinkTypeEthernet, f)
		}
		sharded, err := s.Finish()
		require.NoError(t, err)
		merged := half[0].Finish()
		require.NoError(t, merged.Merge(half[1].Finish()))
		for name, rep := range map[string]*Report{"sequential": a.Finish(), "sharded": sharded, "merged": merged} {
			assert.Len(t, rep.Pause, pfc.MaxKeys, name)
			assert.Equal(t, uint64(senders-pfc.MaxKeys), rep.Capture.PauseFramesUnlisted, name)
			assert.Equal(t, "02:00:00:00:00:00", rep.Pause[0].SrcMAC, name)
			assert.Equal(t, "02:00:00:00:03:ff", rep.Pause[pfc.MaxKeys-1].SrcMAC, "%s: the first senders are listed", name)
		}
	})
}
