package analyzetest

import (
	"io"
	"testing"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
)

// Report is the analyzer's report of the capture file at path, every
// frame fed to one Analyzer with opts: the report other code under test
// is checked against. A file that cannot be read fails the test.
func Report(tb testing.TB, path string, opts analyze.Options) *analyze.Report {
	tb.Helper()
	r, err := capture.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	a := analyze.New(opts)
	for {
		ci, data, lt, err := r.Next()
		if err == io.EOF {
			return a.Finish()
		}
		if err != nil {
			tb.Fatal(err)
		}
		a.Feed(ci, lt, data)
	}
}
