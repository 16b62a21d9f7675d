package cli

import (
	"errors"
	"flag"
	"strings"
	"testing"
)

// FuzzParseArgs: whatever the command line, parsing it never panics and
// either gives a configuration and at least one capture, or says why as a
// usage error (exit 2), help or the version: no other error escapes to
// the user unexplained. Arguments are the input split at NUL bytes.
func FuzzParseArgs(f *testing.F) {
	for _, seed := range []string{
		"a.pcap",
		"-j\x002\x00-o\x00json\x00a.pcap\x00b.pcap",
		"--clock-offset\x00b.pcap=1ms\x00a.pcap\x00b.pcap",
		"--clock-offset\x00=\x00a.pcap",
		"--qp\x000x1000000\x00a.pcap",
		"--flow\x0010.0.0.1,10.0.0.2,0x11\x00a.pcap",
		"-P\x00-o\x00parquet\x00a.pcap",
		"--max-flows\x00-1\x00a.pcap",
		"-c\x0018446744073709551615\x00a.pcap",
		"--\x00-weird.pcap",
		"-\x00-",
		"--help",
		"--version",
		"-Vx\x00a.pcap",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\x00")
		cfg, files, err := parseArgs(args)
		switch {
		case err == nil:
			if cfg == nil || len(files) == 0 {
				t.Fatalf("%q: no error, but no configuration or capture", args)
			}
		case errors.Is(err, errUsage), errors.Is(err, flag.ErrHelp), errors.Is(err, errVersion):
		default:
			t.Fatalf("%q: %v is not a usage error", args, err)
		}
	})
}
