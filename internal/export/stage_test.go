//go:build unix

package export

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stageChildEnv, when set, makes the test binary a run that begins an
// export into the directory it names, writes a table into its staging
// directory, prints the staging directory and waits to be killed.
const stageChildEnv = "ROCE_EXPORT_STAGE_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(stageChildEnv); dir != "" {
		e, err := Begin(dir, nil)
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(3)
		}
		if err := os.WriteFile(filepath.Join(e.Dir(), FlowsFile), []byte("half a table"), 0o644); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString(e.Dir() + "\n")
		select {} // until SIGKILL
	}
	os.Exit(m.Run())
}

// TestStageOfKilledRunSwept: a run killed by SIGKILL while it exported
// (no deferred removal runs) leaves its staging directory; the next
// export into that directory removes it. While the run is alive, another
// run's export leaves it alone; and the last export's tables moved aside
// by a run killed while it committed are never removed.
func TestStageOfKilledRunSwept(t *testing.T) {
	dir := t.TempDir()
	aside := filepath.Join(dir, asidePrefix+"123")
	require.NoError(t, os.Mkdir(aside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(aside, FlowsFile), []byte("last export"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(aside, stageLockName), nil, 0o600))

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stageChildEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	stage := line[:len(line)-1]
	require.FileExists(t, filepath.Join(stage, FlowsFile))

	// The child is alive: its staging directory is its own.
	e, err := Begin(dir, nil)
	require.NoError(t, err)
	e.Abort()
	require.FileExists(t, filepath.Join(stage, FlowsFile), "a live run's staging directory was removed")

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, cmd.Wait())
	require.DirExists(t, stage, "SIGKILL left the staging directory")

	e, err = Begin(dir, nil)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(e.Dir(), FlowsFile), []byte("new"), 0o644))
	require.NoError(t, e.Commit())
	assert.NoDirExists(t, stage, "the killed run's staging directory was not swept")
	assert.Equal(t, map[string]string{FlowsFile: "new", filepath.Base(aside): "dir"}, dirFiles(t, dir))
	b, err := os.ReadFile(filepath.Join(aside, FlowsFile))
	require.NoError(t, err)
	assert.Equal(t, "last export", string(b))
}
