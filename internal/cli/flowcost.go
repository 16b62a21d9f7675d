package cli

// needsSeries says whether the run shows the flows' throughput series:
// the JSON report, --plot and --trace do; the text and CSV reports, the
// Parquet export and --html (whose throughput charts come from its
// Collectors) do not, and their analyzers keep none (a flow then costs
// no memory per interval).
func (r *runner) needsSeries() bool {
	return r.cfg.output == "json" || r.cfg.plot != "" || r.cfg.trace != ""
}
