package fuzz_test

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
	"github.com/roce-dissect/roce-dissect/points"
)

// maxPointFrames bounds the frames of one FuzzCapturePoints input: the
// clock moves forward at most 255 ns a frame, so 256 frames stay well
// within the matching window (points.DefaultWindow) and every sighting
// of a copy is matched before its transmission leaves the window.
const maxPointFrames = 256

// pointFrame is one frame of one capture point.
type pointFrame struct {
	ci   gopacket.CaptureInfo
	lt   gplayers.LinkType
	data []byte
	idx  int // in the sequence
}

// pointFlow is a flow as points.Matcher keys it.
type pointFlow struct {
	src, dst analyze.Addr
	qp       uint32
}

// sightKey is what the Matcher matches a packet on (points/key.go), and
// the ICRC status it judges corruption by; ok is false for packets that
// are no sighting (no BTH, malformed).
type sightKey struct {
	ok         bool
	flow       pointFlow
	psn        uint32
	opcode     layers.Opcode
	ipID       uint16
	payloadLen int
	icrc       uint32
	hasICRC    bool
	status     layers.ICRCStatus
}

func sightOf(p *analyze.Packet) sightKey {
	if p == nil || p.BTH == nil || p.Err != nil {
		return sightKey{}
	}
	k := sightKey{ok: true, flow: pointFlow{p.Src, p.Dst, p.BTH.DestQP}, psn: p.BTH.PSN, opcode: p.BTH.Opcode,
		ipID: p.IPID, payloadLen: p.PayloadLen, status: p.ICRC.Status}
	k.icrc, k.hasICRC = p.BTH.ICRCValue()
	return k
}

// earliestPoint returns the point whose next frame comes first, -1 when
// all are done: the command's merge (internal/cli/points.go, earliest),
// on one clock (the copies' offsets are 0). Ties go to the frame with
// more captured bytes, then to the point given first.
func earliestPoint(pts [][]pointFrame, next []int) int {
	bi := -1
	for i, fs := range pts {
		if next[i] >= len(fs) {
			continue
		}
		if bi < 0 {
			bi = i
			continue
		}
		a, b := fs[next[i]].ci, pts[bi][next[bi]].ci
		if a.Timestamp.Before(b.Timestamp) || (a.Timestamp.Equal(b.Timestamp) && a.CaptureLength > b.CaptureLength) {
			bi = i
		}
	}
	return bi
}

// FuzzCapturePoints gives points.Matcher 2 to 4 capture points that are
// copies of one capture (a FuzzAnalyzerSequence input, its first 256
// frames), the last point lacking the frames lossMask names (bit i:
// frame i, of the first 64), read twice as the command reads capture
// points: once for the Samplers and EstimateClocks, once merged in time
// order (ties: the point given first) into the Matcher, with the points'
// spans. Whatever the frames, the points must say what one point
// implies:
//   - every point decodes a frame alike (the same sightings);
//   - EstimateClocks finds every offset 0, and copies are one group or
//     none;
//   - Add says first sighting exactly for the first point's RDMA packets
//     and every packet without a BTH; Stats counts the first point's
//     sightings as the transmissions;
//   - per flow, a link per two consecutive points (one fewer when the
//     last point lacks all the flow's frames), upstream the point given
//     first (the delay is 0); each link matches every transmission of
//     the flow, the link into the last point those it has; nothing lost,
//     not captured or corrupted, but on the link into the last point,
//     whose lost + not captured are the frames removed within its span,
//     its lost PSNs and frames those of removed frames; every delay 0;
//     reordered the flow's frames that came after a later one (clock
//     going back).
//
// With frames removed, the first point's sighting comes first only on a
// clock that never goes back; on another the removal checks are skipped.
func FuzzCapturePoints(f *testing.F) {
	for _, name := range []string{"write_bw_ipv4.pcap", "loss_nak_gobackn.pcap", "erspan3_vxlan.pcap", "pfc_storm.pcap",
		"dup_reorder.pcap", "ud.pcap", "ib.pcap", "rnr_corrupt_icrc.pcap"} {
		data, err := os.ReadFile("../testdata/" + name)
		require.NoError(f, err)
		frames := readFrames(f, name, data)
		frames = frames[:min(len(frames), 12)] // small seeds: see FuzzCapture
		seq := encodeSequence(frames)
		f.Add(uint8(0), uint64(0), seq)          // two copies
		f.Add(uint8(2), uint64(0b100101), seq)   // four points, the last lacking three frames
		f.Add(uint8(1), uint64(1<<11|1<<3), seq) // three points, the last lacking two
	}
	req, rep, read := cmSeeds(f)
	cnp := cnpSeed(f)
	seq := encodeSequence([]seedFrame{req, rep, read, read, cnp, read})
	f.Add(uint8(1), uint64(0), seq)
	f.Add(uint8(0), uint64(0b001000), seq) // one of two identical READs lost
	f.Add(uint8(2), uint64(0b111111), seq) // the last point lacks everything
	tail := encodeSequence([]seedFrame{read})
	tail[0] |= 8 // a READ back in time
	f.Add(uint8(2), uint64(0), append(slices.Clone(seq), tail...))
	f.Fuzz(func(t *testing.T, nPoints uint8, lossMask uint64, in []byte) {
		defer watchdog(in)()
		r := newPointsRun(nPoints, lossMask, in)
		// First reading: each point alone, as the command's first pass.
		r.readAlone()
		alike := r.checkDecodeAlike(t)
		r.checkClocks(t)
		// Second reading: merged in time order into the Matcher.
		r.setSpans()
		checkFirst := alike && (r.copies || r.monotonic)
		rep := r.readMerged(t, checkFirst)
		if !checkFirst {
			return
		}
		wants := r.wantLinks()
		checkLinkSums(t, wants, r.checkLinks(t, rep, wants))
	})
}

// pointsRun is one FuzzCapturePoints input read as capture points: the
// points' frames, which of the sequence's frames the last point lacks,
// and what the first reading found.
type pointsRun struct {
	n, last   int
	opts      analyze.Options
	pts       [][]pointFrame // by point
	removed   []bool         // by frame of the sequence (and of the first point)
	copies    bool           // no frame removed: the points are copies
	monotonic bool           // the clock never goes back

	// The first reading, by point.
	names    []string
	samplers []*points.Sampler
	keys     [][]sightKey // by frame of the point
	spans    [][2]time.Time
}

// newPointsRun cuts in into at most maxPointFrames frames, on a clock
// that moves forward 1 ns a byte (back 1 µs a byte on a frame that says
// so), and lays them out as 2 + nPoints%3 points, the last lacking the
// frames lossMask names (bit i: frame i, of the first 64).
func newPointsRun(nPoints uint8, lossMask uint64, in []byte) *pointsRun {
	frames := cutSequence(in)
	frames = frames[:min(len(frames), maxPointFrames)]
	n := 2 + int(nPoints%3)
	r := &pointsRun{n: n, last: n - 1, opts: analyze.Options{MaxFindings: 32}, pts: make([][]pointFrame, n),
		removed: make([]bool, len(frames)), monotonic: true}
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, fr := range frames {
		if fr.back && len(fr.data) > 0 {
			ts = ts.Add(-time.Duration(len(fr.data)) * time.Microsecond)
			r.monotonic = false
		} else {
			ts = ts.Add(time.Duration(len(fr.data)) * time.Nanosecond)
		}
		pf := pointFrame{gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(fr.data), Length: len(fr.data) + fr.extra},
			linkTypes[int(fr.linkType)%len(linkTypes)], fr.data, i}
		r.removed[i] = i < 64 && lossMask>>i&1 != 0
		for k := range r.pts {
			if k != r.last || !r.removed[i] {
				r.pts[k] = append(r.pts[k], pf)
			}
		}
	}
	r.copies = !slices.Contains(r.removed, true)
	return r
}

// readAlone is the first reading: each point alone into an analyzer and
// a Sampler, the sightings of its frames in keys.
func (r *pointsRun) readAlone() {
	r.names = make([]string, r.n)
	r.samplers = make([]*points.Sampler, r.n)
	r.keys = make([][]sightKey, r.n)
	for k, fs := range r.pts {
		r.names[k] = fmt.Sprintf("point%d.pcap", k)
		r.samplers[k] = points.NewSampler(0)
		a := analyze.New(r.opts)
		for _, pf := range fs {
			p := a.Feed(pf.ci, pf.lt, pf.data)
			r.samplers[k].Add(p)
			r.keys[k] = append(r.keys[k], sightOf(p))
		}
	}
}

// checkDecodeAlike checks that every point but the last decodes its
// frames as the first does, and the last too when it lacks nothing; it
// reports whether the last point decodes what it has as the first does
// (analyze judges some frames against those before them: a removal may
// change that, and then the points disagree for a reason).
func (r *pointsRun) checkDecodeAlike(t *testing.T) bool {
	t.Helper()
	var kept []sightKey
	for i, k := range r.keys[0] {
		if !r.removed[i] {
			kept = append(kept, k)
		}
	}
	alike := slices.Equal(kept, r.keys[r.last])
	for k := 1; k < r.last; k++ {
		require.Equal(t, r.keys[0], r.keys[k], "point %d decodes a copy otherwise", k)
	}
	if r.copies {
		require.True(t, alike, "the last point decodes a copy otherwise")
	}
	return alike
}

// checkClocks checks that EstimateClocks finds every offset 0 and, when
// the points are copies, one group of them all or none.
func (r *pointsRun) checkClocks(t *testing.T) {
	t.Helper()
	est := points.EstimateClocks(r.samplers, nil)
	for k, o := range est.Offsets {
		require.Zero(t, o.Offset, "point %d: offset (%s)", k, o.Method)
	}
	if r.copies && len(est.Groups) > 0 {
		all := make([]int, r.n)
		for k := range all {
			all[k] = k
		}
		require.Equal(t, [][]int{all}, est.Groups, "copies are one group")
	}
}

// setSpans sets the points' spans, as their Samplers saw them (zero for
// a point without a frame).
func (r *pointsRun) setSpans() {
	r.spans = make([][2]time.Time, r.n)
	for k, s := range r.samplers {
		if first, lastT, ok := s.Span(); ok {
			r.spans[k] = [2]time.Time{first, lastT}
		}
	}
}

// readMerged is the second reading: the points merged in time order
// (earliestPoint) into new analyzers and a Matcher. Every frame must
// decode as in the first reading; with checkFirst, Add must say first
// sighting exactly for the first point's sightings and every packet
// that is none. Stats must count the sightings, and Finish's report
// name the points' files; it returns that report.
func (r *pointsRun) readMerged(t *testing.T, checkFirst bool) *points.Report {
	t.Helper()
	m := points.New(points.Options{Files: r.names, Spans: r.spans})
	ans := make([]*analyze.Analyzer, r.n)
	for k := range ans {
		ans[k] = analyze.New(r.opts)
	}
	next := make([]int, r.n)
	var sightings uint64
	for {
		k := earliestPoint(r.pts, next)
		if k < 0 {
			break
		}
		pf := r.pts[k][next[k]]
		p := ans[k].Feed(pf.ci, pf.lt, pf.data)
		sg := sightOf(p)
		require.Equal(t, r.keys[k][next[k]], sg, "point %d frame %d decodes otherwise the second time", k, next[k]+1)
		next[k]++
		first := m.Add(k, p)
		if sg.ok {
			sightings++
		}
		if checkFirst {
			require.Equal(t, k == 0 || !sg.ok, first, "Add's first sighting: point %d, frame %d", k, pf.idx+1)
		}
	}
	st := m.Stats()
	require.Equal(t, sightings, st.Sightings)
	rep := m.Finish()
	require.Len(t, rep.Files, r.n)
	for k, fl := range rep.Files {
		require.Equal(t, r.names[k], fl.File)
	}
	return rep
}

// flowFacts is what the first point implies of one flow: its
// transmissions, those the last point lacks and those of them within
// its span, its frames that came after a later one.
type flowFacts struct {
	tx, lacked, counted, reordered uint64
	latest                         time.Time
	seen                           bool
}

// strFlow is a flow as the report names it: source, destination and QP
// as text (flows of one name add up).
type strFlow struct {
	src, dst string
	qp       uint32
}

// strFlowOf is f as the report names it.
func strFlowOf(f pointFlow) strFlow {
	return strFlow{f.src.String(), f.dst.String(), f.qp}
}

// linkSums is what the links of the flows of one name add up to (got)
// or are to (want).
type linkSums struct {
	flows                                       int
	links, matched, matchedLast, counted, order uint64
	lostPSNs                                    []uint32
}

// sumsOf returns the sums of sk in m, new zero ones the first time.
func sumsOf(m map[strFlow]*linkSums, sk strFlow) *linkSums {
	s := m[sk]
	if s == nil {
		s = &linkSums{}
		m[sk] = s
	}
	return s
}

// factsPerFlow returns what the first point implies per flow, and the
// flows in the order of their first sighting.
func (r *pointsRun) factsPerFlow() (map[pointFlow]*flowFacts, []pointFlow) {
	byFlow := map[pointFlow]*flowFacts{}
	var order []pointFlow
	var lo, hi time.Time
	if len(r.pts[r.last]) > 0 {
		lo, hi = r.spans[r.last][0], r.spans[r.last][1]
	}
	for i, k := range r.keys[0] {
		if !k.ok {
			continue
		}
		pf := byFlow[k.flow]
		if pf == nil {
			pf = &flowFacts{}
			byFlow[k.flow] = pf
			order = append(order, k.flow)
		}
		tm := r.pts[0][i].ci.Timestamp
		pf.tx++
		if pf.seen && tm.Before(pf.latest) {
			pf.reordered++
		} else {
			pf.latest, pf.seen = tm, true
		}
		if r.removed[i] {
			pf.lacked++
			if len(r.pts[r.last]) > 0 && !tm.Before(lo) && !tm.After(hi) {
				pf.counted++
			}
		}
	}
	return byFlow, order
}

// wantLinks returns what the links of each flow name are to add up to:
// per flow a link per two consecutive points (one fewer when the last
// point lacks all the flow's frames), each matching every transmission
// of the flow, the link into the last point those it has, whose lost +
// not captured are the removed frames within its span and whose lost
// PSNs are those of removed frames; reordered the flow's frames that
// came after a later one, on every link.
func (r *pointsRun) wantLinks() map[strFlow]*linkSums {
	byFlow, order := r.factsPerFlow()
	wants := map[strFlow]*linkSums{}
	for _, fk := range order {
		pf := byFlow[fk]
		w := sumsOf(wants, strFlowOf(fk))
		links := uint64(r.n - 1)
		if pf.lacked == pf.tx {
			links-- // the last point shares none of its transmissions
		} else {
			w.matchedLast += pf.tx - pf.lacked
			w.counted += pf.counted
		}
		w.flows++
		w.links += links
		w.matched += uint64(r.n-2) * pf.tx
		w.order += links * pf.reordered
	}
	for i, k := range r.keys[0] {
		if k.ok && r.removed[i] {
			w := wants[strFlowOf(k.flow)]
			w.lostPSNs = append(w.lostPSNs, k.psn)
		}
	}
	return wants
}

// checkLinks checks that every link of rep is one of a flow in wants
// (checkLink) and returns what the links of each flow name add up to.
func (r *pointsRun) checkLinks(t *testing.T, rep *points.Report, wants map[strFlow]*linkSums) map[strFlow]*linkSums {
	t.Helper()
	got := map[strFlow]*linkSums{}
	for _, l := range rep.Links {
		sk := strFlow{l.Src, l.Dst, l.DestQP}
		require.Contains(t, wants, sk, "a link of a flow the points do not have: %+v", l)
		r.checkLink(t, l, sumsOf(got, sk))
	}
	return got
}

// checkLink checks link l and adds it to g: upstream the point given
// first, nothing corrupted, every delay 0; between full copies nothing
// lost or not captured; into the last point as many lost PSNs and
// frames as lost, each frame a removed one (checkLostFrame).
func (r *pointsRun) checkLink(t *testing.T, l points.Link, g *linkSums) {
	t.Helper()
	from, to := slices.Index(r.names, l.From), slices.Index(r.names, l.To)
	require.True(t, from >= 0 && from < to, "upstream is the point given first (delay 0): %+v", l)
	g.links++
	g.order += l.Reordered
	require.Zero(t, l.Corrupted, "%+v", l)
	require.Equal(t, points.Delay{Samples: int(min(l.Matched, 16384))}, l.OneWayDelayNs, "every delay 0: %+v", l)
	if to != r.last {
		require.Zero(t, l.Lost+l.NotCaptured, "nothing missing between copies: %+v", l)
		g.matched += l.Matched
		return
	}
	g.matchedLast += l.Matched
	g.counted += l.Lost + l.NotCaptured
	require.Len(t, l.LostPSNs, int(l.Lost), "%+v", l)
	require.Len(t, l.LostFrames, int(l.Lost), "%+v", l)
	g.lostPSNs = append(g.lostPSNs, l.LostPSNs...)
	for _, fr := range l.LostFrames {
		r.checkLostFrame(t, fr, l)
	}
}

// checkLostFrame checks that lost frame fr of link l, a frame of the
// point before the last, is a removed frame's number (or that of a
// frame identical to one, at the same time: the two are one to the
// Matcher).
func (r *pointsRun) checkLostFrame(t *testing.T, fr uint64, l points.Link) {
	t.Helper()
	i := int(fr) - 1
	require.True(t, i >= 0 && i < len(r.keys[0]) && r.keys[0][i].ok, "lost frame %d is no sighting: %+v", fr, l)
	same := false
	for j, k := range r.keys[0] {
		same = same || (r.removed[j] && k == r.keys[0][i] && r.pts[0][j].ci.Timestamp.Equal(r.pts[0][i].ci.Timestamp))
	}
	require.True(t, same, "lost frame %d was not removed: %+v", fr, l)
}

// checkLinkSums checks that the links of each flow name add up (got) to
// what the first point implies (wants): links, matched, lost + not
// captured and reordered, and every lost PSN one removed (as many times
// at most as removed).
func checkLinkSums(t *testing.T, wants, got map[strFlow]*linkSums) {
	t.Helper()
	for sk, w := range wants {
		g := got[sk]
		if g == nil {
			g = &linkSums{}
		}
		require.Equal(t, w.links, g.links, "%v: links (%d flows)", sk, w.flows)
		require.Equal(t, w.matched, g.matched, "%v: matched on the links between full copies", sk)
		require.Equal(t, w.matchedLast, g.matchedLast, "%v: matched on the links into the last point", sk)
		require.Equal(t, w.counted, g.counted, "%v: lost + not captured into the last point", sk)
		require.Equal(t, w.order, g.order, "%v: reordered", sk)
		for _, psn := range g.lostPSNs {
			i := slices.Index(w.lostPSNs, psn)
			require.GreaterOrEqual(t, i, 0, "%v: lost PSN %d was not removed (or more times than removed)", sk, psn)
			w.lostPSNs = slices.Delete(w.lostPSNs, i, i+1)
		}
	}
}
