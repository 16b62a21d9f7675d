package cli_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTraceNCCLSteps: --trace of a synthetic job's files has a process
// "NCCL" with a thread per rank, and per collective and rank a slice per
// receive the rank wrote to: as many, with as many bytes, as the
// generator's truth says the rank's links carried (one receive per data
// message; each of the truth's chunk steps is messages/steps of them).
func TestTraceNCCLSteps(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"ring all_reduce then all_gather", []string{"--ranks", "3", "--coll", "all_reduce:6K,all_gather:3K"}},
		{"4 ranks, 2 channels", []string{"--ranks", "4", "--channels", "2", "--coll", "all_reduce:64K"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			truth, files := synthNCCLJob(t, tc.args...)
			_, tr := runTrace(t, files...)

			pid, ranks := -1, map[int]int{} // tid → rank
			for _, ev := range tr.TraceEvents {
				if ev.Ph == "M" && ev.Name == "process_name" && ev.Args["name"] == "NCCL" {
					pid = ev.Pid
				}
			}
			require.NotEqual(t, -1, pid, "a process NCCL")
			type key struct{ coll, rank int }
			type figures struct {
				slices int
				bytes  int64
			}
			got := map[key]figures{}
			for _, ev := range tr.TraceEvents {
				if ev.Pid != pid {
					continue
				}
				if ev.Ph == "M" && ev.Name == "thread_name" {
					name := ev.Args["name"].(string)
					r, err := strconv.Atoi(strings.TrimPrefix(name, "rank "))
					require.NoError(t, err, name)
					ranks[ev.Tid] = r
					continue
				}
				if ev.Ph != "X" {
					continue
				}
				r, ok := ranks[ev.Tid]
				require.True(t, ok, "a slice on a rank's track")
				require.NotNil(t, ev.Dur)
				assert.GreaterOrEqual(t, *ev.Dur, 0.0)
				k := key{int(ev.Args["collective"].(float64)), r}
				f := got[k]
				f.slices++
				f.bytes += int64(ev.Args["bytes"].(float64))
				got[k] = f
				// all_gather and reduce_scatter write alike: unknown.
				assert.Contains(t, []string{truth.Collectives[k.coll-1].Kind, "unknown"}, strings.TrimSuffix(ev.Name, " "+strconv.Itoa(k.coll)), ev.Name)
			}
			assert.Len(t, ranks, len(truth.Ranks), "a track per rank")
			want := map[key]figures{}
			for _, c := range truth.Collectives {
				for _, l := range c.Links {
					require.Zero(t, l.Messages%l.Steps, "whole steps")
					k := key{c.Index, l.SenderRank}
					f := want[k]
					f.slices += l.Messages
					f.bytes += l.Bytes
					want[k] = f
				}
			}
			assert.Equal(t, want, got)
		})
	}
}
