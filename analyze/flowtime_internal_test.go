package analyze

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// TestFlowTime checks that a flow's first and latest times come back as
// the time.Time values fed, whether they fit int64 nanoseconds in the
// first flow's location or not (other location, the years int64
// nanoseconds do not span, a switch between the two within a flow), and
// that the clock going back changes neither.
func TestFlowTime(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	base := time.Date(2026, 12, 1, 3, 0, 0, 123456789, time.UTC)
	far := time.Date(2300, 1, 1, 0, 0, 0, 5, time.UTC)
	old := time.Date(1600, 1, 1, 0, 0, 0, 7, time.UTC)
	tests := []struct {
		name        string
		times       []time.Time
		first, last time.Time
		wide        bool
	}{
		{"one packet", []time.Time{base}, base, base, false},
		{"in order", []time.Time{base, base.Add(time.Second), base.Add(2 * time.Second)}, base, base.Add(2 * time.Second), false},
		{"clock back", []time.Time{base, base.Add(time.Second), base.Add(-time.Second)}, base, base.Add(time.Second), false},
		{"before 1970", []time.Time{base.AddDate(-60, 0, 0), base.AddDate(-61, 0, 0)}, base.AddDate(-60, 0, 0), base.AddDate(-60, 0, 0), false},
		{"after 2262 first", []time.Time{far, far.Add(time.Second)}, far, far.Add(time.Second), true},
		{"after 2262 later", []time.Time{base, far}, base, far, true},
		{"before 1678 later, then back in range", []time.Time{base, old, base.Add(time.Hour)}, base, base.Add(time.Hour), true},
		{"another location", []time.Time{base, base.In(cet).Add(time.Minute)}, base, base.In(cet).Add(time.Minute), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := New(Options{})
			a.tloc = time.UTC // as the first flow of the capture set it
			p := &Packet{Src: Addr{IP: netip.MustParseAddr("10.0.0.1")}, Dst: Addr{IP: netip.MustParseAddr("10.0.0.2")}, BTH: &layers.BTH{DestQP: 7}}
			f := a.flowFor(p)
			require.NotNil(t, f)
			for _, ts := range tt.times {
				a.flowTime(f, ts, false, 0)
				f.packets++
			}
			assert.Equal(t, tt.wide, f.wideTime)
			assert.Equal(t, tt.first, a.firstTime(f))
			assert.Equal(t, tt.last, a.lastTime(f))
		})
	}
}
