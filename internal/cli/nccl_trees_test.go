package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth/ncclsynth"
)

// TestNCCLTrees: the trees of roce-synth nccl's tree AllReduces, in the
// JSON's nccl.trees and the text, equal its truth's (root and each
// rank's parent); a job of rings only has none, and so has each file
// alone (it sees its own rank's links, not the tree).
func TestNCCLTrees(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"4 ranks", []string{"--ranks", "4", "--coll", "all_reduce:64K:tree"}},
		{"7 ranks, a ring first", []string{"--ranks", "7", "--coll", "all_reduce:70K,all_reduce:112K:tree"}},
		{"8 ranks, a host late", []string{"--ranks", "8", "--coll", "all_reduce:1M:tree,all_reduce:256K:tree", "--host-late", "6=2ms"}},
		{"rings only", []string{"--ranks", "5", "--coll", "all_reduce:40K"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			truth, files := synthNCCLJob(t, tc.args...)
			type parent struct{ Rank, Parent int }
			type tree struct {
				Root    int
				Parents []parent
			}
			var want []tree
			for _, tr := range truth.Trees {
				w := tree{Root: tr.Root}
				for _, p := range tr.Parents {
					w.Parents = append(w.Parents, parent{p.Rank, p.Parent})
				}
				want = append(want, w)
			}
			treesOf := func(args ...string) []tree {
				code, out, errs := run(t, nil, append([]string{"-o", "json"}, args...)...)
				require.Equal(t, 0, code, errs)
				var doc struct {
					NCCL *struct {
						Trees []tree `json:"trees"`
					} `json:"nccl"`
				}
				require.NoError(t, json.Unmarshal([]byte(out), &doc))
				require.NotNil(t, doc.NCCL)
				return doc.NCCL.Trees
			}
			assert.Equal(t, want, treesOf(files...))
			assert.Empty(t, treesOf(files[0]), "one file alone")

			code, text, errs := run(t, nil, append([]string{"--color=never"}, files...)...)
			require.Equal(t, 0, code, errs)
			for _, w := range want {
				var ps []string
				for _, p := range w.Parents {
					ps = append(ps, fmt.Sprintf("%d → %d", p.Rank, p.Parent))
				}
				assert.Contains(t, text, fmt.Sprintf("\n  Tree from root %d: %s\n", w.Root, strings.Join(ps, ", ")))
			}
			if want == nil {
				assert.NotContains(t, text, "Tree from root")
			}
		})
	}
}

// synthNCCLJob writes roce-synth nccl's job of args into a temporary
// folder and returns its truth and its capture files, in the truth's
// order (rank 0's first).
func synthNCCLJob(t *testing.T, args ...string) (*ncclsynth.Truth, []string) {
	t.Helper()
	prefix := filepath.Join(t.TempDir(), "job")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, ncclsynth.Run(append(args, "-o", prefix), &stdout, &stderr), stderr.String())
	raw, err := os.ReadFile(prefix + ".truth.json")
	require.NoError(t, err)
	truth := new(ncclsynth.Truth)
	require.NoError(t, json.Unmarshal(raw, truth))
	var files []string
	for _, f := range truth.Files {
		files = append(files, filepath.Join(filepath.Dir(prefix), filepath.Base(f.File)))
	}
	require.Len(t, files, len(truth.Ranks))
	return truth, files
}
