package cli

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCollectBeside: OnRelease returns before its collection ends, starts
// none while one runs, and a later one once it has ended.
func TestCollectBeside(t *testing.T) {
	var started atomic.Int32
	release := make(chan struct{})
	ended := make(chan struct{}, 4)
	onRelease := collectBeside(func() {
		started.Add(1)
		<-release
		ended <- struct{}{}
	})
	for range 3 {
		onRelease() // returns while the first collection waits on release
	}
	require.Eventually(t, func() bool { return started.Load() == 1 }, 5*time.Second, time.Millisecond)
	release <- struct{}{}
	<-ended
	require.Eventually(t, func() bool {
		onRelease() // the collection that ended has let go of its flag
		return started.Load() == 2
	}, 5*time.Second, time.Millisecond)
	release <- struct{}{}
	<-ended
	assert.Equal(t, int32(2), started.Load(), "no collection started while another ran")
}
