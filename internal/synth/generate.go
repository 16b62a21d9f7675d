package synth

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/roce-dissect/roce-dissect/layers"
)

// StartTime is the timestamp of the first frame of every capture.
var StartTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// FrameInfo describes a written frame to Config.OnFrame. Fields of
// headers the frame does not carry are zero.
type FrameInfo struct {
	Index         int // frame number, from 1
	Timestamp     time.Time
	CaptureLength int
	Length        int
	Src, Dst      string // network addresses as in the truth
	Opcode        layers.Opcode
	DestQP        uint32
	PSN           uint32
	AckReq        bool
	ECNCE         bool
	ICRC          layers.ICRCStatus // what a decoder finds
	VA            uint64            // RETH, AtomicETH
	RKey          uint32
	DMALength     uint32
	Syndrome      uint8 // AETH
	MSN           uint32
	QKey          uint32 // DETH
	SrcQP         uint32
	Immediate     uint32 // ImmDt or IETH
	PayloadLen    int
	CM            string // "REQ", "REP", "RTU", "DREQ", "DREP" for CM MADs
	// SrcPort is the UDP source port the ICRC was computed over (RoCE v2);
	// SrcPortRewritten says the frame shows 4791 instead
	// (Config.SnifferSrcPort): ICRC is then what the analyzer finds, which
	// recovers SrcPort, while a plain decode of the frame finds it bad.
	SrcPort          uint16
	SrcPortRewritten bool
	// Encap is the frame's encapsulation (Config.Encap, or RoCE v1 for a
	// V1Requester's requester); ToolCut marks a frame cut to
	// Config.CutFrames with Length = CaptureLength; Malformed a frame
	// written malformed (Config.ShortMAD).
	Encap     Encap
	ToolCut   bool
	Malformed bool
	// Pause describes a pause frame (Config.Pause); nil for every other
	// frame. A pause frame's Src and Dst are its MAC addresses.
	Pause *PauseInfo
	// Data is the captured bytes, valid during the callback only.
	Data []byte
}

var cmNames = [...]string{"", "REQ", "REP", "RTU", "DREQ", "DREP"}

// Generate writes the capture described by cfg to capture and, when truth
// is not nil, the truth as indented JSON. It returns the truth.
func Generate(cfg Config, capture, truth io.Writer) (*Truth, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	g, err := newGenerator(&cfg, capture)
	if err != nil {
		return nil, err
	}
	if err := g.initPause(); err != nil {
		return nil, err
	}
	if cfg.Scenario == ScenarioMix {
		err = g.runMix()
	} else {
		err = g.runSingle()
	}
	if err != nil {
		return nil, err
	}
	if err := g.pausesUntil(math.MaxInt64); err != nil { // those after the last RoCE frame
		return nil, err
	}
	if err := g.w.flush(); err != nil {
		return nil, err
	}
	g.finishPause()
	t := g.tr.finish()
	t.Scenario, t.Encap, t.LinkType, t.Seed = cfg.Scenario, cfg.Encap.String(), int(linkType(cfg.Encap)), cfg.Seed
	t.Encapsulation = g.wrapTruth()
	for _, c := range g.conns {
		if c.kind == kindUD || c.dc || cfg.ShortMAD > 0 && c.idx == 0 {
			continue // datagrams and DC have no CM; a malformed REQ makes no connection
		}
		if cn, ok := connectionTruth(c, &cfg); ok {
			t.Connections = append(t.Connections, cn)
		}
	}
	if truth != nil {
		if err := WriteTruth(truth, t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// WriteTruth writes t as indented JSON with a final newline.
func WriteTruth(w io.Writer, t *Truth) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

type generator struct {
	cfg   *Config
	rng   *rand.Rand
	hosts []*host
	conns []*conn
	b     *builder
	b1    *builder // RoCE v1 frames of a V1Requester capture
	w     *capWriter
	tr    *tracker
	nowNs int64
	rate  int64 // Mbit/s
	// lastStart is when the previous packet passed the tap; lastCNP when
	// the last CNP did (hasCNP), for the NIC knobs.
	lastCNP  int64
	hasCNP   bool
	slowLeft int              // requests still slowed after the last CNP
	txStart  map[uint32]int64 // data request PSN → its last start (NIC knobs only)
	info     FrameInfo
	pause    *pauseGen // pause frames (Config.Pause), nil without
	wrap     *wrapping // --wrap (Config.Wrap; wrap.go), nil until the first frame
}

func newGenerator(cfg *Config, out io.Writer) (*generator, error) {
	g := &generator{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x726f6365))}
	g.rate = max(1, int64(cfg.Gbps*1000))
	g.b = newBuilder(cfg.Encap, cfg.Scenario == ScenarioMix)
	g.b.setPorts(cfg)
	g.tr = newTracker()
	reqAt, repAt := cfg.madOffsets()
	keep := cfg.SnapLen // bytes of a frame the capture keeps (0: all)
	if cfg.CutFrames > 0 && (keep == 0 || cfg.CutFrames < keep) {
		keep = cfg.CutFrames
	}
	// captured says whether the capture holds the n bytes at off of a
	// connection's CM message that starts at madAt; a REQ written short
	// (ShortMAD) is malformed and makes no connection.
	captured := func(c *conn, madAt, off, n int) bool {
		if cfg.ShortMAD > 0 && c.idx == 0 {
			return false
		}
		return keep == 0 || madAt+24+off+n <= keep
	}
	g.tr.sendPSN = func(c *conn) (uint32, bool) {
		// The REP's StartingPSN, where the requester's requests start,
		// when the capture holds it.
		return c.psnA, captured(c, repAt, 20, 3)
	}
	g.tr.ackTimeout = func(c *conn) (int64, bool) {
		// LocalACKTimeout 14 (mad.go), at byte 95 of the REQ's data.
		return 4096 << 14, captured(c, reqAt, 95, 1)
	}
	w, err := newCapWriter(out, cfg)
	if err != nil {
		return nil, err
	}
	g.w = w
	return g, nil
}

func scenarioKind(s string) opKind {
	switch s {
	case ScenarioReadBW:
		return kindRead
	case ScenarioSendBW:
		return kindSend
	case ScenarioAtomic:
		return kindAtomic
	case ScenarioUD:
		return kindUD
	}
	return kindWrite
}

const qpBase = 0x000110

// runSingle generates the one-connection scenarios with their impairments.
func (g *generator) runSingle() error {
	cfg := g.cfg
	g.hosts = []*host{newHost(0, cfg.Encap, g.rng), newHost(1, cfg.Encap, g.rng)}
	if cfg.V1Requester {
		mapGIDs(g.hosts)
	}
	c := newConn(0, g.hosts[0], g.hosts[1], scenarioKind(cfg.Scenario), cfg.MTU, g.rng, qpBase+uint32(g.rng.IntN(0x4000))*2)
	if cfg.StartPSN != nil {
		c.psnA = *cfg.StartPSN
	}
	g.conns = []*conn{c}
	gen := newConnGen(c, g.rng, cfg.Messages, cfg.MsgSize)
	var list []pkt
	var p pkt
	for gen.next(&p) {
		list = append(list, p)
	}
	if cfg.DC {
		c.dc = true
		list = withoutCM(list)
	}
	list, err := applyImpairments(list, &cfg.Impairments, c.psnA, &cfg.NIC)
	if err != nil {
		return err
	}
	for i := range list {
		if err := g.emit(&list[i]); err != nil {
			return err
		}
	}
	return nil
}

// runMix interleaves many RC connections: all CM setups, then the data of
// the connections picked at random packet by packet, then all teardowns,
// for exactly cfg.Packets frames. Memory does not grow with the packets.
func (g *generator) runMix() error {
	cfg := g.cfg
	pairs := max(1, cfg.QPs/4)
	for i := range 2 * pairs {
		g.hosts = append(g.hosts, newHost(i, cfg.Encap, g.rng))
	}
	if cfg.V1Requester {
		mapGIDs(g.hosts)
	}
	kinds := []opKind{kindWrite, kindWrite, kindSend, kindRead}
	switch cfg.MixOp {
	case "write":
		kinds = []opKind{kindWrite}
	case "send":
		kinds = []opKind{kindSend}
	case "read":
		kinds = []opKind{kindRead}
	}
	gens := make([]*connGen, cfg.QPs)
	for i := range cfg.QPs {
		pair := i % pairs
		a, b := g.hosts[2*pair], g.hosts[2*pair+1]
		if (i/pairs)%2 == 1 {
			a, b = b, a
		}
		c := newConn(i, a, b, kinds[g.rng.IntN(len(kinds))], cfg.MTU, g.rng, qpBase)
		g.conns = append(g.conns, c)
		gens[i] = newConnGen(c, g.rng, 0, cfg.MsgSize)
	}
	if cfg.Impairments.any() {
		return g.runImpairedMix(gens) // miximpair.go
	}
	var p pkt
	emitted := 0
	for _, gen := range gens { // REQ, REP, RTU
		for range 3 {
			gen.next(&p)
			if err := g.emit(&p); err != nil {
				return err
			}
			emitted++
		}
	}
	for data := cfg.Packets - 5*cfg.QPs; data > 0; data-- {
		gen := gens[g.rng.IntN(len(gens))]
		gen.next(&p)
		if err := g.emit(&p); err != nil {
			return err
		}
	}
	for _, gen := range gens { // DREQ, DREP
		gen.teardown()
		for range 2 {
			gen.next(&p)
			if err := g.emit(&p); err != nil {
				return err
			}
		}
	}
	return nil
}

// emit writes one packet and records it in the truth.
func (g *generator) emit(p *pkt) error {
	g.nowNs += p.delayNs
	if p.sinceTxNs > 0 {
		if t, ok := g.txStart[p.psn]; ok {
			g.nowNs = max(g.nowNs, t+p.sinceTxNs)
		}
	}
	if p.op.IsCNP() && !p.extraCNP && g.cfg.NIC.CNPIntervalNs > 0 && g.hasCNP && g.nowNs-g.lastCNP < g.cfg.NIC.CNPIntervalNs {
		return nil // the NIC's CNP rate limit
	}
	stretch := 0.0
	if g.cfg.NIC.any() {
		if p.op.IsCNP() {
			g.lastCNP, g.hasCNP = g.nowNs, true
			g.slowLeft = nicWindow
		}
		if p.dataReq() {
			if g.txStart == nil {
				g.txStart = make(map[uint32]int64)
			}
			g.txStart[p.psn] = g.nowNs
			if g.slowLeft > 0 && g.cfg.NIC.RateCut > 0 {
				stretch = 1/g.cfg.NIC.RateCut - 1
				g.slowLeft--
			}
		}
	}
	if g.cfg.NIC.Tap == TapRequester {
		p.ce = false // marked after the requester's port
	}
	ts := StartTime.Add(time.Duration(g.nowNs))
	b := g.builderFor(p)
	short := g.shortMAD(p)
	if short {
		b.shortMAD = g.cfg.ShortMAD
	}
	frame, err := b.build(p, ts)
	b.shortMAD = 0
	if err != nil {
		return err
	}
	wire := ((int64(len(frame))+24)*8*1000 + g.rate - 1) / g.rate
	if p.hidden {
		g.nowNs += wire // sent, lost before the tap
		return nil
	}
	if err := g.pausesUntil(g.nowNs); err != nil { // the pause frames before this one
		return err
	}
	inner := frame
	if len(g.cfg.Wrap) > 0 { // as a mirror or an overlay delivers it (wrap.go)
		if frame, err = g.wrapFrame(frame, ts); err != nil {
			return err
		}
	}
	data, orig, cut := g.toolCut(frame)
	if s := g.cfg.SnapLen; s > 0 && len(data) > s {
		data = data[:s]
	}
	if err := g.w.write(ts, data, orig); err != nil {
		return err
	}
	recorded := orig
	orig = len(frame) // the wire length, whatever the tool recorded
	status := layers.ICRCOK
	switch {
	case len(data) < orig-b.trailerAfterICRC():
		status = layers.ICRCUnverifiable
	case p.corrupt:
		status = layers.ICRCBad
	}
	// The ERF record header carries the timestamp: a duplicated packet is
	// the same IB packet in a new record.
	pktBytes := data
	if g.cfg.Encap == EncapERF && len(pktBytes) >= layers.ERFHeaderLen {
		pktBytes = pktBytes[layers.ERFHeaderLen:]
	}
	if len(g.cfg.Wrap) > 0 {
		pktBytes, orig = g.unwrapped(inner, len(data)) // the truth is of the frame inside
	}
	g.tr.noteArtefact(cut, short)
	if short {
		g.tr.truth.Frames++ // malformed: in no flow
	} else {
		g.tr.now, g.tr.origLen = writtenTime(ts, g.cfg).UnixNano(), orig
		fs := g.tr.add(p, pktBytes, status)
		g.pauseFlow(fs, p, pktBytes)
		if g.cfg.SnifferSrcPort && status == layers.ICRCOK {
			g.tr.portRewritten(p)
		}
	}
	if g.cfg.OnFrame != nil {
		g.frameInfo(p, ts, data, recorded, status)
		g.info.Encap, g.info.ToolCut, g.info.Malformed = b.encap, cut, short
		g.cfg.OnFrame(&g.info)
	}
	g.nowNs += wire + int64(float64(wire)*stretch)
	return nil
}

func (g *generator) frameInfo(p *pkt, ts time.Time, data []byte, orig int, st layers.ICRCStatus) {
	src, dst := p.c.a, p.c.b
	if p.fromB {
		src, dst = dst, src
	}
	g.info = FrameInfo{Index: g.tr.truth.Frames, Timestamp: ts, CaptureLength: len(data), Length: orig,
		Src: src.addr, Dst: dst.addr, Opcode: p.op, DestQP: p.destQP, PSN: p.psn, AckReq: p.ackReq,
		ECNCE: p.ce, ICRC: st, VA: p.va, RKey: p.rkey, DMALength: p.dmaLen, Syndrome: p.aeth, MSN: p.msn,
		QKey: p.qkey, SrcQP: p.srcQP, Immediate: p.imm, PayloadLen: p.payLen, CM: cmNames[p.cm], Data: data}
	if g.cfg.Encap.RoCEv2() {
		g.info.SrcPort, g.info.SrcPortRewritten = srcPort(p), g.cfg.SnifferSrcPort
	}
}

// capWriter writes pcap or pcapng records.
type capWriter struct {
	bw *bufio.Writer
	pw *pcapgo.Writer
	ng *pcapgo.NgWriter
	ci gopacket.CaptureInfo
}

func newCapWriter(out io.Writer, cfg *Config) (*capWriter, error) {
	w := &capWriter{}
	lt := linkType(cfg.Encap)
	snap := uint32(cfg.SnapLen)
	if cfg.Format == FormatPcapNG {
		intf := pcapgo.NgInterface{Name: "roce-synth", LinkType: lt, SnapLength: snap, TimestampResolution: 9}
		opts := pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "roce-synth"}}
		ng, err := pcapgo.NewNgWriterInterface(out, intf, opts)
		if err != nil {
			return nil, fmt.Errorf("synth: pcapng: %w", err)
		}
		w.ng = ng
		return w, nil
	}
	if snap == 0 {
		snap = 262144
	}
	w.bw = bufio.NewWriterSize(out, 1<<20)
	if cfg.Nanos {
		w.pw = pcapgo.NewWriterNanos(w.bw)
	} else {
		w.pw = pcapgo.NewWriter(w.bw)
	}
	if err := w.pw.WriteFileHeader(snap, lt); err != nil {
		return nil, fmt.Errorf("synth: pcap: %w", err)
	}
	return w, nil
}

func (w *capWriter) write(ts time.Time, data []byte, orig int) error {
	w.ci = gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(data), Length: orig}
	if w.ng != nil {
		return w.ng.WritePacket(w.ci, data)
	}
	return w.pw.WritePacket(w.ci, data)
}

func (w *capWriter) flush() error {
	if w.ng != nil {
		return w.ng.Flush()
	}
	return w.bw.Flush()
}

// madOffset is where the MAD of a CM packet (UD SEND_ONLY with DETH)
// starts in the frame of each encapsulation.
func madOffset(e Encap) int {
	const ib = layers.BTHLen + layers.DETHLen
	switch e {
	case EncapIPv6:
		return 14 + 40 + 8 + ib
	case EncapVLAN:
		return 18 + 20 + 8 + ib
	case EncapRoCEv1:
		return 14 + layers.GRHLen + ib
	case EncapIB:
		return layers.LRHLen + ib
	case EncapERF:
		return layers.ERFHeaderLen + layers.LRHLen + ib
	}
	return 14 + 20 + 8 + ib
}

// connectionTruth is what a capture shows of a connection: a snap length
// that cuts the REQ or REP inside its fixed fields hides the fields beyond
// it (reported as zero, with Truncated set); a REQ cut before its
// LocalCommID hides the connection.
func connectionTruth(c *conn, cfg *Config) (Connection, bool) {
	reqOff, repOff := cfg.madOffsets()
	snap := cfg.cutAt()
	data := reqOff + 24 // start of the MAD data
	seen := func(off, n int) bool { return snap == 0 || data+off+n <= snap }
	repSeen := func(off, n int) bool { return snap == 0 || repOff+24+off+n <= snap }
	if !seen(0, 4) {
		return Connection{}, false
	}
	cn := Connection{
		Requester: Endpoint{IP: c.a.addr},
		Responder: Endpoint{IP: c.b.addr},
		State:     "disconnected",
	}
	if seen(32, 3) { // REQ LocalQPN
		cn.Requester.QPN = ptrTo(c.qa)
	}
	if seen(44, 3) { // REQ StartingPSN: where B's requests start
		cn.Requester.StartingPSN = ptrTo(c.psnB)
		cn.Responder.SendPSN = ptrTo(c.psnB)
	}
	if seen(50, 1) { // REQ PathMTU
		cn.PathMTU = ptrTo(c.mtu)
	}
	if repSeen(12, 3) { // REP LocalQPN
		cn.Responder.QPN = ptrTo(c.qb)
	}
	if repSeen(20, 3) { // REP StartingPSN: where A's requests start
		cn.Responder.StartingPSN = ptrTo(c.psnA)
		cn.Requester.SendPSN = ptrTo(c.psnA)
	}
	if !seen(72, 16) { // through the REQ's primary GIDs
		cn.CutMessages = append(cn.CutMessages, "REQ")
	}
	if repSeen(4, 4) && !repSeen(20, 3) { // a REP cut before its RemoteCommID is no one's
		cn.CutMessages = append(cn.CutMessages, "REP")
	}
	cn.Truncated = len(cn.CutMessages) > 0
	if !repSeen(4, 4) { // the REP cannot be paired: nothing after the REQ is
		cn.State, cn.Responder.QPN, cn.Responder.StartingPSN, cn.Requester.SendPSN = "requested", nil, nil, nil
	}
	return cn, true
}
