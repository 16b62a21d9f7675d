package ncclsynth

import (
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/testenv"
	"github.com/roce-dissect/roce-dissect/layers"
)

// TestTshark has tshark decode every rank's capture: no frame is
// malformed, and in each sender's capture the CTS (WRITE ONLY to the
// connection's CTS QP and FIFO key), the data messages (WRITE ONLY WITH
// IMMEDIATE and FIRST … LAST WITH IMMEDIATE to its data QPs, the
// immediate their length in the byte order configured) and their bytes
// are the truth's. Skipped without tshark.
func TestTshark(t *testing.T) {
	tshark := testenv.Tshark(t)
	fields := []string{"frame.number", "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.reth.r_key",
		"infiniband.reth.dmalen", "infiniband.immdt", "_ws.malformed", "ip.dst", "ipv6.dst"}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"2.20, host-order immediate, 2 channels", Config{Ranks: 3, Channels: 2, MTU: 1024, Collectives: []Collective{{Kind: AllReduce, Size: 3 << 20}, {Kind: AllGather, Size: 3000}}}},
		{"2.30, big-endian immediate, 2 QPs, IPv6, pcapng", Config{Ranks: 4, Layout: "2.30", QPs: 2, Encap: 1, Format: 1,
			Collectives: []Collective{{Kind: Broadcast, Size: 1 << 20}, {Kind: ReduceScatter, Size: 4 << 20}}, ClockOffsets: []time.Duration{time.Second}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, tr := generate(t, tc.cfg)
			dir := t.TempDir()
			for r, f := range files {
				path := filepath.Join(dir, strconv.Itoa(r)+".cap")
				require.NoError(t, os.WriteFile(path, f, 0o644))
				lines, stderr, err := testenv.TsharkFields(tshark, path, "f", fields...)
				require.NoError(t, err, stderr)
				require.Len(t, lines, tr.Files[r].Frames)
				var cts, msgs int
				var bytes int64
				for _, c := range tr.Connections {
					if c.SenderRank != r {
						continue
					}
					for _, line := range lines {
						f := strings.Split(line, "|")
						require.Len(t, f, len(fields))
						require.Empty(t, f[6], "malformed: %s", line)
						op, qp := layers.Opcode(num(t, f[1])), uint32(num(t, f[2]))
						toSender := f[7] == c.Sender || f[8] == c.Sender
						switch {
						case op == layers.OpcodeRCRDMAWriteOnly && toSender && qp == c.CTSQP && uint32(num(t, f[3])) == c.FIFORkey:
							cts++
						case (op == layers.OpcodeRCRDMAWriteOnlyWithImm || op == layers.OpcodeRCRDMAWriteFirst) && !toSender && slices.Contains(c.DataQPs, qp):
							bytes += int64(num(t, f[4]))
							if op == layers.OpcodeRCRDMAWriteOnlyWithImm {
								imm := uint32(num(t, "0x"+f[5])) // the wire's bytes in hex
								if tr.ImmediateOrder == "host" {
									imm = bits.ReverseBytes32(imm)
								}
								assert.Equal(t, uint32(num(t, f[4])), imm, line)
							}
							fallthrough
						case op == layers.OpcodeRCRDMAWriteLastWithImm && !toSender && slices.Contains(c.DataQPs, qp):
							if op != layers.OpcodeRCRDMAWriteFirst {
								msgs++
							}
						}
					}
					assert.Equal(t, c.CTS, cts, "rank %d's CTS", r)
					assert.Equal(t, c.Messages, msgs, "rank %d's messages", r)
					assert.Equal(t, c.Bytes, bytes, "rank %d's bytes", r)
					cts, msgs, bytes = 0, 0, 0
				}
			}
		})
	}
}

// num parses a number tshark printed (decimal or 0x hex); "" is 0.
func num(t *testing.T, s string) uint64 {
	t.Helper()
	if s == "" {
		return 0
	}
	v, err := strconv.ParseUint(s, 0, 64)
	require.NoError(t, err, "%q", s)
	return v
}
