package htmlreport

import (
	"slices"
	"sort"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// Categories of the points on a sequence chart, as the page draws them
// (index into the page's series table: keep app.js in step).
const (
	catSend             uint8 = iota // a request sent once, in order
	catResend                        // a request seen before (retransmission or duplicate)
	catOutOfOrder                    // a request that arrived out of order
	catAfterGap                      // the request after PSNs lost in the network
	catACK                           // an ACK from the responder
	catReadResp                      // a READ response packet
	catNAK                           // a NAK
	catRNRNAK                        // an RNR NAK
	catCNP                           // a CNP
	catAfterUnknown                  // the request after PSNs of unknown fate
	catAfterNotCaptured              // the request after PSNs the capture missed
)

// Finding kinds that change a request's category, as bits: fkGap a
// psn_gap error (PSNs lost), fkGapUnknown a psn_gap warning.
const (
	fkResend uint8 = 1 << iota
	fkOutOfOrder
	fkGap
	fkGapUnknown
)

// Source is one capture file and the Collector fed with its packets.
type Source struct {
	// Name is the file name as findings name it (Finding.File) when
	// several files are merged; it is shown on the page.
	Name      string
	Collector *Collector
	// Files, when not nil, are the files read as one capture (pieces, or
	// files merged by time) that the Collector's packets are of: their
	// frames are numbered in the stream, and Files name each one's file
	// and number, as the report's findings and gaps name them. The page
	// then shows each file by its name (Files.Names) in place of Name.
	Files *analyze.Pieces
	// ClockOffset is how far this file's clock runs ahead of the first
	// file's, for files that are capture points of one traffic
	// (points.File.ClockOffsetNs): its times are put on the first file's
	// clock.
	ClockOffset time.Duration
}

// fileFrame names a frame of one of the sources.
type fileFrame struct {
	file  int
	frame uint64
}

// chartData is one flow's sequence chart, columns in time order.
type chartData struct {
	// DataFlow is the flow whose requests are drawn; RespFlow the flow
	// whose ACKs, NAKs, READ responses and CNPs are (-1: none).
	DataFlow int `json:"data_flow"`
	RespFlow int `json:"resp_flow"`
	// TNs is the time since the capture's first frame.
	TNs []int64 `json:"t_ns"`
	// Y is the PSN unwrapped across 2^24 (CNPs, whose PSN means nothing,
	// sit at the PSN drawn just before them); PSN the PSN on the wire.
	Y     []int64  `json:"y"`
	PSN   []uint32 `json:"psn"`
	Frame []uint64 `json:"frame"`
	File  []int    `json:"file,omitempty"`
	Cat   []int    `json:"cat"` // not []uint8: that would marshal as base64
	ECN   []int    `json:"ecn"`
	// Packets counts the packets of the two flows, Shown those drawn;
	// Stride is the largest decimation step (1: every ordinary packet);
	// MarkedDropped counts marked packets beyond Limits.Marked.
	Packets       uint64 `json:"packets"`
	Shown         int    `json:"shown"`
	Stride        uint64 `json:"stride"`
	MarkedDropped uint64 `json:"marked_dropped"`
	// Gaps are the flow's PSN gaps (unwrapped like Y), at the time of the
	// frame that jumped over them (-1 when that frame is not drawn).
	Gaps []chartGap `json:"gaps"`
	// Points names the capture points whose packets are drawn, for files
	// that are capture points of one traffic (each flow's packets as the
	// first point that saw it captured them); absent otherwise.
	Points []string `json:"points,omitempty"`
}

// chartGap is one gap and the split of its PSNs (analyze.GapLoss): lost
// in the network, not captured, of unknown fate.
type chartGap struct {
	From        int64  `json:"from"`
	To          int64  `json:"to"`
	Count       uint32 `json:"count"`
	Frame       uint64 `json:"frame"`
	TNs         int64  `json:"t_ns"`
	Lost        uint64 `json:"lost"`
	NotCaptured uint64 `json:"not_captured"`
	Unknown     uint64 `json:"unknown"`
}

// merged is the points of one flow across all sources, or, of capture
// points, of the first source that has the flow (point names it).
type merged struct {
	pts           []filePoint
	packets       uint64
	stride        uint64
	markedDropped uint64
	tput          []*buckets
	point         string
	offset        int64 // ClockOffset of point, ns
}

type filePoint struct {
	point
	file int
	// seq orders points of one time: the frame's number in its source
	// (the stream's, for files read as one capture).
	seq uint64
}

// gather merges the collectors' points by flow name, each point of the
// file fileIdx gives its name's index. Of capture points (onePoint), a
// flow's points are those of the first source that has it: each point
// captured the same packets, which the chart draws once.
func gather(srcs []Source, fileIdx map[string]int, onePoint bool) map[string]*merged {
	out := map[string]*merged{}
	for _, s := range srcs {
		if s.Collector == nil {
			continue
		}
		off := int64(s.ClockOffset)
		at := func(p point) filePoint {
			seq := p.frame
			file, n := s.Files.Ref(p.frame) // one file: "" and the frame
			if file == "" {
				file = s.Name
			}
			p.frame = n
			p.ns -= off
			return filePoint{p, fileIdx[file], seq}
		}
		for _, fp := range s.Collector.order {
			name := analyze.FlowID{Src: fp.key.src.String(), Dst: fp.key.dst.String(), DestQP: fp.key.qp, Tunnel: fp.key.tun.String()}.String()
			m := out[name]
			switch {
			case m == nil:
				m = &merged{stride: 1, offset: off}
				if onePoint {
					m.point = s.Name
				}
				out[name] = m
			case onePoint:
				continue
			}
			for _, p := range fp.plain {
				m.pts = append(m.pts, at(p))
			}
			for _, p := range fp.marked {
				m.pts = append(m.pts, at(p))
			}
			m.packets += fp.nPlain + uint64(len(fp.marked)) + fp.markedDropped
			m.stride = max(m.stride, fp.stride)
			m.markedDropped += fp.markedDropped
			m.tput = append(m.tput, &fp.tput)
		}
	}
	return out
}

// pairFlows finds each flow's reverse flow: the one of the same CM
// connection, else the reverse-direction flow whose responses carry the
// most PSNs inside the flow's request PSN range (-1: none).
func pairFlows(rep *analyze.Report, pts []*merged) []int {
	peer := make([]int, len(rep.Flows))
	for i := range peer {
		peer[i] = -1
	}
	type dir struct{ src, dst string }
	byDir := map[dir][]int{}
	for i, f := range rep.Flows {
		byDir[dir{f.Src, f.Dst}] = append(byDir[dir{f.Src, f.Dst}], i)
	}
	for i, f := range rep.Flows {
		if f.Connection == nil || peer[i] >= 0 {
			continue
		}
		for _, j := range byDir[dir{f.Dst, f.Src}] {
			if g := rep.Flows[j]; g.Connection != nil && *g.Connection == *f.Connection && peer[j] < 0 && j != i {
				peer[i], peer[j] = j, i
				break
			}
		}
	}
	for i, f := range rep.Flows {
		if peer[i] >= 0 || f.Requests.PSNFirst == nil || f.Requests.PSNLast == nil {
			continue
		}
		first, last := *f.Requests.PSNFirst, *f.Requests.PSNLast
		span := (last - first) & 0xFFFFFF
		best, bestScore := -1, 0
		cands := byDir[dir{f.Dst, f.Src}]
		for _, j := range cands[:min(len(cands), 256)] {
			if peer[j] >= 0 || pts[j] == nil {
				continue
			}
			score := 0
			for _, p := range pts[j].pts {
				if p.kind != kindRequest && p.kind != kindCNP && (p.psn-first)&0xFFFFFF <= span {
					score++
				}
			}
			if score > bestScore {
				best, bestScore = j, score
			}
		}
		if best >= 0 {
			peer[i], peer[best] = best, i
		}
	}
	return peer
}

// buildChart assembles flow i's sequence chart: the requests of the flow
// that sends them (i itself when it has requests, else its peer) with the
// ACKs, NAKs, READ responses and CNPs of the other.
// It draws at most budget points (decimate).
func buildChart(rep *analyze.Report, i int, peer []int, pts []*merged, kinds map[fileFrame]uint8, fileIdx map[string]int, t0 int64, budget int) *chartData {
	data, resp := chartFlows(rep, i, peer)
	ch := &chartData{DataFlow: data, RespFlow: resp, Stride: 1, Gaps: []chartGap{}}
	var sel []filePoint
	sel = ch.take(sel, pts, data, func(k uint8) bool { return k == kindRequest })
	sel = ch.take(sel, pts, resp, func(k uint8) bool { return k != kindRequest })
	if sel == nil {
		return nil
	}
	sortByTime(sel)
	keep, stride, dropped := decimate(sel, budget)
	ch.Stride *= stride
	ch.MarkedDropped += dropped
	multi := len(fileIdx) > 1 // the page shows several files: each point names its own
	frameAt := ch.addPoints(sel, keep, multi, kinds, t0)
	if data >= 0 {
		r := &rep.Flows[data].Requests
		// Of capture points, the report's gaps name frames of the
		// stream the points were merged into, not of the file drawn:
		// each gap is found by its PSNs instead.
		byPSN := pts[data] != nil && pts[data].point != ""
		ch.addGaps(r.Gaps, r.GapLosses(), frameAt, fileIdx, multi, byPSN)
	}
	return ch
}

// chartFlows returns the flows of flow i's chart: data, whose requests
// are drawn (i when it has requests, else its peer; -1 for responses
// or CNPs alone), and resp, whose responses and CNPs are (-1: none).
func chartFlows(rep *analyze.Report, i int, peer []int) (data, resp int) {
	data, resp = i, peer[i]
	if rep.Flows[i].Requests.Packets == 0 && peer[i] >= 0 {
		data, resp = peer[i], i
	}
	if resp < 0 && rep.Flows[i].Requests.Packets == 0 {
		data, resp = -1, i // responses (or CNPs) alone
	}
	return data, resp
}

// take appends to sel the points of flow j (none when j < 0 or the flow
// has none) whose kind want takes, and adds the flow's counts to ch.
func (ch *chartData) take(sel []filePoint, pts []*merged, j int, want func(uint8) bool) []filePoint {
	if j < 0 || pts[j] == nil {
		return sel
	}
	m := pts[j]
	if m.point != "" && !slices.Contains(ch.Points, m.point) {
		ch.Points = append(ch.Points, m.point)
	}
	ch.Packets += m.packets
	ch.Stride = max(ch.Stride, m.stride)
	ch.MarkedDropped += m.markedDropped
	for _, p := range m.pts {
		if want(p.kind) {
			sel = append(sel, p)
		}
	}
	return sel
}

// sortByTime sorts the points by time, then in the order their source
// read them (seq), keeping the order of equal ones.
func sortByTime(sel []filePoint) {
	sort.SliceStable(sel, func(a, b int) bool {
		if sel[a].ns != sel[b].ns {
			return sel[a].ns < sel[b].ns
		}
		return sel[a].seq < sel[b].seq
	})
}

// psnUnwrapper unwraps the PSNs of points in time order across 2^24.
type psnUnwrapper struct {
	y       int64
	prev    uint32
	started bool
}

// newPSNUnwrapper starts from the PSN of the first point that is not a
// CNP (a CNP's PSN means nothing).
func newPSNUnwrapper(sel []filePoint) psnUnwrapper {
	for _, p := range sel {
		if p.kind != kindCNP {
			return psnUnwrapper{y: int64(p.psn), prev: p.psn, started: true}
		}
	}
	return psnUnwrapper{}
}

// next returns the unwrapped PSN of p, the next point in time order: a
// CNP sits at the PSN before it.
func (u *psnUnwrapper) next(p filePoint) int64 {
	if p.kind != kindCNP && u.started {
		d := int64((p.psn - u.prev) & 0xFFFFFF)
		if d >= 1<<23 {
			d -= 1 << 24
		}
		u.y += d
		u.prev = p.psn
	}
	return u.y
}

// addPoints adds the points in sel that keep keeps (all when nil) to the
// chart's columns, with their unwrapped PSNs, times from t0 and files
// when multi, and returns the column index of each point added.
func (ch *chartData) addPoints(sel []filePoint, keep []bool, multi bool, kinds map[fileFrame]uint8, t0 int64) map[fileFrame]int {
	u := newPSNUnwrapper(sel)
	frameAt := map[fileFrame]int{}
	for k, p := range sel {
		y := u.next(p)
		if keep != nil && !keep[k] {
			continue
		}
		ch.TNs = append(ch.TNs, p.ns-t0)
		ch.Y = append(ch.Y, y)
		ch.PSN = append(ch.PSN, p.psn)
		ch.Frame = append(ch.Frame, p.frame)
		if multi {
			ch.File = append(ch.File, p.file)
		}
		ch.Cat = append(ch.Cat, int(category(p, kinds)))
		var e int
		if p.flags&flagECNCE != 0 {
			e = 1
		}
		ch.ECN = append(ch.ECN, e)
		frameAt[fileFrame{p.file, p.frame}] = len(ch.TNs) - 1
	}
	ch.Shown = len(ch.TNs)
	return frameAt
}

// addGaps adds the data flow's PSN gaps to the chart with the split of
// their PSNs (losses, parallel to gaps), each placed on the frame that
// jumped over it when that frame is drawn (frameAt) and the gap names its
// file (files read as one capture) or the points are of one file; byPSN
// (capture points) on the first request drawn with the PSN just above
// the gap instead (firstRequests). That frame, drawn as an ordinary
// request, takes the category of the gap's worst PSNs.
func (ch *chartData) addGaps(gaps []analyze.Gap, losses []analyze.GapLoss, frameAt map[fileFrame]int, fileIdx map[string]int, multi, byPSN bool) {
	var firstAt map[uint32]int // byPSN: firstRequests, made for the first gap
	for i, g := range gaps {
		cg := chartGap{Count: g.Count, Frame: g.Frame, TNs: -1, Unknown: uint64(g.Count)}
		if i < len(losses) {
			cg.Lost, cg.NotCaptured, cg.Unknown = losses[i].Lost, losses[i].NotCaptured, losses[i].Unknown
		}
		k, ok := frameAt[fileFrame{fileIdx[g.File], g.Frame}]
		ok = ok && (!multi || g.File != "")
		if byPSN {
			if firstAt == nil {
				firstAt = ch.firstRequests()
			}
			k, ok = firstAt[(g.To+1)&0xFFFFFF]
		}
		// The gap ends just below the PSN of the frame that jumped
		// over it; place it on that frame's unwrapped PSN.
		if ok {
			cg.Frame = ch.Frame[k]
			cg.TNs = ch.TNs[k]
			top := ch.Y[k] - int64((ch.PSN[k]-g.To)&0xFFFFFF)
			cg.To, cg.From = top, top-int64(g.Count)+1
			if ch.Cat[k] == int(catSend) {
				switch {
				case cg.Lost > 0:
					ch.Cat[k] = int(catAfterGap)
				case cg.Unknown > 0:
					ch.Cat[k] = int(catAfterUnknown)
				default:
					ch.Cat[k] = int(catAfterNotCaptured)
				}
			}
		} else {
			cg.From, cg.To = int64(g.From), int64(g.To)
		}
		ch.Gaps = append(ch.Gaps, cg)
	}
}

// firstRequests returns the column of the first request drawn with each
// PSN: the one above a gap is the request that jumped over it, as the
// first point that saw the flow captured it.
func (ch *chartData) firstRequests() map[uint32]int {
	at := map[uint32]int{}
	for k, p := range ch.PSN {
		if _, ok := at[p]; !ok && isRequestCat(uint8(ch.Cat[k])) {
			at[p] = k
		}
	}
	return at
}

// isRequestCat reports whether a category is one of a request's.
func isRequestCat(c uint8) bool {
	switch c {
	case catACK, catReadResp, catNAK, catRNRNAK, catCNP:
		return false
	}
	return true
}

// category is how a point is drawn.
func category(p filePoint, kinds map[fileFrame]uint8) uint8 {
	switch p.kind {
	case kindACK:
		return catACK
	case kindReadResp:
		return catReadResp
	case kindNAK:
		return catNAK
	case kindRNRNAK:
		return catRNRNAK
	case kindCNP:
		return catCNP
	}
	if p.flags&flagFinding != 0 {
		k := kinds[fileFrame{p.file, p.frame}]
		switch {
		case k&fkResend != 0:
			return catResend
		case k&fkOutOfOrder != 0:
			return catOutOfOrder
		case k&fkGap != 0:
			return catAfterGap
		case k&fkGapUnknown != 0:
			return catAfterUnknown
		}
	}
	return catSend
}
