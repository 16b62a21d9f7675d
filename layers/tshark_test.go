package layers

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/testenv"
)

// tsharkFields are the Wireshark fields compared with our decoding, with
// how to read the same value from a decoded packet (ok false: the field
// is absent from the packet).
var tsharkFields = []struct {
	name string
	get  func(pkt gopacket.Packet) (uint64, bool)
}{
	{"infiniband.bth.opcode", get(LayerTypeBTH, func(b *BTH) uint64 { return uint64(b.Opcode) })},
	{"infiniband.bth.destqp", get(LayerTypeBTH, func(b *BTH) uint64 { return uint64(b.DestQP) })},
	{"infiniband.bth.psn", get(LayerTypeBTH, func(b *BTH) uint64 { return uint64(b.PSN) })},
	{"infiniband.bth.p_key", get(LayerTypeBTH, func(b *BTH) uint64 { return uint64(b.PKey) })},
	{"infiniband.bth.padcnt", get(LayerTypeBTH, func(b *BTH) uint64 { return uint64(b.PadCnt) })},
	// Wireshark shows the AtomicETH's VA and R_Key with the RETH fields.
	{"infiniband.reth.va", either(get(LayerTypeRETH, func(r *RETH) uint64 { return r.VA }),
		get(LayerTypeAtomicETH, func(a *AtomicETH) uint64 { return a.VA }))},
	{"infiniband.reth.r_key", either(get(LayerTypeRETH, func(r *RETH) uint64 { return uint64(r.RKey) }),
		get(LayerTypeAtomicETH, func(a *AtomicETH) uint64 { return uint64(a.RKey) }))},
	{"infiniband.reth.dmalen", get(LayerTypeRETH, func(r *RETH) uint64 { return uint64(r.DMALength) })},
	{"infiniband.aeth.syndrome", get(LayerTypeAETH, func(a *AETH) uint64 { return uint64(a.Syndrome) })},
	{"infiniband.aeth.msn", get(LayerTypeAETH, func(a *AETH) uint64 { return uint64(a.MSN) })},
	{"infiniband.deth.q_key", get(LayerTypeDETH, func(d *DETH) uint64 { return uint64(d.QKey) })},
	{"infiniband.deth.srcqp", get(LayerTypeDETH, func(d *DETH) uint64 { return uint64(d.SrcQP) })},
	{"infiniband.atomiceth.swapdt", get(LayerTypeAtomicETH, func(a *AtomicETH) uint64 { return a.SwapOrAdd })},
	{"infiniband.atomiceth.cmpdt", get(LayerTypeAtomicETH, func(a *AtomicETH) uint64 { return a.Compare })},
	{"infiniband.atomicacketh.origremdt", get(LayerTypeAtomicAckETH, func(a *AtomicAckETH) uint64 { return a.OrigRemoteData })},
}

// get reads a value from the layer of type t, if the packet has it.
func get[L gopacket.Layer](t gopacket.LayerType, f func(L) uint64) func(gopacket.Packet) (uint64, bool) {
	return func(p gopacket.Packet) (uint64, bool) {
		l, ok := p.Layer(t).(L)
		if !ok {
			return 0, false
		}
		return f(l), true
	}
}

func either(a, b func(gopacket.Packet) (uint64, bool)) func(gopacket.Packet) (uint64, bool) {
	return func(p gopacket.Packet) (uint64, bool) {
		if v, ok := a(p); ok {
			return v, true
		}
		return b(p)
	}
}

// TestTshark decodes the Soft-RoCE captures with tshark and requires the
// same IB header values from our decoding, frame by frame. Only IB fields
// are compared: tshark 4.0 misreads some SEND payloads as RPC-over-RDMA.
func TestTshark(t *testing.T) {
	tshark := testenv.Tshark(t)
	for _, path := range capturePaths(t, "softroce") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			fields := []string{"frame.number"}
			for _, f := range tsharkFields {
				fields = append(fields, f.name)
			}
			lines, stderr, err := testenv.TsharkFields(tshark, path, "f", fields...)
			require.NoError(t, err, stderr)

			frames := readPcap(t, path)
			compared := 0
			for _, line := range lines {
				cols := strings.Split(line, "|")
				require.Len(t, cols, len(tsharkFields)+1, line)
				n, err := strconv.Atoi(cols[0])
				require.NoError(t, err)
				require.LessOrEqual(t, n, len(frames))
				pkt := gopacket.NewPacket(frames[n-1].data, frames[n-1].linkType, gopacket.Default)
				if cols[1] == "" { // not an IB frame for tshark
					assert.Nil(t, pkt.Layer(LayerTypeBTH), "frame %d", n)
					continue
				}
				for i, f := range tsharkFields {
					got, ok := f.get(pkt)
					ws := cols[i+1]
					if ws == "" {
						assert.False(t, ok, "frame %d: %s absent for tshark", n, f.name)
						continue
					}
					want, err := strconv.ParseUint(ws, 0, 64)
					require.NoError(t, err, "frame %d %s=%q", n, f.name, ws)
					require.True(t, ok, "frame %d: %s=%s missing", n, f.name, ws)
					assert.Equal(t, want, got, "frame %d: %s", n, f.name)
					compared++
				}
			}
			assert.Positive(t, compared)
			t.Logf("%d field values equal to tshark's", compared)
		})
	}
}

// tsharkColumns writes frames (Ethernet) to a pcap file in a temporary
// folder, has tshark decode it, and returns for each frame the values of
// fields (the first occurrence of each; "" when absent). The test is
// skipped when tshark is not installed (see testenv.Tshark).
func tsharkColumns(t *testing.T, frames [][]byte, fields ...string) [][]string {
	t.Helper()
	tshark := testenv.Tshark(t)
	path := filepath.Join(t.TempDir(), "frames.pcap")
	f, err := os.Create(path)
	require.NoError(t, err)
	w := pcapgo.NewWriter(f)
	require.NoError(t, w.WriteFileHeader(65535, gplayers.LinkTypeEthernet))
	for i, data := range frames {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1700000000+int64(i), 0), CaptureLength: len(data), Length: len(data)}
		require.NoError(t, w.WritePacket(ci, data))
	}
	require.NoError(t, f.Close())
	lines, stderr, err := testenv.TsharkFields(tshark, path, "f", fields...)
	require.NoError(t, err, stderr)
	var rows [][]string
	for _, line := range lines {
		cols := strings.Split(line, "|")
		require.Len(t, cols, len(fields), line)
		rows = append(rows, cols)
	}
	require.Len(t, rows, len(frames))
	return rows
}

// tsharkUint reads a tshark field value as a number: decimal, 0x… hex,
// or a boolean as tshark prints it ("1"/"0", "True"/"False").
func tsharkUint(t *testing.T, s string) uint64 {
	t.Helper()
	switch s {
	case "True":
		return 1
	case "False":
		return 0
	}
	v, err := strconv.ParseUint(s, 0, 64)
	require.NoError(t, err, "tshark value %q", s)
	return v
}
