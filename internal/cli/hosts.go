package cli

import (
	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/report"
)

// hostsOf is the per-host summary of a run (report.Hosts): the addresses
// of merged, the report of them all, each transmission counted once, and
// the host each file was taken on, by its own report's flows (a capture
// point's file, as it saw them alone).
func hostsOf(results []fileResult, merged *analyze.Report) *report.Hosts {
	all := report.TallyFlows(merged.Flows)
	if len(results) == 1 {
		return all.Hosts(fileName(results[0].name))
	}
	h := &report.Hosts{Addresses: all.Addresses(), Files: make([]report.HostFile, len(results))}
	for i, res := range results {
		h.Files[i] = report.TallyFlows(res.report.Flows).File(fileName(res.name))
	}
	return h
}
