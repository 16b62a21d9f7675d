package analyze_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocMapsEveryFile: the package doc (doc.go) names every file of the
// package, so that a newcomer finds each concern by its file.
func TestDocMapsEveryFile(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "doc.go" {
			continue
		}
		assert.True(t, strings.Contains(string(doc), f), "doc.go does not say where %s is", f)
	}
}
