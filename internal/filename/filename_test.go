package filename

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// names are file names a capture may have, and how Text quotes each
// (written by hand after ls -b's escape style).
var names = []struct {
	name, raw, text string
}{
	{"plain", "capture 1.pcap", "capture 1.pcap"},
	{"utf-8", "café-☃.pcap", "café-☃.pcap"},
	{"newline and forged line", "a.pcap\n  error: forged", `a.pcap\n  error: forged`},
	{"C escapes", "\a\b\t\n\v\f\r", `\a\b\t\n\v\f\r`},
	{"ESC sequences", "\x1b[31mred\x1b]0;title\x07", `\033[31mred\033]0;title\a`},
	{"other controls", "\x01\x1f\x7f", `\001\037\177`},
	{"backslash", `a\nb`, `a\\nb`},
	{"invalid bytes", "\xff\xfe.pcap", `\xff\xfe.pcap`},
	{"U+FFFD itself", "\uFFFD.pcap", "\uFFFD.pcap"},
	{"cut UTF-8", "é"[:1] + ".pcap", `\xc3.pcap`},
	{"C1 CSI", "\u009b31m", `\u009b31m`},
	{"bidi override", "a\u202egnp.pcap", `a\u202egnp.pcap`},
	{"tag character", "a\U000E0041", `a\U000e0041`},
	{"surrogate encoded", "\xed\xa0\x80", `\xed\xa0\x80`},
	{"empty", "", ""},
}

func TestText(t *testing.T) {
	for _, tc := range names {
		t.Run(tc.name, func(t *testing.T) {
			got := Text(tc.raw)
			assert.Equal(t, tc.text, got)
			assert.True(t, utf8.ValidString(got))
			assert.Equal(t, -1, strings.IndexFunc(got, func(r rune) bool { return r < 0x20 || r == 0x7f }), "a control character left")
		})
	}
}

// TestTextAsLs checks the control characters and backslashes against GNU
// ls -b (--quoting-style=escape), which writes invalid bytes in octal
// and a space as "\ ", where Text writes \xNN and the space.
func TestTextAsLs(t *testing.T) {
	ls, err := exec.LookPath("ls")
	require.NoError(t, err)
	for _, tc := range names {
		ascii := !strings.ContainsFunc(tc.raw, func(r rune) bool { return r >= 0x80 })
		quoted := strings.ContainsFunc(tc.raw, func(r rune) bool { return r < ' ' || r == 0x7f || r == '\\' })
		if !ascii || !quoted || strings.ContainsRune(tc.raw, ' ') {
			continue // ls's locale decides how it writes the rest; it writes a space "\ "
		}
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(ls, "-b", "-d", "--", tc.raw)
			cmd.Dir = t.TempDir()
			cmd.Env = []string{"LC_ALL=C"}
			require.NoError(t, writeEmpty(cmd.Dir, tc.raw))
			out, err := cmd.Output()
			require.NoError(t, err)
			assert.Equal(t, string(out), tc.text+"\n")
		})
	}
}

// TestUTF8 checks UTF8 against encoding/json, which every structured
// output agrees with.
func TestUTF8(t *testing.T) {
	for _, tc := range names {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.raw)
			require.NoError(t, err)
			var want string
			require.NoError(t, json.Unmarshal(b, &want))
			got := UTF8(tc.raw)
			assert.Equal(t, want, got)
			assert.True(t, utf8.ValidString(got))
		})
	}
	assert.Equal(t, "\uFFFD\uFFFD.pcap", UTF8("\xff\xfe.pcap"), "a U+FFFD for each byte, as JSON")
}

// writeEmpty creates the empty file name in dir.
func writeEmpty(dir, name string) error {
	return os.WriteFile(filepath.Join(dir, name), nil, 0o644)
}
