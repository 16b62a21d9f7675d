package synth

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/testenv"
	"github.com/roce-dissect/roce-dissect/layers"
)

// TestPauseTshark has tshark decode the pause frames and compares their
// opcode, class-enable vector and times with what the generator wrote,
// and the per-sender counts it gives with the truth. Skipped without
// tshark.
func TestPauseTshark(t *testing.T) {
	tshark := testenv.Tshark(t)
	capture, tr, infos := pauseArgs(t, "write-bw", "--pfc", "3+4+0,senders=2,pause=1us-3us,refresh=700ns,quanta=1000",
		"--pfc", "7,xon=no,quanta=2", "--pause", "quanta=77,episodes=2")
	path := filepath.Join(t.TempDir(), "pause.pcap")
	require.NoError(t, os.WriteFile(path, capture, 0o644))
	fields := []string{"frame.number", "eth.src", "eth.dst", "eth.type", "macc.opcode", "macc.pause_time", "macc.cbfc.enbv"}
	for p := range 8 {
		fields = append(fields, "macc.cbfc.pause_time.c"+strconv.Itoa(p))
	}
	lines, stderr, err := testenv.TsharkFields(tshark, path, "f", fields...)
	require.NoError(t, err, stderr)
	require.Len(t, lines, len(infos))
	num := func(s string) uint64 { return tsharkNum(t, s) }
	type key struct {
		mac  string
		prio int
	}
	frames, quanta := map[key]int{}, map[key]int64{}
	n := 0
	for i, line := range lines {
		f := strings.Split(line, "|")
		require.Len(t, f, len(fields))
		fi := infos[i]
		if fi.Pause == nil {
			assert.Empty(t, f[4], "frame %s", f[0])
			continue
		}
		n++
		msg := "frame " + f[0]
		assert.Equal(t, fi.Src, f[1], msg)
		assert.Equal(t, "01:80:c2:00:00:01", f[2], msg)
		assert.Equal(t, uint64(layers.EthernetTypeMACControl), num(f[3]), msg)
		assert.Equal(t, uint64(fi.Pause.Opcode), num(f[4]), msg)
		if fi.Pause.Opcode == uint16(layers.MACControlOpcodePause) {
			assert.Equal(t, uint64(fi.Pause.Quanta[0]), num(f[5]), msg)
			frames[key{f[1], -1}]++
			quanta[key{f[1], -1}] += int64(num(f[5]))
			continue
		}
		vec := num(f[6])
		assert.Equal(t, uint64(fi.Pause.ClassEnable), vec, msg)
		for p := range 8 {
			assert.Equal(t, uint64(fi.Pause.Quanta[p]), num(f[7+p]), "%s priority %d", msg, p)
			if vec&(1<<p) != 0 {
				frames[key{f[1], p}]++
				quanta[key{f[1], p}] += int64(num(f[7+p]))
			}
		}
	}
	assert.Positive(t, n)
	assert.Equal(t, n+tr.RoCEPackets, tr.Frames)
	require.Len(t, tr.Pause, len(frames))
	for _, s := range tr.Pause {
		k := key{s.SrcMAC, -1}
		if s.Priority != nil {
			k.prio = *s.Priority
		}
		assert.Equal(t, frames[k], s.Frames, "%v", k)
		assert.Equal(t, quanta[k], s.Quanta, "%v", k)
	}
	b, err := json.Marshal(tr)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"kind":"802.3x","priority":null`)
}
