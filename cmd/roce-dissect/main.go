// Command roce-dissect analyzes RDMA traffic (RoCE v2, RoCE v1, native
// InfiniBand) in pcap, pcapng and ERF captures. See docs/cli.md.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/roce-dissect/roce-dissect/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
