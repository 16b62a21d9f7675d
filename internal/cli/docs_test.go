package cli_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/synth/ncclsynth"
)

// The docs' examples are tests. A fenced code block of README.md or
// docs/*.md that holds a line beginning with "$ " is an example block:
//
//   - each "$ " line is a command (a line ending in " \" goes on on the
//     next line), and the lines after it, up to the next "$ " line or the
//     block's end, are its output: what it writes to standard error, then
//     what it writes to standard output, byte for byte;
//   - a line holding only "…" (indented or not) stands for one or more
//     lines left out; nothing else is abbreviated;
//   - a command exits 0 unless it ends with `; echo "exit $?"`, which
//     shows its exit status on a last line, `exit N`, as a shell does.
//
// The commands are roce-dissect and roce-synth, run in-process (roce-dissect
// with --color=never first, so that a --color flag of the example wins),
// gzip -c FILE and head -c N FILE, with `< FILE` (standard input), `> FILE`
// and `| cat -v`. They run in a directory of their own per doc file, which
// holds the repository's testdata/ and what the doc's earlier commands
// wrote: an example reads only the captures of testdata/ and the files made
// before it, and writes nowhere else.

// docFiles are the docs whose examples run: README.md and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	return append([]string{"../../README.md"}, docs...)
}

// docExample is one command of a doc and the output the doc shows for it.
type docExample struct {
	line int      // the line of its "$ "
	out  int      // the index of its output's first line in the doc
	cmd  string   // the command, continuation lines joined
	want []string // the output's lines; "…" lines elide
}

// docExamples returns the examples of a doc, in order.
func docExamples(doc string) []docExample {
	var out []docExample
	lines := strings.Split(doc, "\n")
	var block []int // line indexes of the open block's body
	inBlock := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			if inBlock {
				out = append(out, blockExamples(lines, block)...)
			}
			inBlock, block = !inBlock, nil
			continue
		}
		if inBlock {
			block = append(block, i)
		}
	}
	return out
}

// blockExamples splits the body of a fenced block into its examples (none
// when no line begins with "$ ").
func blockExamples(lines []string, block []int) []docExample {
	var out []docExample
	for k := 0; k < len(block); k++ {
		l := lines[block[k]]
		if !strings.HasPrefix(l, "$ ") {
			if len(out) > 0 {
				ex := &out[len(out)-1]
				ex.want = append(ex.want, l)
			}
			continue
		}
		ex := docExample{line: block[k] + 1, cmd: strings.TrimPrefix(l, "$ ")}
		for strings.HasSuffix(ex.cmd, " \\") && k+1 < len(block) {
			k++
			ex.cmd = strings.TrimSuffix(ex.cmd, "\\") + strings.TrimLeft(lines[block[k]], " ")
		}
		ex.out = block[k] + 1
		out = append(out, ex)
	}
	return out
}

// TestDocExamples runs every example of README.md and docs/*.md and
// compares its output with the doc's (see the convention above). With
// -update, an example whose output differs gets the output in the doc,
// its elisions kept where they still match.
func TestDocExamples(t *testing.T) {
	testdata, err := filepath.Abs("../../testdata")
	require.NoError(t, err)
	total := 0
	for _, path := range docFiles(t) {
		doc, err := os.ReadFile(path)
		require.NoError(t, err)
		examples := docExamples(string(doc))
		if len(examples) == 0 {
			continue
		}
		total += len(examples)
		name := strings.TrimPrefix(path, "../../")
		var fixed [][]string // by example: the output to write in the doc, nil when it matches
		t.Run(filepath.Base(path), func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.Symlink(testdata, filepath.Join(dir, "testdata")))
			t.Chdir(dir)
			fixed = make([][]string, len(examples))
			for i, ex := range examples {
				t.Run(strconv.Itoa(ex.line), func(t *testing.T) {
					got, err := runDocCommand(ex.cmd)
					require.NoError(t, err, "%s:%d: %s", name, ex.line, ex.cmd)
					if !matchElided(ex.want, got) && *update {
						fixed[i] = splitLines(elide(ex.want, got))
					} else if !matchElided(ex.want, got) {
						t.Errorf("%s:%d: `%s` prints otherwise than the doc shows (- doc, + output): update the doc, or fix the tool\n%s",
							name, ex.line, ex.cmd, lineDiff(ex.want, splitLines(elide(ex.want, got))))
					}
				})
			}
		})
		if *update {
			rewriteExamples(t, path, string(doc), examples, fixed)
		}
	}
	require.Positive(t, total, "the docs hold examples")
}

// rewriteExamples writes the doc at path with the output of each example
// that fixed holds replaced by it.
func rewriteExamples(t *testing.T, path, doc string, examples []docExample, fixed [][]string) {
	t.Helper()
	lines := strings.Split(doc, "\n")
	for i := len(examples) - 1; i >= 0; i-- {
		if fixed[i] == nil {
			continue
		}
		ex := examples[i]
		lines = slices.Concat(lines[:ex.out], fixed[i], lines[ex.out+len(ex.want):])
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644))
}

// isGap says whether a line of a doc's output is the elision marker.
func isGap(l string) bool { return strings.TrimSpace(l) == "…" }

// matchElided says whether got (lines ending in newlines) is want, each
// "…" line of want standing for one or more lines of got.
func matchElided(want []string, got string) bool {
	if got != "" && !strings.HasSuffix(got, "\n") {
		return false
	}
	lines := splitLines(got)
	// ok[i][j]: want[i:] matches lines[j:].
	ok := make([][]bool, len(want)+1)
	for i := range ok {
		ok[i] = make([]bool, len(lines)+1)
	}
	ok[len(want)][len(lines)] = true
	for i := len(want) - 1; i >= 0; i-- {
		for j := len(lines) - 1; j >= 0; j-- {
			if isGap(want[i]) {
				ok[i][j] = ok[i+1][j+1] || ok[i][j+1]
			} else {
				ok[i][j] = want[i] == lines[j] && ok[i+1][j+1]
			}
		}
	}
	return ok[0][0]
}

// elide returns got with the lines that want's "…" lines most likely stand
// for replaced by them, so that a diff against want shows what differs.
func elide(want []string, got string) string {
	lines := splitLines(got)
	var out []string
	j := 0
	for i, w := range want {
		switch {
		case j >= len(lines):
		case !isGap(w):
			out = append(out, lines[j])
			j++
		case i+1 == len(want):
			out, j = append(out, w), len(lines)
		default:
			k := j + 1
			for k < len(lines) && lines[k] != want[i+1] {
				k++
			}
			if k == len(lines) {
				k = j + 1
			}
			out, j = append(out, w), k
		}
	}
	out = append(out, lines[j:]...)
	s := strings.Join(out, "\n")
	if len(out) > 0 && strings.HasSuffix(got, "\n") {
		s += "\n"
	}
	return s
}

// lineDiff returns the lines of a and b, those only in a marked "-",
// those only in b "+", with up to three lines of context around them.
func lineDiff(a, b []string) string {
	// lcs[i][j]: the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var lines []string
	for i, j := 0, 0; i < len(a) || j < len(b); {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			lines = append(lines, "  "+a[i])
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			lines = append(lines, "+ "+b[j])
			j++
		default:
			lines = append(lines, "- "+a[i])
			i++
		}
	}
	var out strings.Builder
	skipped := false
	for k, l := range lines {
		near := false
		for d := max(0, k-3); d <= min(len(lines)-1, k+3); d++ {
			near = near || !strings.HasPrefix(lines[d], "  ")
		}
		if !near {
			if !skipped {
				out.WriteString("  (…)\n")
			}
			skipped = true
			continue
		}
		skipped = false
		out.WriteString(l + "\n")
	}
	return out.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// docCommand is a parsed example command.
type docCommand struct {
	args          []string // the program and its arguments
	stdin, stdout string   // < FILE and > FILE
	catV          bool     // | cat -v
	echoExit      bool     // ; echo "exit $?"
}

// runDocCommand runs an example command in the working directory and
// returns what it shows: its standard error, then its standard output,
// then "exit N" when asked for. A command that exits other than 0 without
// showing it is an error.
func runDocCommand(line string) (string, error) {
	c, err := parseDocCommand(line)
	if err != nil {
		return "", err
	}
	var stdin []byte
	if c.stdin != "" {
		if stdin, err = os.ReadFile(c.stdin); err != nil {
			return "", err
		}
	}
	var stdout, stderr bytes.Buffer
	code, err := runDocProgram(c.args, stdin, &stdout, &stderr)
	if err != nil {
		return "", err
	}
	if c.stdout != "" {
		if err := os.WriteFile(c.stdout, stdout.Bytes(), 0o644); err != nil {
			return "", err
		}
		stdout.Reset()
	}
	out := stdout.String()
	if c.catV {
		out = catV(out)
	}
	shown := stderr.String() + out
	if c.echoExit {
		return shown + fmt.Sprintf("exit %d\n", code), nil
	}
	if code != 0 {
		return "", fmt.Errorf("exit status %d, which the doc does not show (end the command with `; echo \"exit $?\"`); it printed:\n%s", code, shown)
	}
	return shown, nil
}

// runDocProgram runs one of the programs the examples may use.
func runDocProgram(args []string, stdin []byte, stdout, stderr io.Writer) (int, error) {
	switch {
	case args[0] == "roce-dissect":
		return cli.RunWithStdin(context.Background(), append([]string{"--color=never"}, args[1:]...), bytes.NewReader(stdin), stdout, stderr), nil
	case args[0] == "roce-synth" && len(args) > 1 && args[1] == "nccl": // as cmd/roce-synth dispatches it
		return ncclsynth.Run(args[2:], stdout, stderr), nil
	case args[0] == "roce-synth":
		return synth.Run(args[1:], stdout, stderr), nil
	case len(args) == 3 && args[0] == "gzip" && args[1] == "-c":
		data, err := os.ReadFile(args[2])
		if err != nil {
			return 0, err
		}
		zw := gzip.NewWriter(stdout)
		if _, err := zw.Write(data); err != nil {
			return 0, err
		}
		return 0, zw.Close()
	case len(args) == 4 && args[0] == "head" && args[1] == "-c":
		n, err := strconv.Atoi(args[2])
		if err != nil {
			return 0, err
		}
		data, err := os.ReadFile(args[3])
		if err != nil {
			return 0, err
		}
		_, err = stdout.Write(data[:min(n, len(data))])
		return 0, err
	}
	return 0, fmt.Errorf("%q: not a command the doc tests run (roce-dissect, roce-synth, gzip -c FILE, head -c N FILE)", strings.Join(args, " "))
}

// parseDocCommand parses `PROGRAM ARGS [< FILE] [> FILE] [| cat -v]
// [; echo "exit $?"]`.
func parseDocCommand(line string) (docCommand, error) {
	var c docCommand
	words, ops, err := shellWords(line)
	if err != nil {
		return c, err
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !ops[i] {
			c.args = append(c.args, w)
			continue
		}
		rest := words[i+1:]
		switch {
		case (w == "<" || w == ">") && len(rest) > 0 && !ops[i+1]:
			if w == "<" {
				c.stdin = rest[0]
			} else {
				c.stdout = rest[0]
			}
			i++
		case w == "|" && len(rest) >= 2 && rest[0] == "cat" && rest[1] == "-v" && !c.catV:
			c.catV = true
			i += 2
		case w == ";" && len(rest) == 2 && rest[0] == "echo" && rest[1] == "exit $?":
			c.echoExit = true
			i += 2
		default:
			return c, fmt.Errorf("%q: unsupported shell syntax at %q", line, w)
		}
	}
	if len(c.args) == 0 {
		return c, fmt.Errorf("%q: no command", line)
	}
	return c, nil
}

// shellWords splits a command line as a shell does, without expansions:
// words separated by blanks, '…' and "…" quoting (a backslash escapes the
// next character outside quotes, and $ ` " \ within double quotes), and
// the operators | < > ; as words of their own (ops says which words are
// operators).
func shellWords(line string) (words []string, ops []bool, err error) {
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words, ops = append(words, w.String()), append(ops, false)
		}
		w.Reset()
		inWord = false
	}
	r := bufio.NewReader(strings.NewReader(line))
	for {
		ch, _, err := r.ReadRune()
		if errors.Is(err, io.EOF) {
			break
		}
		switch {
		case ch == ' ' || ch == '\t':
			flush()
		case strings.ContainsRune("|<>;", ch):
			flush()
			words, ops = append(words, string(ch)), append(ops, true)
		case ch == '\'':
			inWord = true
			s, err := r.ReadString('\'')
			if err != nil {
				return nil, nil, fmt.Errorf("%q: unterminated quote", line)
			}
			w.WriteString(strings.TrimSuffix(s, "'"))
		case ch == '"':
			inWord = true
			for {
				q, _, err := r.ReadRune()
				if err != nil {
					return nil, nil, fmt.Errorf("%q: unterminated quote", line)
				}
				if q == '"' {
					break
				}
				if q == '\\' {
					next, _, err := r.ReadRune()
					if err != nil {
						return nil, nil, fmt.Errorf("%q: unterminated quote", line)
					}
					if !strings.ContainsRune("$`\"\\", next) {
						w.WriteRune(q) // the backslash stays before any other character
					}
					q = next
				}
				w.WriteRune(q)
			}
		case ch == '\\':
			inWord = true
			q, _, err := r.ReadRune()
			if err != nil {
				return nil, nil, fmt.Errorf("%q: ends in a backslash", line)
			}
			w.WriteRune(q)
		default:
			inWord = true
			w.WriteRune(ch)
		}
	}
	flush()
	return words, ops, nil
}

// catV shows control characters and bytes above 127 as cat -v does.
func catV(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 128 {
			b.WriteString("M-")
			c -= 128
		} else if c == '\n' || c == '\t' {
			b.WriteByte(c)
			continue
		}
		switch {
		case c < 32:
			b.WriteByte('^')
			b.WriteByte(c + 64)
		case c == 127:
			b.WriteString("^?")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// TestDocExampleConvention checks the parts of TestDocExamples: the blocks
// found, the elision marker, the commands understood and cat -v.
func TestDocExampleConvention(t *testing.T) {
	doc := "text\n```\nnot an example\n```\n```sh\n$ roce-dissect a \\\n    b\nout 1\n…\n$ roce-dissect c; echo \"exit $?\"\n```\n"
	assert.Equal(t, []docExample{
		{line: 6, out: 7, cmd: "roce-dissect a b", want: []string{"out 1", "…"}},
		{line: 10, out: 10, cmd: `roce-dissect c; echo "exit $?"`},
	}, docExamples(doc))

	for _, tc := range []struct {
		name string
		want []string
		got  string
		ok   bool
	}{
		{"equal", []string{"a", "b"}, "a\nb\n", true},
		{"no output", nil, "", true},
		{"a line more", []string{"a"}, "a\nb\n", false},
		{"a line less", []string{"a", "b"}, "a\n", false},
		{"no final newline", []string{"a"}, "a", false},
		{"gap of one", []string{"a", "…", "c"}, "a\nb\nc\n", true},
		{"gap of several", []string{"a", "  …", "d"}, "a\nb\nc\nd\n", true},
		{"a gap is not empty", []string{"a", "…", "b"}, "a\nb\n", false},
		{"leading and trailing gaps", []string{"…", "b", "…"}, "a\nb\nc\n", true},
		{"a gap does not end a line", []string{"a…"}, "ab\n", false},
		{"a later match", []string{"…", "x", "…", "x"}, "x\ny\nx\nz\nx\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.ok, matchElided(tc.want, tc.got))
		})
	}

	for _, tc := range []struct {
		line string
		want docCommand
		err  bool
	}{
		{`roce-dissect --flow "10.0.0.1 → 10.0.0.2 QP 0x5" x.pcap`, docCommand{args: []string{"roce-dissect", "--flow", "10.0.0.1 → 10.0.0.2 QP 0x5", "x.pcap"}}, false},
		{`roce-dissect - < a.gz`, docCommand{args: []string{"roce-dissect", "-"}, stdin: "a.gz"}, false},
		{`gzip -c a > 'b c'`, docCommand{args: []string{"gzip", "-c", "a"}, stdout: "b c"}, false},
		{`roce-dissect x | cat -v; echo "exit $?"`, docCommand{args: []string{"roce-dissect", "x"}, catV: true, echoExit: true}, false},
		{`roce-dissect x | head -2`, docCommand{}, true},
		{`roce-dissect x; echo done`, docCommand{}, true},
		{`roce-dissect "x`, docCommand{}, true},
	} {
		t.Run(tc.line, func(t *testing.T) {
			got, err := parseDocCommand(tc.line)
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	assert.Equal(t, "^[[32mA^[[0m M-bM-^FM-^R\tb\n", catV("\x1b[32mA\x1b[0m →\tb\n"))
}
