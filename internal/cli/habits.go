package cli

import (
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
)

// What tshark and tcpdump users type: combined short flags (-PV, -c5,
// -ojson), -r FILE, --version; flags with another meaning here are
// explained, not just refused.

// shortBool and shortValue are the one-letter flags that can be combined
// in one word: booleans in any order, then at most one taking a value
// (the rest of the word, or the next argument).
const (
	shortBool  = "PVxn"
	shortValue = "cor"
)

// foreignFlags explains the flags of tshark and tcpdump that roce-dissect
// does not have.
var foreignFlags = map[string]string{
	"Y": "-Y (a Wireshark display filter) is not supported: select with --qp N, --flow SRC,DST,QP or -c N, or filter with tshark -Y … -w - | roce-dissect -",
	"R": "-R (a read filter) is not supported: select with --qp N or --flow SRC,DST,QP, or filter with tshark -R … -w - | roce-dissect -",
	"f": "-f (a capture filter) is not supported: roce-dissect reads captures; capture with tcpdump -i IF -w - 'udp port 4791' | roce-dissect -",
	"i": "-i (capture from an interface) is not supported: roce-dissect reads captures; pipe one in: tcpdump -i IF -w - udp port 4791 | roce-dissect -",
	"w": "-w (write a capture) is not supported: roce-dissect reads captures and writes reports (-o json, -o csv, --plot)",
	"T": "-T is tshark's output format: use -o json or -o csv (with -P: one object or row per packet)",
	"e": "-e (tshark fields) is not supported: use -P -o json or -P -o csv, which hold every decoded field",
	"O": "-O is not supported: -V prints every header",
	"2": "-2 (two-pass analysis) is not needed: the report is built from the whole capture",
}

// expandArgs splits combined short flags (-PV → -P -V, -c5 → -c 5,
// -PVc5 → -P -V -c 5) and turns tshark/tcpdump flags that mean something
// else here into an explaining error. Words that are flags of their own
// (-qp, -flow…: Go's flag package takes one dash too), -k=v forms and
// everything after "--" are left as they are.
func expandArgs(args []string, isFlag func(string) bool) ([]string, error) {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		if len(a) < 2 || a[0] != '-' || a[1] == '-' || a == "-" || strings.Contains(a, "=") {
			out = append(out, a)
			continue
		}
		word := a[1:]
		if isFlag(word) {
			out = append(out, a)
			continue
		}
		if msg, ok := foreignFlags[word[:1]]; ok && !strings.ContainsRune(shortBool+shortValue, rune(word[0])) {
			return nil, fmt.Errorf("%w: %s", errUsage, msg)
		}
		var split []string
		ok := true
		for j := 0; j < len(word); j++ {
			c := word[j]
			switch {
			case strings.IndexByte(shortBool, c) >= 0:
				split = append(split, "-"+string(c))
				continue
			case strings.IndexByte(shortValue, c) >= 0:
				split = append(split, "-"+string(c))
				if j+1 < len(word) {
					split = append(split, word[j+1:])
				}
				j = len(word)
				continue
			}
			if msg, found := foreignFlags[string(c)]; found {
				return nil, fmt.Errorf("%w: %s", errUsage, msg)
			}
			ok = false
			break
		}
		if !ok {
			out = append(out, a) // the flag package says it is unknown
			continue
		}
		out = append(out, split...)
	}
	return out, nil
}

// flagExpects says what each flag with a value wants, for its errors.
var flagExpects = map[string]string{
	"interval":  "a duration such as 1ms, 250us or 2s",
	"c":         "a number of frames such as 100",
	"max-flows": "a number of flows such as 100000",
	"qp":        "a QP number, decimal or 0x hex",
}

var invalidValue = regexp.MustCompile(`^invalid value "(.*)" for flag -([a-z-]+): `)

// explainFlagError rewrites the flag package's "invalid value … parse
// error" into what the flag expected.
func explainFlagError(err error) error {
	m := invalidValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	name := "--" + m[2]
	if len(m[2]) == 1 {
		name = "-" + m[2]
	}
	if want, ok := flagExpects[m[2]]; ok {
		return fmt.Errorf("%s %q: want %s", name, m[1], want)
	}
	return fmt.Errorf("%s %q: %s", name, m[1], strings.TrimPrefix(err.Error(), m[0]))
}

// version is the module's version as the build recorded it: a release
// tag for go install …@vX.Y.Z, "(devel)" with the VCS revision for a
// build from a checkout.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += "+dirty"
		}
	}
	return fmt.Sprintf("roce-dissect %s (%s)", v, bi.GoVersion)
}

// openError is a file that could not be opened as a capture: missing, a
// directory, not a capture. It has no report.
type openError struct{ err error }

func (e *openError) Error() string { return e.err.Error() }
func (e *openError) Unwrap() error { return e.err }

func isOpenError(err error) bool {
	var oe *openError
	return errors.As(err, &oe)
}
