package outfile_test

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

	"github.com/roce-dissect/roce-dissect/internal/outfile"
)

// TestWrite: a file written whole takes the path's place, whatever stood
// there (a file, a symlink to a file or to nothing, nothing), and never
// writes through a link; a write that fails leaves what stood there as it
// was. No temporary file is left either way.
func TestWrite(t *testing.T) {
	errFull := errors.New("no space left on device")
	cases := []struct {
		name     string
		existing string // "", "file", "link", "dangling"
		fail     bool
	}{
		{"new", "", false},
		{"over a file", "file", false},
		{"over a link", "link", false},
		{"over a dangling link", "dangling", false},
		{"failed, nothing there", "", true},
		{"failed, over a file", "file", true},
		{"failed, over a link", "link", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, target := filepath.Join(dir, "out.html"), filepath.Join(dir, "target")
			switch tc.existing {
			case "file":
				require.NoError(t, os.WriteFile(path, []byte("good"), 0o600))
			case "link":
				require.NoError(t, os.WriteFile(target, []byte("precious"), 0o600))
				require.NoError(t, os.Symlink(target, path))
			case "dangling":
				require.NoError(t, os.Symlink(target, path))
			}
			err := outfile.Write(path, func(w io.Writer) error {
				if _, err := w.Write(make([]byte, 10000)); err != nil {
					return err
				}
				if tc.fail {
					return errFull
				}
				_, err := io.WriteString(w, "new")
				return err
			})
			entries, rerr := os.ReadDir(dir)
			require.NoError(t, rerr)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if tc.existing == "link" {
				b, rerr := os.ReadFile(target)
				require.NoError(t, rerr)
				assert.Equal(t, "precious", string(b), "the link's target is never written")
				assert.ElementsMatch(t, []string{"out.html", "target"}, names)
			} else if tc.existing != "" || !tc.fail {
				assert.Equal(t, []string{"out.html"}, names)
			} else {
				assert.Empty(t, names)
			}
			if tc.fail {
				require.ErrorIs(t, err, errFull)
				if tc.existing == "file" {
					b, rerr := os.ReadFile(path)
					require.NoError(t, rerr)
					assert.Equal(t, "good", string(b))
				}
				return
			}
			require.NoError(t, err)
			fi, err := os.Lstat(path)
			require.NoError(t, err)
			assert.True(t, fi.Mode().IsRegular())
			want := createdMode(t, dir) // as os.Create makes a file: 0666 less the umask
			if tc.existing == "file" {
				want = 0o600 // the mode of the file replaced
			}
			assert.Equal(t, want, fi.Mode().Perm())
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Len(t, b, 10003)
			assert.Equal(t, "new", string(b[10000:]))
		})
	}
}

// TestCreateMissingDir: a path whose directory does not exist is an
// error, and nothing is created.
func TestCreateMissingDir(t *testing.T) {
	dir := t.TempDir()
	_, err := outfile.Create(filepath.Join(dir, "no", "out.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.NoDirExists(t, filepath.Join(dir, "no"))
}

// createdMode is the mode os.Create gives a new file in dir.
func createdMode(t *testing.T, dir string) os.FileMode {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "probe"))
	require.NoError(t, err)
	fi, err := f.Stat()
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Remove(f.Name()))
	return fi.Mode().Perm()
}

// TestWriteSpecial: a character device or a FIFO is written in place (no
// file to keep, and a rename would replace the device node), a directory
// is refused, and a name too long to repeat in a temporary name is
// written all the same.
func TestWriteSpecial(t *testing.T) {
	write := func(path string) error {
		return outfile.Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "page"); return err })
	}
	t.Run("character device", func(t *testing.T) {
		require.NoError(t, write(os.DevNull))
		fi, err := os.Lstat(os.DevNull)
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode()&os.ModeCharDevice, "%s is still a device", os.DevNull)
	})
	t.Run("FIFO", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "pipe.html")
		require.NoError(t, syscall.Mkfifo(fifo, 0o600))
		got := make(chan string)
		go func() {
			b, _ := os.ReadFile(fifo)
			got <- string(b)
		}()
		require.NoError(t, write(fifo))
		assert.Equal(t, "page", <-got)
		fi, err := os.Lstat(fifo)
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode()&os.ModeNamedPipe, "still a FIFO")
	})
	t.Run("directory", func(t *testing.T) {
		dir := t.TempDir()
		require.ErrorContains(t, write(dir), "is a directory, not a file")
	})
	t.Run("long name", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), strings.Repeat("n", 250)+".html")
		require.NoError(t, write(path))
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "page", string(b))
	})
}
