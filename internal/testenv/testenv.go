// Package testenv holds what the tests of several packages need from the
// machine they run on. It is imported by tests only.
package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// AllowNoTshark is the environment variable that, set to "1", lets the
// tshark comparison tests skip in CI when tshark is not installed (for a
// local run of .ci/run on a machine without it).
const AllowNoTshark = "ROCE_ALLOW_NO_TSHARK"

// Tshark returns the path of tshark, the independent dissector the
// comparison tests check the decoders against. Without tshark the test
// is skipped, except in CI (the environment variable CI set, as CI
// services and .ci/run do) where it fails unless AllowNoTshark is "1":
// the comparison must never silently drop out of CI.
func Tshark(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("tshark")
	if err == nil {
		return path
	}
	if MustHaveTshark(os.Getenv) {
		t.Fatalf("tshark not installed, and CI requires the comparison with Wireshark (set %s=1 to allow skipping): %v", AllowNoTshark, err)
	}
	t.Skipf("tshark not installed: skipping the comparison with Wireshark (%v)", err)
	return ""
}

// MustHaveTshark reports whether, by the environment getenv reads, a
// missing tshark is a failure rather than a skip: CI is set (to anything
// but "" or "false") and AllowNoTshark is not "1".
func MustHaveTshark(getenv func(string) string) bool {
	ci := getenv("CI")
	return ci != "" && ci != "false" && ci != "0" && getenv(AllowNoTshark) != "1"
}

// TsharkFields runs tshark (the path Tshark gave) on the capture at path
// in its fields mode and returns one line per frame, the fields separated
// by "|", each field's occurrences as occurrence says ("f" the first, "l"
// the last, "a" all of them joined by ";"); stderr is tshark's.
func TsharkFields(tshark, path, occurrence string, fields ...string) (lines []string, stderr string, err error) {
	args := []string{"-n", "-r", path, "-T", "fields", "-E", "separator=|", "-E", "occurrence=" + occurrence, "-E", "aggregator=;"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command(tshark, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, errOut.String(), err
	}
	text := strings.TrimRight(out.String(), "\n")
	if text == "" {
		return nil, errOut.String(), nil
	}
	return strings.Split(text, "\n"), errOut.String(), nil
}
