package export

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// fullDisk is a writer whose device fills after room bytes: a short
// write, then ENOSPC, as write(2) on a full file system.
type fullDisk struct {
	w    io.Writer
	room int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	if len(p) <= d.room {
		d.room -= len(p)
		return d.w.Write(p)
	}
	n, _ := d.w.Write(p[:d.room])
	d.room = 0
	return n, syscall.ENOSPC
}

// TestExportFullDisk: when the disk fills while a table is written (an
// injected ENOSPC after a few bytes, or a few row groups), Close reports
// it and no file of that table is left, neither under its name nor under
// its temporary one: no packets file without its footer, no zero-byte
// table. The tables written whole before it stay, under their names.
func TestExportFullDisk(t *testing.T) {
	ps := variedPackets(3*rowGroupRows + 5)
	rep := &analyze.Report{Flows: make([]analyze.Flow, 3*tableBatch)}
	for i := range rep.Flows {
		rep.Flows[i].Src, rep.Flows[i].Dst = "10.0.0.1", "10.0.0.2"
	}
	cases := []struct {
		name  string
		room  int
		write func(dir string) error
		left  []string // the files left in dir
	}{
		{"packets, nothing written", 0, func(dir string) error { return writePackets(dir, ps) }, nil},
		{"packets, after its header", 100, func(dir string) error { return writePackets(dir, ps) }, nil},
		{"packets, after row groups", 3 << 20, func(dir string) error { return writePackets(dir, ps) }, nil},
		{"report tables, nothing written", 0, func(dir string) error { return WriteReport(dir, "c.pcap", "c.pcap", rep) }, nil},
		{"report tables, all but the flows fit", 20000, func(dir string) error { return WriteReport(dir, "c.pcap", "c.pcap", rep) },
			[]string{ConnectionsFile, FindingsFile, PauseFile}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wrapWriter = func(w io.Writer) io.Writer { return &fullDisk{w: w, room: tc.room} }
			defer func() { wrapWriter = nil }()
			dir := t.TempDir()
			err := tc.write(dir)
			require.Error(t, err)
			assert.True(t, errors.Is(err, syscall.ENOSPC), "%v", err)
			var left []string
			es, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range es {
				left = append(left, e.Name())
			}
			assert.Equal(t, tc.left, left)
		})
	}
}

func writePackets(dir string, ps []analyze.Packet) error {
	pw, err := NewPacketWriter(filepath.Join(dir, PacketsFile(0, 0)), "c.pcap")
	if err != nil {
		return err
	}
	for i := range ps {
		pw.Add(&ps[i], ps[i].Frame)
	}
	return pw.Close()
}

// TestPrepareDir: PrepareDir refuses a directory where an output's name
// is an input, and otherwise removes the outputs an earlier export left
// (a symlink itself, not its target), and nothing else.
func TestPrepareDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "x")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, name := range []string{FlowsFile, PacketsFile(3, 0), "notes.txt", "packets-1-0.parquet"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644))
	}
	target := filepath.Join(base, "target")
	require.NoError(t, os.WriteFile(target, []byte("precious"), 0o644))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, PauseFile)))

	err := PrepareDir(dir, []string{filepath.Join(dir, PacketsFile(3, 0))})
	require.ErrorContains(t, err, "is an input")
	assert.FileExists(t, filepath.Join(dir, PacketsFile(3, 0)))

	require.NoError(t, PrepareDir(dir, []string{target, filepath.Join(dir, "notes.txt")}))
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var left []string
	for _, e := range es {
		left = append(left, e.Name())
	}
	assert.Equal(t, []string{"notes.txt", "packets-1-0.parquet"}, left)
	b, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "precious", string(b))
}
