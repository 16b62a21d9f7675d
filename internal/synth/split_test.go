package synth

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/roce-dissect/roce-dissect/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSplit: --split N writes the capture in pieces of N frames named as
// SplitNames says, each a capture of its own whose frames, one piece after
// the other, are the whole capture's, and the whole capture's truth.
func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		pieces int
	}{
		{"pcap, two pieces", []string{"write-bw", "--messages", "6", "--msg-size", "3072", "--split", "17"}, 2},
		{"pcap ns, one piece per frame", []string{"ud", "--messages", "2", "--nanos", "--split", "1"}, 2},
		{"pcapng, last piece short", []string{"send-bw", "--format", "pcapng", "--messages", "3", "--split", "8"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, out, truth, err := ParseArgs(append(tc.args, "-o", filepath.Join(dir, "rot.cap")))
			require.NoError(t, err)
			require.NoError(t, WriteFiles(cfg, out, truth))
			whole, wantTruth := generateBytes(t, cfg)
			_, want := readCapture(t, whole)
			var got []record
			for i, name := range SplitNames(out, tc.pieces) {
				assert.Equal(t, filepath.Join(dir, "rot_0000"+string(rune('0'+i))+".cap"), name)
				b, err := os.ReadFile(name)
				require.NoError(t, err)
				_, recs := readCapture(t, b)
				require.NotEmpty(t, recs, name)
				require.LessOrEqual(t, len(recs), cfg.Split, name)
				got = append(got, recs...)
			}
			require.Equal(t, len(want), len(got), "the pieces hold every frame")
			for i := range want {
				assert.Equal(t, want[i].ci.Timestamp, got[i].ci.Timestamp, "frame %d", i+1)
				assert.Equal(t, want[i].ci.Length, got[i].ci.Length, "frame %d", i+1)
				assert.True(t, bytes.Equal(want[i].data, got[i].data), "frame %d", i+1)
			}
			_, err = os.Stat(SplitNames(out, tc.pieces+1)[tc.pieces])
			assert.True(t, os.IsNotExist(err), "no piece more")
			gotTruth, err := os.ReadFile(truth)
			require.NoError(t, err)
			assert.Equal(t, string(wantTruth), string(gotTruth))
		})
	}
	_, _, _, err := ParseArgs([]string{"write-bw", "--split", "-1"})
	assert.ErrorIs(t, err, ErrConfig)
	cfg, _, _, err := ParseArgs([]string{"write-bw", "--split", "5"})
	require.NoError(t, err)
	assert.ErrorIs(t, WriteFiles(cfg, "-", ""), ErrConfig, "pieces are files")
}

// TestUDPPort: --udp-port writes every RoCE v2 packet to that UDP
// destination port, with an ICRC computed over it.
func TestUDPPort(t *testing.T) {
	for _, encap := range []string{"ipv4", "ipv6", "vlan"} {
		t.Run(encap, func(t *testing.T) {
			cfg, _, _, err := ParseArgs([]string{"write-bw", "--encap", encap, "--messages", "2", "--udp-port", "4792"})
			require.NoError(t, err)
			capture, _ := generateBytes(t, cfg)
			lt, recs := readCapture(t, capture)
			require.NotEmpty(t, recs)
			for i, rec := range recs {
				pkt := gopacket.NewPacket(rec.data, lt, gopacket.Default)
				udp, ok := pkt.Layer(gplayers.LayerTypeUDP).(*gplayers.UDP)
				require.True(t, ok, "frame %d", i+1)
				assert.Equal(t, gplayers.UDPPort(4792), udp.DstPort, "frame %d", i+1)
				kind, net := layers.NetworkIPv4, pkt.NetworkLayer().LayerContents()
				if encap == "ipv6" {
					kind = layers.NetworkIPv6
				}
				n := len(udp.Payload)
				want, err := layers.ComputeICRC(kind, net, udp.Contents, udp.Payload[:n-4])
				require.NoError(t, err)
				assert.Equal(t, want, binary.LittleEndian.Uint32(udp.Payload[n-4:]), "frame %d: ICRC over port 4792", i+1)
			}
		})
	}
	for _, args := range [][]string{
		{"write-bw", "--udp-port", "65536"},
		{"write-bw", "--encap", "rocev1", "--udp-port", "4792"},
	} {
		_, _, _, err := ParseArgs(args)
		assert.Error(t, err, "%v", args)
	}
}

// generateBytes returns the capture and truth Generate writes for cfg.
func generateBytes(t *testing.T, cfg Config) (capture, truth []byte) {
	t.Helper()
	var c, tr bytes.Buffer
	_, err := Generate(cfg, &c, &tr)
	require.NoError(t, err)
	return c.Bytes(), tr.Bytes()
}
