// Command roce-synth writes synthetic RoCE / InfiniBand captures with their
// ground truth. See package internal/synth and `roce-synth -h`.
package main

import (
	"os"

	"github.com/roce-dissect/roce-dissect/internal/synth"
)

func main() {
	os.Exit(synth.Run(os.Args[1:], os.Stdout, os.Stderr))
}
