package cli

import (
	"bytes"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// syncBuffer is a bytes.Buffer safe for the bar's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestProgressFirstRate: the bar shows only after showAfter, and its
// first rate is the rate of the whole read so far (the bar used to start
// after a second and see that second's bytes arrive at once: a first rate
// five times too high). Bytes arrive at 100 kB/s here; the shown rates
// are checked within a factor 2 (the machine is shared).
func TestProgressFirstRate(t *testing.T) {
	var out syncBuffer
	p := &progress{quit: make(chan struct{}), showAfter: 600 * time.Millisecond}
	f := p.add(1_000_000)
	p.wg.Add(1)
	go p.run(&out)
	start := time.Now()
	for time.Since(start) < 1200*time.Millisecond {
		time.Sleep(20 * time.Millisecond)
		f.set(int64(time.Since(start).Seconds() * 100_000))
		if time.Since(start) < 500*time.Millisecond {
			assert.Empty(t, out.String(), "nothing before showAfter")
		}
	}
	p.stop()
	rates := regexp.MustCompile(`([0-9.]+) kB/s`).FindAllStringSubmatch(out.String(), -1)
	require.NotEmpty(t, rates, out.String())
	first, err := strconv.ParseFloat(rates[0][1], 64)
	require.NoError(t, err)
	assert.InDelta(t, 100, first, 60, "first rate shown, kB/s: %s", out.String())
}
