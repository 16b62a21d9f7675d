// Command roce-synth writes synthetic RoCE / InfiniBand captures with their
// ground truth. See package internal/synth and `roce-synth -h`; "roce-synth
// nccl" (an NCCL job's per-host captures) is package
// internal/synth/ncclsynth's.
package main

import (
	"os"

	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/synth/ncclsynth"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "nccl" {
		os.Exit(ncclsynth.Run(os.Args[2:], os.Stdout, os.Stderr))
	}
	os.Exit(synth.Run(os.Args[1:], os.Stdout, os.Stderr))
}
