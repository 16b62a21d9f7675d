package analyze_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestFinishStreamIsFinish checks that the report FinishStream gives in
// parts (head, flows one at a time, findings) is Finish's report, on every
// testdata capture and on the real captures of ../shared/captures, with
// and without a flow table cap and a findings cap: the capture's totals
// the head shows before any flow is built (not_captured, flows_dropped)
// are those Finish adds up while it builds them.
func TestFinishStreamIsFinish(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.pcap")
	require.NoError(t, err)
	real, _ := filepath.Glob("../../shared/captures/*/*.pcap*")
	files = append(files, real...)
	require.NotEmpty(t, files)
	for _, file := range files {
		frames, cis, lt, err := loadFrames(file)
		if err != nil {
			continue // not a capture this loader reads (gzip, …): the CLI tests read them
		}
		for _, opts := range []analyze.Options{{}, {MaxFlows: 3, MaxFindings: 5}} {
			t.Run(filepath.Base(file), func(t *testing.T) {
				a, b := analyze.New(opts), analyze.New(opts)
				for i, fr := range frames {
					a.Feed(cis[i], lt, fr)
					b.Feed(cis[i], lt, fr)
				}
				want := a.Finish()
				s := b.FinishStream()
				head := *s.Head() // the head as a writer sees it before the flows
				require.Nil(t, head.Flows)
				require.Equal(t, len(want.Flows), s.Flows())
				var flows []analyze.Flow
				var f analyze.Flow // one for all: Next writes all of it
				for s.Next(&f) {
					flows = append(flows, f)
				}
				end := s.End()
				require.Empty(t, end.Flows)
				got := *end
				got.Capture = head.Capture
				got.Connections = head.Connections
				got.Flows = flows
				if got.Flows == nil {
					got.Flows = []analyze.Flow{}
				}
				wj, err := json.Marshal(want)
				require.NoError(t, err)
				gj, err := json.Marshal(&got)
				require.NoError(t, err)
				require.Equal(t, string(wj), string(gj))
			})
		}
	}
}

// streamed collects a stream into the report it gives.
func streamed(s *analyze.ReportStream) *analyze.Report {
	head := *s.Head()
	var flows []analyze.Flow
	var f analyze.Flow // one for all: Next writes all of it
	for s.Next(&f) {
		flows = append(flows, f)
	}
	end := s.End()
	got := *end
	got.Capture, got.Connections, got.Flows = head.Capture, head.Connections, flows
	if got.Flows == nil {
		got.Flows = []analyze.Flow{}
	}
	return &got
}

// TestCombineShardStreams checks that the stream CombineShardStreams
// gives is the report of CombineShards, on every testdata and real
// capture and on generated mixes, on 1, 2 and 3 shards, with and without
// caps; where it returns an error, CombineShards does too (the command
// then takes the reports).
func TestCombineShardStreams(t *testing.T) {
	ins := streamInputs(t)
	streams := 0
	for _, in := range ins {
		for _, opts := range []analyze.Options{{}, {MaxFlows: 3, MaxFindings: 5}, {MaxFindings: 7}} {
			for _, n := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("%s/%d", in.name, n), func(t *testing.T) {
					opts = analyze.AsShard(opts)
					if checkStreamCombines(t, in, opts, n) {
						streams++
					}
				})
			}
		}
	}
	require.Greater(t, streams, len(ins), "most combinations stream")
}

// streamInput is a capture's frames in memory.
type streamInput struct {
	name   string
	frames [][]byte
	cis    []gopacket.CaptureInfo
	lt     gplayers.LinkType
}

// streamInputs loads every testdata and real capture, and a generated
// mix of 300 QPs.
func streamInputs(t *testing.T) []streamInput {
	t.Helper()
	files, err := filepath.Glob("../testdata/*.pcap")
	require.NoError(t, err)
	real, _ := filepath.Glob("../../shared/captures/*/*.pcap*")
	files = append(files, real...)
	var ins []streamInput
	for _, file := range files {
		frames, cis, lt, err := loadFrames(file)
		if err != nil {
			continue
		}
		ins = append(ins, streamInput{filepath.Base(file), frames, cis, lt})
	}
	frames, cis, lt := mixFrames(t, synth.Config{Scenario: synth.ScenarioMix, Packets: 20000, QPs: 300})
	return append(ins, streamInput{"mix300", frames, cis, lt})
}

// feedShards feeds in's frames to n shards with opts, by host pair.
func (in streamInput) feedShards(opts analyze.Options, n int) []*analyze.Analyzer {
	shards := make([]*analyze.Analyzer, n)
	for i := range shards {
		shards[i] = analyze.New(opts)
	}
	for i, fr := range in.frames {
		key := analyze.HostPairKey(in.lt, fr)
		shards[key%uint64(n)].FeedShard(uint64(i+1), key, in.cis[i], in.lt, fr)
	}
	return shards
}

// checkStreamCombines checks, for in on n shards, that the streams
// CombineShardStreams combines give CombineShards' report, JSON byte for
// byte, or fail where CombineShards fails; it says whether they streamed.
func checkStreamCombines(t *testing.T, in streamInput, opts analyze.Options, n int) bool {
	t.Helper()
	parts := make([]*analyze.Report, n)
	for i, a := range in.feedShards(opts, n) {
		parts[i] = a.Finish()
	}
	want, wantErr := analyze.CombineShards(parts, opts)
	ss := make([]*analyze.ReportStream, n)
	for i, a := range in.feedShards(opts, n) {
		ss[i] = a.FinishStream()
	}
	s, err := analyze.CombineShardStreams(ss, opts)
	var got *analyze.Report
	if err != nil {
		require.Error(t, wantErr, "only CombineShards' errors stop the stream: %v", err)
		for i := range ss {
			parts[i] = ss[i].Report()
		}
		got, err = analyze.CombineShards(parts, opts)
		require.Equal(t, wantErr.Error(), err.Error())
	} else {
		require.NoError(t, wantErr)
		require.Equal(t, len(want.Flows), s.Flows())
		got = streamed(s)
	}
	wj, err := json.Marshal(want)
	require.NoError(t, err)
	gj, err := json.Marshal(got)
	require.NoError(t, err)
	require.Equal(t, string(wj), string(gj))
	return s != nil
}

// TestNextReusesFlow: Next into one Flow reused across captures and
// shard counts, with NIC objects given back (Reuse), is, field by field
// (unexported too), Next into a new Flow.
func TestNextReusesFlow(t *testing.T) {
	ins := streamInputs(t)
	var reused analyze.Flow
	checked := 0
	for _, in := range ins {
		for _, opts := range []analyze.Options{{}, {MaxFlows: 3, MaxFindings: 5}} {
			for _, n := range []int{1, 2, 3} {
				opts = analyze.AsShard(opts)
				mk := func() *analyze.ReportStream {
					ss := make([]*analyze.ReportStream, n)
					for i, a := range in.feedShards(opts, n) {
						ss[i] = a.FinishStream()
					}
					s, err := analyze.CombineShardStreams(ss, opts)
					if err != nil {
						return nil
					}
					return s
				}
				a, b := mk(), mk()
				if a == nil {
					continue
				}
				a.Head()
				b.Head()
				checked += nextAlike(t, a, b, &reused, fmt.Sprintf("%s n=%d", in.name, n))
			}
		}
		// and the unsharded stream
		for _, opts := range []analyze.Options{{}, {NoSeries: true}} {
			mk := func() *analyze.ReportStream {
				x := analyze.New(opts)
				for i, fr := range in.frames {
					x.Feed(in.cis[i], in.lt, fr)
				}
				return x.FinishStream()
			}
			nextAlike(t, mk(), mk(), &reused, in.name)
		}
	}
	require.Positive(t, checked, "flows compared")
}

// nextAlike reads two streams of the same report to their ends, the first
// into reused, the second into a new Flow each time, requires the same
// flows of both, and returns how many it compared. It gives the first
// stream back every other flow's NIC object (Reuse), requires Next to
// write the next NIC object into it, and the NIC objects not given back
// to stay as they were.
func nextAlike(t *testing.T, a, b *analyze.ReportStream, reused *analyze.Flow, name string) int {
	t.Helper()
	var spare *analyze.NIC // given back, not yet written again
	type keptNIC struct {
		p *analyze.NIC
		v analyze.NIC
	}
	var kept []keptNIC
	for i := 0; ; i++ {
		var fresh analyze.Flow
		okA, okB := a.Next(reused), b.Next(&fresh)
		require.Equal(t, okB, okA)
		if !okA {
			for _, k := range kept {
				require.Equal(t, k.v, *k.p, "%s: a NIC object not given back changed", name)
			}
			return i
		}
		if !reflect.DeepEqual(fresh, *reused) {
			require.Equal(t, fresh, *reused, fmt.Sprintf("%s flow %d", name, i))
		}
		if reused.NIC == nil {
			continue
		}
		if spare != nil {
			require.Same(t, spare, reused.NIC, "%s flow %d: the NIC object given back", name, i)
			spare = nil
		}
		if i%2 == 0 {
			spare = reused.NIC
			a.Reuse(reused)
			require.Nil(t, reused.NIC)
		} else {
			kept = append(kept, keptNIC{reused.NIC, *reused.NIC})
		}
	}
}
