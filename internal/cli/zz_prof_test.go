package cli_test

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/roce-dissect/roce-dissect/internal/cli"
)

func BenchmarkZZProf(b *testing.B) {
	args := strings.Fields(os.Getenv("ZZARGS"))
	for b.Loop() {
		if rc := cli.Run(context.Background(), args, io.Discard, io.Discard); rc != 0 {
			b.Fatal(rc)
		}
	}
}
