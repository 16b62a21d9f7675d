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
	return reportOf(tb, r, opts)
}

// ReportOf is Report of a capture read from in (a generated one).
func ReportOf(tb testing.TB, in io.Reader, opts analyze.Options) *analyze.Report {
	tb.Helper()
	r, err := capture.NewReader(in)
	if err != nil {
		tb.Fatal(err)
	}
	return reportOf(tb, r, opts)
}

// reportOf feeds every frame of r to one Analyzer with opts.
func reportOf(tb testing.TB, r *capture.Reader, opts analyze.Options) *analyze.Report {
	tb.Helper()
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
