package outfile_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/roce-dissect/roce-dissect/internal/outfile"
)

// Example writes a page where a good one stands; a failed write would
// leave the good one.
func Example() {
	dir, err := os.MkdirTemp("", "outfile")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte("<p>last run</p>"), 0o644); err != nil {
		panic(err)
	}

	err = outfile.Write(path, func(w io.Writer) error {
		_, err := io.WriteString(w, "<p>this run</p>")
		return err
	})
	b, _ := os.ReadFile(path)
	fmt.Println(string(b), err)
	// Output: <p>this run</p> <nil>
}
