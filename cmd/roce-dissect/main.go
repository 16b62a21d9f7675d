// Command roce-dissect analyzes RDMA traffic (RoCE v2, RoCE v1, native
// InfiniBand) in pcap, pcapng and ERF captures. See docs/cli.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/roce-dissect/roce-dissect/internal/cli"
)

func main() {
	// Ctrl-C or a TERM ends the reading, and the report of the frames read
	// is written (its outputs keep their last files); a second signal ends
	// the process at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
