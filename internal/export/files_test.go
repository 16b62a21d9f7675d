package export

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
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
		{"report tables, nothing written", 0, func(dir string) error { return WriteReport(dir, "c.pcap", "c.pcap", rep, nil) }, nil},
		{"report tables, all but the flows fit", 20000, func(dir string) error { return WriteReport(dir, "c.pcap", "c.pcap", rep, nil) },
			[]string{CollectiveArrivalsFile, CollectiveLinksFile, CollectivesFile, ConnectionsFile, FindingsFile, PauseFile}},
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

// dirFiles returns the entries of dir with their contents (a symlink's
// as "-> target").
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	files := map[string]string{}
	for _, e := range es {
		path := filepath.Join(dir, e.Name())
		if e.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(path)
			require.NoError(t, err)
			files[e.Name()] = "-> " + target
			continue
		}
		if e.IsDir() {
			files[e.Name()] = "dir"
			continue
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		files[e.Name()] = string(b)
	}
	return files
}

// TestExport: Begin refuses a directory where an output's name is an
// input or a directory. A committed export's tables replace the last
// export's, none of which outlives it (a symlink is removed, not its
// target), and nothing else; an aborted one, or one whose commit fails
// at any move, leaves the last export as it was, and no staging
// directory behind.
func TestExport(t *testing.T) {
	last := map[string]string{
		FlowsFile: "old flows", PacketsFile(3, 0): "old packets 3", "notes.txt": "notes",
		"packets-1-0.parquet": "not ours",
	}
	written := map[string]string{FlowsFile: "new flows", PacketsFile(0, 0): "new packets 0", PauseFile: "new pause"}
	cases := []struct {
		name     string
		end      func(e *Export) error
		failOn   string // the name whose rename fails
		want     map[string]string
		wantErr  string
		keepLast bool
	}{
		{name: "commit", end: (*Export).Commit, want: map[string]string{
			FlowsFile: "new flows", PacketsFile(0, 0): "new packets 0", PauseFile: "new pause", "notes.txt": "notes", "packets-1-0.parquet": "not ours"}},
		{name: "abort", end: func(e *Export) error { e.Abort(); return nil }, keepLast: true},
		{name: "an old table cannot be moved aside", end: (*Export).Commit, failOn: PacketsFile(3, 0), wantErr: "left as it was", keepLast: true},
		{name: "a new table cannot be moved in", end: (*Export).Commit, failOn: PauseFile, wantErr: "left as it was", keepLast: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "x")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			for name, content := range last {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
			}
			target := filepath.Join(base, "target")
			require.NoError(t, os.WriteFile(target, []byte("precious"), 0o644))
			require.NoError(t, os.Symlink(target, filepath.Join(dir, ConnectionsFile)))
			before := dirFiles(t, dir)

			e, err := Begin(dir, []string{target, filepath.Join(dir, "notes.txt")})
			require.NoError(t, err)
			for name, content := range written {
				require.NoError(t, os.WriteFile(filepath.Join(e.Dir(), name), []byte(content), 0o644))
			}
			if tc.failOn != "" {
				e.rename = func(from, to string) error {
					if filepath.Base(from) == tc.failOn {
						return syscall.EPERM
					}
					return os.Rename(from, to)
				}
			}
			err = tc.end(e)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.ErrorIs(t, err, syscall.EPERM)
			} else {
				require.NoError(t, err)
			}
			want := tc.want
			if tc.keepLast {
				want = before
			}
			assert.Equal(t, want, dirFiles(t, dir))
			b, err := os.ReadFile(target)
			require.NoError(t, err)
			assert.Equal(t, "precious", string(b))
		})
	}
}

// TestBeginRefuses: an entry of an output's name that is an input (a
// commit would remove it) or a directory stops the export before it
// begins, and nothing of dir is touched.
func TestBeginRefuses(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, PacketsFile(3, 0))
	require.NoError(t, os.WriteFile(input, []byte("capture"), 0o644))
	_, err := Begin(dir, []string{input})
	require.ErrorContains(t, err, "is an input")

	dir2 := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir2, FlowsFile), 0o755))
	_, err = Begin(dir2, nil)
	require.ErrorContains(t, err, "is a directory")

	assert.Equal(t, map[string]string{PacketsFile(3, 0): "capture"}, dirFiles(t, dir))
	assert.Equal(t, map[string]string{FlowsFile: "dir"}, dirFiles(t, dir2))
}

// TestExportRollbackFails: when a commit fails and a table of the last
// export cannot be moved back either, the error says where that table is,
// and it is there, never removed.
func TestExportRollbackFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, FlowsFile), []byte("old flows"), 0o644))
	e, err := Begin(dir, nil)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(e.Dir(), FlowsFile), []byte("new flows"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.Dir(), PauseFile), []byte("new pause"), 0o644))
	e.rename = func(from, to string) error {
		switch {
		case filepath.Base(from) == PauseFile: // moving the new pause table in
			return syscall.EIO
		case filepath.Base(from) == FlowsFile && filepath.Dir(to) == dir && !strings.HasPrefix(filepath.Base(filepath.Dir(from)), stagePrefix+"old-"):
			return os.Rename(from, to) // the new flows table in
		case filepath.Base(from) == FlowsFile && filepath.Dir(to) == dir: // the old one back
			return syscall.EROFS
		}
		return os.Rename(from, to)
	}
	err = e.Commit()
	require.ErrorIs(t, err, syscall.EIO)
	require.ErrorIs(t, err, syscall.EROFS)
	require.ErrorContains(t, err, "moving the last export back failed")
	var kept []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, rerr := os.ReadFile(path); rerr == nil && string(b) == "old flows" {
				kept = append(kept, path)
			}
		}
		return err
	}))
	require.Len(t, kept, 1, "the last export's flows table is kept")
	assert.Contains(t, err.Error(), filepath.Dir(kept[0]))
}
