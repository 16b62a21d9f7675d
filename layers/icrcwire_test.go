package layers

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/testenv"
)

// TestICRCWireValueTshark reads every ICRC of the repository's pcap
// captures that tshark reads (its InfiniBand dissector's
// infiniband.invariant.crc) and requires the ICRC layer's WireValue, and
// the number String prints, to be Wireshark's; Value stays the CRC-32
// value, the same bytes read the other way round.
func TestICRCWireValueTshark(t *testing.T) {
	tshark := testenv.Tshark(t)
	paths, err := filepath.Glob("../testdata/*.pcap")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	compared := 0
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			frames := readPcap(t, path)
			if len(frames) > 0 && frames[0].linkType == LayerTypeLRH {
				return // tshark 4.0 does not read link type 247 (native IB)
			}
			lines, stderr, err := testenv.TsharkFields(tshark, path, "l", "frame.number", "infiniband.invariant.crc")
			require.NoError(t, err, stderr)
			for _, line := range lines {
				cols := strings.Split(line, "|")
				require.Len(t, cols, 2, line)
				if cols[1] == "" {
					continue
				}
				n, err := strconv.Atoi(cols[0])
				require.NoError(t, err)
				want, err := strconv.ParseUint(cols[1], 0, 32)
				require.NoError(t, err, line)
				pkt := gopacket.NewPacket(frames[n-1].data, frames[n-1].linkType, gopacket.Default)
				c, ok := pkt.Layer(LayerTypeICRC).(*ICRC)
				if !ok {
					// tshark reads the last 4 captured bytes of a frame
					// the capture cut; the BTH knows it has no ICRC.
					bth, ok := pkt.Layer(LayerTypeBTH).(*BTH)
					require.True(t, ok, "frame %d: an ICRC for tshark, no BTH here", n)
					require.True(t, bth.Truncated, "frame %d: an ICRC for tshark, none here", n)
					continue
				}
				assert.Equal(t, uint32(want), c.WireValue(), "frame %d", n)
				assert.Equal(t, uint32(want), ICRCWireValue(c.Value), "frame %d", n)
				assert.Equal(t, cols[1], ICRCWire(c.Value), "frame %d", n)
				assert.True(t, strings.HasPrefix(gopacket.LayerString(c), "ICRC\tICRC "+cols[1]+" ("), "frame %d: %s", n, gopacket.LayerString(c))
				compared++
			}
		})
	}
	assert.Positive(t, compared)
}
