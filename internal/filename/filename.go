// Package filename writes the names of capture files, which on Linux may
// hold any byte but NUL and '/', for the two kinds of output: Text for
// people (the text report, -P and -V, stderr), where a name must not
// move the cursor, recolour the terminal or forge a line, and UTF8 for
// the structured outputs (JSON, CSV, Parquet), whose text must be valid
// UTF-8. A name is kept as the operating system gave it until it is
// written.
package filename

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text is name quoted as ls -b quotes it: a backslash is doubled, the C
// escapes stand for their control characters (\a \b \t \n \v \f \r), the
// other ASCII control characters are \ and three octal digits (ESC is
// \033, DEL \177), a byte that is not part of valid UTF-8 is \x and two
// hex digits, and any other character that is not printable (the C1
// controls, bidirectional overrides, spaces but ' ') is \u and four hex
// digits, or \U and eight. Anything else, ' ' included, is itself: a
// plain name is unchanged.
func Text(name string) string {
	i := strings.IndexFunc(name, needsQuote)
	if i < 0 {
		return name
	}
	var b strings.Builder
	b.Grow(len(name) + 8)
	b.WriteString(name[:i])
	for rest := name[i:]; rest != ""; {
		r, size := utf8.DecodeRuneInString(rest)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, rest[0])
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x80 && cEscape[r] != 0:
			b.WriteByte('\\')
			b.WriteByte(cEscape[r])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\%03o`, r)
		case !unicode.IsPrint(r):
			if r <= 0xffff {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			b.WriteString(rest[:size])
		}
		rest = rest[size:]
	}
	return b.String()
}

// cEscape is the letter of each control character's C escape.
var cEscape = [0x80]byte{'\a': 'a', '\b': 'b', '\t': 't', '\n': 'n', '\v': 'v', '\f': 'f', '\r': 'r'}

// needsQuote says whether Text writes r other than as itself (an invalid
// byte ranges as utf8.RuneError, which a name may also hold as itself:
// Text then copies it).
func needsQuote(r rune) bool {
	return r == '\\' || r == utf8.RuneError || !unicode.IsPrint(r)
}

// UTF8 is name as valid UTF-8: each byte that is not part of valid UTF-8
// becomes U+FFFD, as encoding/json writes a string, so that every
// structured output names a file alike.
func UTF8(name string) string {
	if utf8.ValidString(name) {
		return name
	}
	var b strings.Builder
	b.Grow(len(name) + 8)
	for rest := name; rest != ""; {
		r, size := utf8.DecodeRuneInString(rest)
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(rest[:size])
		}
		rest = rest[size:]
	}
	return b.String()
}
