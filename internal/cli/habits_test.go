package cli_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHabits: what tshark and tcpdump users type works, or is explained.
func TestHabits(t *testing.T) {
	file := "../../testdata/ecn_cnp.pcap"
	_, want5, _ := run(t, nil, "-P", "-c", "5", "--color=never", file)
	_, wantV, _ := run(t, nil, "-P", "-V", "-x", "-c", "2", "--color=never", file)
	require.Len(t, strings.Split(strings.TrimSpace(want5), "\n"), 5)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-c5", "-P", "--color=never", file}, want5},
		{[]string{"-Pc5", "--color=never", file}, want5},
		{[]string{"-Pc", "5", "--color=never", file}, want5},
		{[]string{"-P", "-c", "5", "--color=never", "-r", file}, want5},
		{[]string{"-n", "-r", file, "-P", "-c5", "--color=never"}, want5},
		{[]string{"-PVx", "-c2", "--color=never", file}, wantV},
		{[]string{"-xVP", "-c", "2", "--color=never", file}, wantV},
	} {
		code, out, errs := run(t, nil, tc.args...)
		require.Equal(t, 0, code, "%v: %s", tc.args, errs)
		assert.Equal(t, tc.want, out, "%v", tc.args)
	}
	code, out, _ := run(t, nil, "-ojson", "-c2", file)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, `"frames": 2,`)
	code, out, _ = run(t, nil, "-qp", "0x5669", "-P", "--color=never", file)
	assert.Equal(t, 0, code, "Go's one-dash long flags still work")
	assert.NotEmpty(t, out)

	code, out, _ = run(t, nil, "--version")
	assert.Equal(t, 0, code)
	assert.Regexp(t, `^roce-dissect \S+.* \(go1\.\d+`, out)
}

// TestFlagErrorsExplain: a bad value says what was expected; a tshark or
// tcpdump flag with another meaning says what to use instead.
func TestFlagErrorsExplain(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--interval", "5", "x.pcap"}, `roce-dissect: --interval "5": want a duration such as 1ms, 250us or 2s`},
		{[]string{"-c", "x", "x.pcap"}, `roce-dissect: -c "x": want a number of frames such as 100`},
		{[]string{"--max-flows", "many", "x.pcap"}, `roce-dissect: --max-flows "many": want a number of flows such as 100000`},
		{[]string{"-Y", "infiniband", "x.pcap"}, "roce-dissect: -Y (a Wireshark display filter) is not supported: select with --qp N, --flow SRC,DST,QP or -c N"},
		{[]string{"-PY", "x", "x.pcap"}, "roce-dissect: -Y (a Wireshark display filter) is not supported"},
		{[]string{"-T", "json", "x.pcap"}, "-T is tshark's output format: use -o json or -o csv"},
		{[]string{"-i", "eth0"}, "tcpdump -i IF -w - udp port 4791 | roce-dissect -"},
		{[]string{"-w", "out.pcap", "x.pcap"}, "-w (write a capture) is not supported"},
		{[]string{"-e", "bth.psn", "x.pcap"}, "use -P -o json or -P -o csv"},
	} {
		code, _, errs := run(t, nil, tc.args...)
		assert.Equal(t, 2, code, "%v", tc.args)
		assert.Contains(t, errs, tc.want, "%v", tc.args)
	}
}

// TestNoReportForUnreadableFiles: a missing file, a directory or a file
// that is not a capture prints its error and no (empty) report; with
// other files, those are reported.
func TestNoReportForUnreadableFiles(t *testing.T) {
	for _, tc := range []struct {
		file, err string
	}{
		{"../../testdata/missing.pcap", "roce-dissect: ../../testdata/missing.pcap: capture: open ../../testdata/missing.pcap: no such file or directory\n"},
		{"../../testdata", "roce-dissect: ../../testdata: is a directory, not a capture file\n"},
		{"cli.go", "roce-dissect: cli.go: capture: not a pcap or pcapng file (magic 0x2f2f2050)\n"},
	} {
		for _, args := range [][]string{{}, {"-o", "json"}, {"-o", "csv"}, {"-P"}, {"-V"}} {
			code, out, errs := run(t, nil, append(args, tc.file)...)
			assert.Equal(t, 1, code, "%s %v", tc.file, args)
			assert.Empty(t, out, "%s %v: no report", tc.file, args)
			assert.Equal(t, tc.err, errs, "%s %v", tc.file, args)
		}
	}
	code, out, errs := run(t, nil, "--color=never", "../../testdata/missing.pcap", "../../testdata/ecn_cnp.pcap")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "missing.pcap")
	assert.True(t, strings.HasPrefix(out, "Capture ../../testdata/ecn_cnp.pcap\n"), out)
	assert.NotContains(t, out, "missing.pcap")
}

// TestWriteErrorDevFull: > /dev/full is exit status 1 in every view, -x
// and --plot included (the real device, where the OS has one).
func TestWriteErrorDevFull(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	bin := t.TempDir() + "/rd"
	build := exec.Command("go", "build", "-o", bin, "../../cmd/roce-dissect")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	for _, args := range []string{"", "-P", "-V", "-x", "-PVx", "-o json", "-o csv", "-P -o json", "-P -o csv", "--plot " + t.TempDir() + "/p.png"} {
		cmd := exec.Command("sh", "-c", bin+" "+args+" ../../testdata/ecn_cnp.pcap > /dev/full")
		errOut, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%q", args)
		assert.Equal(t, 1, ee.ExitCode(), "%q", args)
		assert.Contains(t, string(errOut), "roce-dissect: writing output: write /dev/stdout: no space left on device", "%q", args)
	}
}
