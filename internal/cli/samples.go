package cli

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/points"
)

// sampleOptions are those of an Analyzer that only decodes the packets
// a points.Sampler samples: it tracks one flow and one connection,
// outside the run's budgets, and checks no ICRC (the samples match by
// the ICRC's bytes, not by its check).
func (r *runner) sampleOptions() analyze.Options {
	return analyze.Options{RoCEPorts: r.cfg.rocePorts, DecodeRDAs: r.cfg.rdAs, NoICRC: true,
		MaxFlows: 1, MaxConnections: 1, NoSeries: true, NoMerge: true}
}

// wholeSamples samples the transmissions of every frame of each file (on
// the cores -j allows) and says whether they are capture points of one
// traffic (whyPointsWhole), files that share transmissions but are not
// (whyApartWhole, with the notes of r.apart), or neither (""): unrelated files,
// merged by time. Their first frames (piecesOf) may share none although
// they are points: a later start, or heads of CM handshakes alone.
//
// The files are only decoded (sampleOptions).
func (r *runner) wholeSamples(ctx context.Context, files []string) string {
	r.progress = startProgress(r.cfg.progress, r.stderr) // the pass reads every file: about half the run
	defer func() { r.progress.stop(); r.progress = nil }()
	est := estimateFiles(len(files), r.jobs(), 1, func(i int, smp *points.Sampler) {
		a := analyze.New(r.sampleOptions())
		// A file that cannot be read to its end is sampled to where it
		// breaks; the analysis names the error.
		cr, size, err := r.openWith(files[i], openSmall)
		if err != nil {
			return
		}
		defer cr.Close()
		_ = r.eachFrom(ctx, cr, size, r.cfg.count, func(f *frame) { smp.Add(a.Feed(f.ci, f.linkType, f.data)) })
	}, make([]*time.Duration, len(files)))
	// The samples are garbage now (a Sampler a goroutine, up to a dozen
	// megabytes each, and the hashes of every file's), which would
	// otherwise set the heap's size for the analysis (GOGC doubles the
	// live heap).
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

// heldHeads is the most files whose Samplers of their first frames
// (headSample: a thousand transmissions at most) estimateFiles holds at
// once. The Samplers of whole files, up to points.DefaultSamples
// transmissions each (a dozen megabytes), are never all held.
const heldHeads = points.MaxFiles

// estimateFiles samples n files (sample(i, s) samples file i into the
// empty Sampler s, on up to jobs goroutines at once) and estimates their
// clocks (points.EstimateClocks). More than held files are screened
// first by the hashes of their samples (points.Screen), through one
// Sampler a goroutine, and only the files that may share transmissions
// are sampled again, so that the files hold no more than their samples'
// hashes whatever their number.
func estimateFiles(n, jobs, held int, sample func(i int, s *points.Sampler), overrides []*time.Duration) points.Estimate {
	jobs = max(jobs, 1)
	samplers := make([]*points.Sampler, n)
	var screen *points.Screen // while screening: the Screen the Samplers go to
	each := func(files []int) {
		free := make(chan *points.Sampler, jobs) // screening: the goroutines' Samplers
		for range jobs {
			free <- points.NewSampler(0)
		}
		var wg sync.WaitGroup
		for _, i := range files {
			s := <-free
			wg.Go(func() {
				if screen == nil {
					sample(i, s)
					samplers[i] = s
					free <- points.NewSampler(0)
					return
				}
				s.Reset()
				sample(i, s)
				screen.Add(i, s)
				free <- s
			})
		}
		wg.Wait()
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	if n <= held {
		each(all)
		return points.EstimateClocks(samplers, overrides)
	}
	scr := points.NewScreen(n)
	screen = scr
	each(all)
	screen = nil
	each(scr.Candidates())
	return scr.Estimate(samplers, overrides)
}
