package cli

// head is the next packet of one file in the merge: its time on the
// reference clock and captured length; ok false when the file is done.
type head struct {
	t      int64
	capLen int
	ok     bool
}

// before says whether file i's next packet (h) comes before file j's (g)
// on the reference clock. A tie (timestamps of coarse resolution) goes to
// the packet with more captured bytes, then to the file given first: the
// first sighting is the one the combined report sees, so it should be
// the most complete copy whatever the files' order (a full capture's
// ICRC, not a header-only one's).
func before(h head, i int, g head, j int) bool {
	if h.t != g.t {
		return h.t < g.t
	}
	if h.capLen != g.capLen {
		return h.capLen > g.capLen
	}
	return i < j
}

// merge orders the files of the second pass by their next packet (a
// binary heap of file indices), so that taking the earliest costs
// O(log files), not a scan of every file.
type merge struct {
	heads []head
	heap  []int // files not done; heap[0] comes first
}

// newMerge returns the merge of files with these next packets.
func newMerge(heads []head) *merge {
	m := &merge{heads: heads}
	for i, h := range heads {
		if h.ok {
			m.heap = append(m.heap, i)
		}
	}
	for k := len(m.heap)/2 - 1; k >= 0; k-- {
		m.down(k)
	}
	return m
}

// earliest returns the file whose next packet comes first, -1 when all
// are done.
func (m *merge) earliest() int {
	if len(m.heap) == 0 {
		return -1
	}
	return m.heap[0]
}

// advance sets the next packet of the earliest file (h.ok false: it is
// done).
func (m *merge) advance(h head) {
	i := m.heap[0]
	m.heads[i] = h
	if !h.ok {
		last := len(m.heap) - 1
		m.heap[0] = m.heap[last]
		m.heap = m.heap[:last]
	}
	m.down(0)
}

func (m *merge) less(a, b int) bool {
	i, j := m.heap[a], m.heap[b]
	return before(m.heads[i], i, m.heads[j], j)
}

func (m *merge) down(k int) {
	for {
		c := 2*k + 1
		if c >= len(m.heap) {
			return
		}
		if c+1 < len(m.heap) && m.less(c+1, c) {
			c++
		}
		if !m.less(c, k) {
			return
		}
		m.heap[k], m.heap[c] = m.heap[c], m.heap[k]
		k = c
	}
}
