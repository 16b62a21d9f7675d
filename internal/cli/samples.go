package cli

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/points"
)

// wholeSamples samples the transmissions of every frame of each file (on
// the cores -j allows) and says whether they are capture points of one
// traffic (whyPointsWhole), files that share transmissions but are not
// (whyApartWhole, with the notes of r.apart), or neither (""): unrelated files,
// merged by time. Their first frames (piecesOf) may share none although
// they are points: a later start, or heads of CM handshakes alone.
//
// The files are only decoded: the Analyzer that decodes them tracks one
// flow and one connection, outside the run's budgets, and checks no ICRC
// (the samples match by the ICRC's bytes, not by its check).
func (r *runner) wholeSamples(ctx context.Context, files []string) string {
	r.progress = startProgress(r.cfg.progress, r.stderr) // the pass reads every file: about half the run
	defer func() { r.progress.stop(); r.progress = nil }()
	samplers := make([]*points.Sampler, len(files))
	sem := make(chan struct{}, r.jobs())
	var wg sync.WaitGroup
	for i, name := range files {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			a := analyze.New(analyze.Options{RoCEPorts: r.cfg.rocePorts, DecodeRDAs: r.cfg.rdAs, NoICRC: true,
				MaxFlows: 1, MaxConnections: 1, NoSeries: true, NoMerge: true})
			smp := points.NewSampler(0)
			// A file that cannot be read to its end is sampled to where it
			// breaks; the analysis names the error.
			_ = r.each(ctx, name, func(f *frame) { smp.Add(a.Feed(f.ci, f.linkType, f.data)) })
			samplers[i] = smp
		})
	}
	wg.Wait()
	est := points.EstimateClocks(samplers, make([]*time.Duration, len(files)))
	// The samples are garbage now, tens of megabytes that would otherwise
	// set the heap's size for the analysis (GOGC doubles the live heap).
	samplers = nil
	runtime.GC()
	if len(est.Groups) > 0 {
		return whyPointsWhole
	}
	if r.noteApart(est, files) {
		return whyApartWhole
	}
	return ""
}

// whyPointsWhole and whyApartWhole are wholeSamples' reasons, as
// whyPoints and whyApart are piecesOf's from the files' first frames.
const (
	whyPointsWhole = "their packets share transmissions"
	whyApartWhole  = "their packets share transmissions, but they are not capture points of one traffic"
)
