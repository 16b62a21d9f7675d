package synth

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/testenv"
	"github.com/roce-dissect/roce-dissect/internal/wrap"
)

// wrapChains are the --wrap lists the tests run: every kind, and
// nestings.
func wrapChains() []string {
	return append(wrap.Names(), "erspan2,vxlan", "erspan3,geneve", "qinq,mpls", "nvgre,qinq")
}

// wrapBases are command lines whose captures the tests wrap. A snap
// length or cut is given as "@N": N bytes of the frame itself, N plus
// the wrap's overhead once wrapped.
var wrapBases = [][]string{
	{"write-bw", "--messages", "6", "--msg-size", "3072", "--mtu", "1024", "--start-psn", "1000", "--drop", "1002", "--nak", "1007"},
	{"read-bw", "--nanos", "--messages", "4", "--msg-size", "3000", "--reorder", "+3"},
	{"atomic", "--encap", "vlan", "--messages", "6"},
	{"send-bw", "--encap", "ipv6", "--format", "pcapng", "--messages", "4", "--msg-size", "2500"},
	{"send-bw", "--encap", "rocev1", "--messages", "4", "--msg-size", "2048", "--dup", "+2"},
	{"write-bw", "--messages", "4", "--ecn", "+1,+3", "--rate-cut", "0.5", "--sniffer-src-port"},
	{"write-bw", "--messages", "16", "--snaplen", "@128"},
	{"mix", "--packets", "300", "--qps", "8", "--snaplen", "@96"},
	{"write-bw", "--messages", "8", "--msg-size", "4096", "--mtu", "4096", "--cut-frames", "@243"},
	{"ud", "--messages", "6", "--msg-size", "512", "--v1-requester"},
}

// wrapArgs returns a base command line with "@N" resolved for an
// overhead of n bytes.
func wrapArgs(base []string, n int) []string {
	out := slices.Clone(base)
	for i, a := range out {
		if v, ok := strings.CutPrefix(a, "@"); ok {
			x, _ := strconv.Atoi(v)
			out[i] = strconv.Itoa(x + n)
		}
	}
	return out
}

// wrapRefused reports whether --wrap refuses a base command line.
func wrapRefused(base []string, chain string) bool {
	v1 := slices.Contains(base, "rocev1") || slices.Contains(base, "--v1-requester")
	return v1 && strings.Contains(chain, "mpls")
}

// generateArgs parses a command line and generates its capture.
func generateArgs(t *testing.T, args []string) ([]byte, *Truth, []byte) {
	t.Helper()
	cfg, _, _, err := ParseArgs(args)
	require.NoError(t, err, "%q", args)
	var capBuf, truthBuf bytes.Buffer
	tr, err := Generate(cfg, &capBuf, &truthBuf)
	require.NoError(t, err)
	return capBuf.Bytes(), tr, truthBuf.Bytes()
}

// TestWrapSameTruth generates each base capture with and without every
// --wrap: the wrapped capture is the same frames, at the same times, cut
// the same way, inside the wrap's headers; its truth is the same but for
// the encapsulation summary, which counts every frame and its tunnels.
func TestWrapSameTruth(t *testing.T) {
	for _, base := range wrapBases {
		plainCap, plain, plainJSON := generateArgs(t, wrapArgs(base, 0))
		assert.NotContains(t, string(plainJSON), `"encapsulation"`)
		_, plainRecs := readCapture(t, plainCap)
		for _, list := range wrapChains() {
			t.Run(strings.Join(base, " ")+" --wrap "+list, func(t *testing.T) {
				chain, err := wrap.Parse(list)
				require.NoError(t, err)
				n := chain.Overhead()
				args := append(wrapArgs(base, n), "--wrap", list)
				if wrapRefused(base, list) {
					_, _, _, err := ParseArgs(args)
					require.ErrorIs(t, err, ErrConfig)
					return
				}
				wrappedCap, wrapped, wrappedJSON := generateArgs(t, args)
				var back Truth
				require.NoError(t, json.Unmarshal(wrappedJSON, &back))
				require.NotNil(t, back.Encapsulation)
				enc := *wrapped.Encapsulation
				assert.Equal(t, enc, *back.Encapsulation)
				assert.Equal(t, map[string]int{chain.String(): plain.Frames}, enc.Chains)
				perKind := map[string]int{}
				for _, tu := range enc.Tunnels {
					perKind[tu.Kind] += tu.Frames
				}
				for _, k := range chain {
					want := 0
					for _, x := range chain {
						if x == k {
							want += plain.Frames
						}
					}
					assert.Equal(t, want, perKind[k.String()], "frames through %s", k)
				}
				wrapped.Encapsulation = nil
				assert.Equal(t, plain, wrapped, "the truth of the frames inside")

				_, recs := readCapture(t, wrappedCap)
				require.Len(t, recs, len(plainRecs))
				for i, r := range recs {
					p := plainRecs[i]
					assert.Equal(t, p.ci.Timestamp, r.ci.Timestamp)
					assert.Equal(t, p.ci.Length+n, r.ci.Length, "frame %d: wire length", i+1)
					require.Len(t, r.data, len(p.data)+n, "frame %d: cut the same way", i+1)
					switch {
					case slices.Contains(chain, wrap.MPLS):
					case slices.Contains(chain, wrap.QinQ):
						assert.True(t, bytes.HasSuffix(r.data, p.data[12:]), "frame %d", i+1)
					default:
						assert.True(t, bytes.HasSuffix(r.data, p.data), "frame %d", i+1)
					}
				}
			})
		}
	}
}

func TestWrapConfig(t *testing.T) {
	cfg, _, _, err := ParseArgs([]string{"write-bw", "--wrap", "ERSPAN2, vxlan"})
	require.NoError(t, err)
	assert.Equal(t, wrap.Chain{wrap.ERSPAN2, wrap.VXLAN}, cfg.Wrap)

	_, _, _, err = ParseArgs([]string{"write-bw", "--wrap", "erspan2,gre"})
	require.Error(t, err)
	for _, n := range wrap.Names() {
		assert.Contains(t, err.Error(), n)
	}

	for _, args := range [][]string{
		{"write-bw", "--encap", "ib", "--wrap", "vxlan"},
		{"write-bw", "--encap", "erf", "--wrap", "erspan1"},
		{"write-bw", "--encap", "rocev1", "--wrap", "erspan2,mpls"},
		{"read-bw", "--v1-requester", "--wrap", "mpls"},
		{"write-bw", "--snaplen", "50", "--wrap", "erspan2"},
		{"write-bw", "--snaplen", "100", "--wrap", "erspan2,vxlan"},
		{"write-bw", "--cut-frames", "170", "--wrap", "erspan2"},
		{"write-bw", "--pfc", "on", "--wrap", "vxlan"},
	} {
		_, _, _, err := ParseArgs(args)
		require.ErrorIs(t, err, ErrConfig, "%q", args)
	}
	_, _, _, err = ParseArgs([]string{"write-bw", "--snaplen", "51", "--wrap", "erspan2"})
	require.NoError(t, err)

	_, err = WritePoints(PointsConfig{Base: Config{Wrap: wrap.Chain{wrap.VXLAN}}, Points: []Point{{Name: "a"}, {Name: "b"}}},
		[]io.Writer{io.Discard, io.Discard})
	require.ErrorIs(t, err, ErrConfig)
}

// TestWrapTshark has tshark decode wrapped captures: every frame down to
// its BTH, whose opcode, destination QP and PSN are those of the capture
// unwrapped, and none malformed.
func TestWrapTshark(t *testing.T) {
	tshark := testenv.Tshark(t)
	dir := t.TempDir()
	fields := []string{"infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn", "_ws.malformed"}
	run := func(t *testing.T, capture []byte, name string) []string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, capture, 0o644))
		lines, stderr, err := testenv.TsharkFields(tshark, path, "l", fields...)
		require.NoError(t, err, "tshark: %s", stderr)
		return lines
	}
	for bi, base := range [][]string{wrapBases[0], wrapBases[2], wrapBases[3], wrapBases[4], wrapBases[6]} {
		plainCap, _, _ := generateArgs(t, wrapArgs(base, 0))
		plain := run(t, plainCap, strconv.Itoa(bi)+".pcap")
		for _, list := range wrapChains() {
			if wrapRefused(base, list) {
				continue
			}
			t.Run(strings.Join(base, " ")+" --wrap "+list, func(t *testing.T) {
				t.Parallel()
				chain, err := wrap.Parse(list)
				require.NoError(t, err)
				capture, _, _ := generateArgs(t, append(wrapArgs(base, chain.Overhead()), "--wrap", list))
				got := run(t, capture, strconv.Itoa(bi)+"."+strings.ReplaceAll(list, ",", "_")+".pcap")
				require.Len(t, got, len(plain))
				for i, line := range got {
					f := strings.Split(line, "|")
					require.Len(t, f, len(fields))
					require.NotEmpty(t, f[0], "frame %d: no BTH", i+1)
					assert.Empty(t, f[3], "frame %d: malformed", i+1)
					assert.Equal(t, plain[i], line, "frame %d", i+1)
				}
			})
		}
	}
}
