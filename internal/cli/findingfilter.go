package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// setFindingFilters reads --findings, --severity and --kind; a kind not
// in analyze.Kinds is a usage error.
func (cfg *config) setFindingFilters(findings, severity, kinds string) error {
	switch findings {
	case "summary":
	case "all":
		cfg.allFindings = true
	default:
		return fmt.Errorf("%w: --findings %q: want summary or all", errUsage, findings)
	}
	switch severity {
	case "":
	case "error":
		cfg.minSeverity = analyze.SeverityError
	case "warning":
		cfg.minSeverity = analyze.SeverityWarning
	case "info":
		cfg.minSeverity = analyze.SeverityInfo
	default:
		return fmt.Errorf("%w: --severity %q: want error, warning or info", errUsage, severity)
	}
	if severity != "" {
		cfg.findingFilter = "--severity " + severity
	}
	if kinds == "" {
		return nil
	}
	cfg.findingFilter = strings.TrimSpace(cfg.findingFilter + " --kind " + kinds)
	var known []string
	for _, k := range analyze.Kinds() {
		if !slices.Contains(known, string(k.Kind)) {
			known = append(known, string(k.Kind))
		}
	}
	cfg.kinds = map[analyze.Kind]bool{}
	for k := range strings.SplitSeq(kinds, ",") {
		k = strings.TrimSpace(k)
		if !slices.Contains(known, k) {
			slices.Sort(known)
			return fmt.Errorf("%w: --kind %q: want kinds of %s", errUsage, k, strings.Join(known, ", "))
		}
		cfg.kinds[analyze.Kind(k)] = true
	}
	return nil
}

// filtersFindings says whether --severity or --kind drop findings.
func (cfg *config) filtersFindings() bool {
	return cfg.minSeverity != 0 || cfg.kinds != nil
}

// keepsFinding applies --severity and --kind to a finding.
func (cfg *config) keepsFinding(fd *analyze.Finding) bool {
	if cfg.minSeverity != 0 && fd.Severity > cfg.minSeverity {
		return false
	}
	return cfg.kinds == nil || cfg.kinds[fd.Kind]
}

// frameFindings is the findings of the frame just fed (-P, -V: the
// analyzer's FrameFindings) that --severity and --kind keep.
func (r *runner) frameFindings(a *analyze.Analyzer) []analyze.Finding {
	fs := a.FrameFindings()
	if !r.cfg.filtersFindings() {
		return fs
	}
	var out []analyze.Finding
	for i := range fs {
		if r.cfg.keepsFinding(&fs[i]) {
			out = append(out, fs[i])
		}
	}
	return out
}

// marked says whether a -P line ends in " !": the frame has findings, of
// those --severity and --kind keep when they are given (then only the
// findings known when the frame is read: Analyzer.FrameFindings).
func (r *runner) marked(p *analyze.Packet, a *analyze.Analyzer) bool {
	if !r.cfg.filtersFindings() {
		return p.Findings > 0
	}
	return len(r.frameFindings(a)) > 0
}
