package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProgressTotals(t *testing.T) {
	p := &progress{quit: make(chan struct{})}
	a, b := p.add(1000), p.add(500)
	a.set(400)
	b.set(100)
	a.set(1000)
	assert.Equal(t, int64(1500), p.max())
	assert.Equal(t, int64(1100), p.done.Load())
	p.add(-1) // stdin or gzip: no percentage
	assert.Equal(t, int64(-1), p.max())
	var none *progress
	assert.Nil(t, none.add(10), "no progress when stderr is not a terminal")
	none.stop()
	var f *progressFile
	f.set(5)
}
