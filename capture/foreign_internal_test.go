package capture

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestForeignFormat: maxForeignLead reaches the longest lead, and a lead
// cut short names no format.
func TestForeignFormat(t *testing.T) {
	longest := 0
	for _, f := range foreignFormats {
		longest = max(longest, len(f.lead))
		assert.Empty(t, foreignFormat(f.lead[:len(f.lead)-1]), "%q cut short", f.lead)
		assert.Equal(t, f.what, foreignFormat(append(f.lead, 0, 1, 2)))
	}
	assert.Equal(t, longest, maxForeignLead)
}
