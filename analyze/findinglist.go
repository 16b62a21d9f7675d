package analyze

// findingList holds the findings listed, at most max of them, in the order
// they were found. When it is full, a finding takes the place of the
// latest listed finding of the least severe severity below its own: info
// goes before warning, warning before error, so that a storm of info
// findings (ECN CE marks, CNPs) never pushes an error out. A finding that
// finds nothing less severe to replace is dropped. dropped counts every
// finding not listed, replaced ones included.
//
// A replaced finding stays as a tombstone (Severity 0), so that indices
// into list stay valid (incompleteRef); listed skips them. Only warnings
// and errors replace, and each listed finding is replaced at most once, so
// list holds at most 4·max entries.
type findingList struct {
	list    []Finding
	bySev   [SeverityInfo + 1][]int32 // indices into list, by severity, oldest first
	n       int                       // findings listed (list less tombstones)
	max     int
	dropped uint64
}

// add makes room for a finding of severity sev and returns it to be
// filled in, or nil when it is dropped.
func (l *findingList) add(sev Severity) *Finding {
	if l.n >= l.max && !l.evictBelow(sev) {
		l.dropped++
		return nil
	}
	l.bySev[sev] = append(l.bySev[sev], int32(len(l.list)))
	l.list = append(l.list, Finding{Severity: sev})
	l.n++
	return &l.list[len(l.list)-1]
}

// push lists a finding built whole (at report time), within the cap.
func (l *findingList) push(f Finding) {
	if fd := l.add(f.Severity); fd != nil {
		*fd = f
	}
}

// evictBelow replaces the latest listed finding of the least severe
// severity below sev; false when there is none.
func (l *findingList) evictBelow(sev Severity) bool {
	for s := SeverityInfo; s > sev; s-- {
		idx := l.bySev[s]
		for len(idx) > 0 {
			i := idx[len(idx)-1]
			idx = idx[:len(idx)-1]
			if l.list[i].Severity != s { // its severity changed (setSeverity): not its entry
				continue
			}
			l.bySev[s] = idx
			l.list[i] = Finding{}
			l.n--
			l.dropped++
			return true
		}
		l.bySev[s] = idx
	}
	return false
}

// setSeverity changes the severity of the listed finding at index i.
func (l *findingList) setSeverity(i int, sev Severity) {
	l.list[i].Severity = sev
	l.bySev[sev] = append(l.bySev[sev], int32(i))
}

// listed returns a copy of the findings listed, in the order found.
func (l *findingList) listed() []Finding {
	c := l.clone()
	return c.take()
}

// take returns the findings listed, in the order found, in l's own array
// (a non-nil slice), and leaves l empty but for its cap and count of
// dropped findings: for a list not used again, so that its findings are
// not held twice, the list and their copy.
func (l *findingList) take() []Finding {
	out := l.list[:0:len(l.list)]
	if out == nil {
		out = []Finding{}
	}
	for _, f := range l.list {
		if f.Severity != 0 {
			out = append(out, f)
		}
	}
	clear(l.list[len(out):]) // what is left past them holds no strings
	*l = findingList{max: l.max, dropped: l.dropped}
	return out
}

// clone returns a copy that can grow apart from l.
func (l *findingList) clone() findingList {
	c := *l
	c.list = append([]Finding(nil), l.list...)
	for s := range l.bySev {
		c.bySev[s] = append([]int32(nil), l.bySev[s]...)
	}
	return c
}
