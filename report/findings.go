package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/filename"
)

// FindingExamples is how many findings of a kind, a flow and a severity
// the text report's roll-up shows (TextOptions.AllFindings lists them all).
const FindingExamples = 3

// findingGroup is the findings of one kind, flow and severity, in the
// order of the report.
type findingGroup struct {
	fs []analyze.Finding
}

// groupFindings rolls the findings (worst first) up by severity, flow and
// kind, the groups in the order of their first finding.
func groupFindings(fs []analyze.Finding) []findingGroup {
	type key struct {
		sev  analyze.Severity
		flow string
		kind analyze.Kind
	}
	at := map[key]int{}
	var groups []findingGroup
	for _, f := range fs {
		k := key{f.Severity, f.FlowName(), f.Kind}
		i, ok := at[k]
		if !ok {
			i = len(groups)
			at[k] = i
			groups = append(groups, findingGroup{})
		}
		groups[i].fs = append(groups[i].fs, f)
	}
	return groups
}

// writeFindings writes the "Findings" section, worst first: by default
// each kind once per flow (and severity) with its count, first and last
// frame and FindingExamples example lines; every finding with
// TextOptions.AllFindings. The header counts every finding of the report.
func (t *textWriter) writeFindings(rep *analyze.Report) {
	w, p := t.w, t.p
	fmt.Fprintln(w)
	filter := t.o.FindingsFilter
	if len(rep.Findings) == 0 {
		switch {
		case filter != "":
			p.Green.Fprintf(w, "No findings match %s.\n", filter)
		case t.o.ReadErr != "":
			p.Yellow.Fprintln(w, "No problems found in what could be read.")
		default:
			p.Green.Fprintln(w, "No problems found.")
		}
		return
	}
	fs := append([]analyze.Finding{}, rep.Findings...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity < fs[j].Severity })
	counts := map[analyze.Severity]int{}
	for _, f := range fs {
		counts[f.Severity]++
	}
	if filter != "" {
		filter = "; " + filter
	}
	p.Bold.Fprintf(w, "Findings (worst first%s): %s, %s, %s\n", filter, Plural(counts[analyze.SeverityError], "error"), Plural(counts[analyze.SeverityWarning], "warning"), fmt.Sprintf("%d info", counts[analyze.SeverityInfo]))
	sev := func(f *analyze.Finding) string {
		return p.Severity(f.Severity).Sprintf("%-7s", strings.ToUpper(f.Severity.String()))
	}
	if t.o.AllFindings {
		for i := range fs {
			f := &fs[i]
			fmt.Fprintf(w, "  %s %s %s%s: %s\n", sev(f), findingWhere(f), f.Kind, findingFlow(f), f.Detail)
		}
	} else {
		for _, g := range groupFindings(fs) {
			f := &g.fs[0]
			if len(g.fs) == 1 {
				fmt.Fprintf(w, "  %s %s %s%s: %s\n", sev(f), findingWhere(f), f.Kind, findingFlow(f), f.Detail)
				continue
			}
			last := &g.fs[len(g.fs)-1]
			span := fmt.Sprintf("frames %d to %d", f.Frame, last.Frame)
			if f.File != "" || last.File != "" {
				span = findingWhere(f) + " to " + findingWhere(last)
			}
			fmt.Fprintf(w, "  %s %d × %s%s: %s\n", sev(f), len(g.fs), f.Kind, findingFlow(f), span)
			for i := range g.fs[:min(FindingExamples, len(g.fs))] {
				fmt.Fprintf(w, "    %s: %s\n", findingWhere(&g.fs[i]), g.fs[i].Detail)
			}
			if more := len(g.fs) - FindingExamples; more > 0 {
				fmt.Fprintf(w, "    … and %d more (--findings all lists them)\n", more)
			}
		}
	}
	if rep.FindingsDropped > 0 {
		p.Yellow.Fprintf(w, "  … and %d more findings not listed\n", rep.FindingsDropped)
	}
}

// findingWhere is "frame N", or "FILE frame N" for a finding of one of
// several files.
func findingWhere(f *analyze.Finding) string {
	where := fmt.Sprintf("frame %d", f.Frame)
	if f.File != "" {
		where = filename.Text(f.File) + " " + where
	}
	return where
}

// findingFlow is the flow a finding names after two spaces, "" for none
// (a pause storm, a CM flood).
func findingFlow(f *analyze.Finding) string {
	if flow := f.FlowName(); flow != "" {
		return "  " + flow
	}
	return ""
}
