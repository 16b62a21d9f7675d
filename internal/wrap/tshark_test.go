package wrap

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/testenv"
)

// tsharkOuter are the Wireshark fields of the encapsulations, every
// occurrence (outermost first), and what each kind puts in them with a
// Wrapper's defaults.
var tsharkOuter = []struct {
	field string
	of    func(k Kind) []uint64
}{
	{"erspan.version", func(k Kind) []uint64 {
		switch k {
		case ERSPAN2:
			return []uint64{1}
		case ERSPAN3, ERSPAN3Platform:
			return []uint64{2}
		}
		return nil
	}},
	{"erspan.spanid", func(k Kind) []uint64 {
		if k == ERSPAN2 || k == ERSPAN3 || k == ERSPAN3Platform {
			return []uint64{defaultSessionID}
		}
		return nil // type I has no ERSPAN header
	}},
	{"erspan.platid", kindValue(ERSPAN3Platform, 3)},
	{"vxlan.vni", kindValue(VXLAN, defaultVNI)},
	{"geneve.vni", kindValue(Geneve, defaultVNI)},
	{"gre.key", nil}, // the VSID and a flow ID: checked below
	{"mpls.label", func(k Kind) []uint64 {
		if k == MPLS {
			return []uint64{uint64(defaultLabels[0]), uint64(defaultLabels[1])}
		}
		return nil
	}},
	{"ieee8021ad.id", kindValue(QinQ, defaultSVID)},
}

func kindValue(want Kind, v uint64) func(Kind) []uint64 {
	return func(k Kind) []uint64 {
		if k == want {
			return []uint64{v}
		}
		return nil
	}
}

// tsharkFields runs tshark on a capture and returns, per frame, every
// occurrence of each field.
func tsharkFields(t *testing.T, tshark, path string, fields []string) [][][]string {
	t.Helper()
	lines, stderr, err := testenv.TsharkFields(tshark, path, "a", fields...)
	require.NoError(t, err, "tshark: %s", stderr)
	var out [][][]string
	for _, line := range lines {
		cols := strings.Split(line, "|")
		require.Len(t, cols, len(fields))
		row := make([][]string, len(cols))
		for i, c := range cols {
			if c != "" {
				row[i] = strings.Split(c, ";")
			}
		}
		out = append(out, row)
	}
	return out
}

func parseNums(t *testing.T, ss []string) []uint64 {
	t.Helper()
	var out []uint64
	for _, s := range ss {
		v, err := strconv.ParseUint(s, 0, 64)
		require.NoError(t, err, "%q", s)
		out = append(out, v)
	}
	return out
}

// TestTshark wraps captures in every test chain and has tshark decode
// them: the outer fields are the Wrapper's, and the BTH's destination QP
// and PSN of every frame are those tshark finds in the capture unwrapped.
// The frames of all chains go in one capture, chain after chain.
func TestTshark(t *testing.T) {
	tshark := testenv.Tshark(t)
	dir := t.TempDir()
	bthFields := []string{"frame.number", "infiniband.bth.destqp", "infiniband.bth.psn", "_ws.malformed"}
	fields := append([]string{}, bthFields...)
	for _, o := range tsharkOuter {
		fields = append(fields, o.field)
	}
	for _, name := range []string{"write_bw_ipv4.pcap", "send_bw_ipv6.pcapng", "atomic_vlan.pcap", "rocev1.pcap", "header_only_snap128.pcap"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("..", "..", "testdata", name)
			frames := readCapture(t, path)
			var chains []Chain
			for _, c := range testChains() {
				if !c.Contains(MPLS) || name != "rocev1.pcap" { // RoCE v1: no IP packet to label
					chains = append(chains, c)
				}
			}
			wrapped := filepath.Join(dir, name+".wrapped.pcap")
			writeWrapped(t, wrapped, frames, chains)
			base := tsharkFields(t, tshark, path, bthFields)
			require.Len(t, base, len(frames))
			got := tsharkFields(t, tshark, wrapped, fields)
			require.Len(t, got, len(frames)*len(chains))
			for n, row := range got {
				i, chain := n%len(frames), chains[n/len(frames)]
				msg := name + " " + chain.String() + " frame " + strconv.Itoa(i+1)
				assert.Empty(t, row[3], "%s: malformed", msg)
				require.NotEmpty(t, row[1], msg)
				assert.Equal(t, base[i][1], row[1], "%s: destqp", msg)
				assert.Equal(t, base[i][2], row[2], "%s: psn", msg)
				for j, o := range tsharkOuter {
					vals := row[len(bthFields)+j]
					var want []uint64
					if o.field == "gre.key" {
						var vsids []uint64
						for _, k := range parseNums(t, vals) {
							vsids = append(vsids, k>>8)
						}
						for range countOf(chain, NVGRE) {
							want = append(want, defaultVNI)
						}
						assert.Equal(t, want, vsids, "%s: NVGRE VSIDs", msg)
						continue
					}
					for _, k := range chain {
						want = append(want, o.of(k)...)
					}
					assert.Equal(t, want, parseNums(t, vals), "%s: %s", msg, o.field)
				}
			}
		})
	}
}

// writeWrapped writes the frames wrapped in each chain in turn as a
// nanosecond pcap, each with its captured bytes and its wire length plus
// the overhead.
func writeWrapped(t *testing.T, path string, frames []capFrame, chains []Chain) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	pw := pcapgo.NewWriterNanos(f)
	require.NoError(t, pw.WriteFileHeader(262144, gplayers.LinkTypeEthernet))
	var out []byte
	for _, chain := range chains {
		w := &Wrapper{Chain: chain}
		for _, fr := range frames {
			var orig int
			out, orig, err = w.Wrap(out[:0], fr.data, fr.ci.Length, fr.ci.Timestamp)
			require.NoError(t, err)
			ci := fr.ci
			ci.CaptureLength, ci.Length = len(out), orig
			require.NoError(t, pw.WritePacket(ci, out))
		}
	}
	require.NoError(t, f.Close())
}
