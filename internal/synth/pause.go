package synth

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/roce-dissect/roce-dissect/layers"
)

// Pause frames: IEEE 802.1Qbb Priority Flow Control and 802.3x PAUSE,
// written among the RoCE traffic (issue 21).
//
// A pause frame is an untagged Ethernet MAC Control frame, 60 bytes (the
// minimum frame without FCS): destination 01:80:C2:00:00:01, source the
// sender's MAC, EtherType 0x8808, then the opcode (2 bytes). Opcode
// 0x0001 (PAUSE) is followed by pause_time (2 bytes); opcode 0x0101 (PFC)
// by the class-enable vector (2 bytes, bit i = priority i) and eight
// 2-byte times, priority 0 to 7. The rest is zeros. Times are in quanta
// of 512 bit times at the link speed (PauseConfig.LinkSpeedGbps): 5.12 ns
// at 100 Gbit/s. A time of 0 is an XON (resume), above 0 an XOFF.
//
// Each PauseStream has Senders senders, each with its own MAC, and each
// sender pauses in Episodes episodes: the first starts at a time drawn
// from StartNs after StartTime; an episode of length L (drawn from
// PauseNs) is an XOFF at its start and again every RefreshNs while the
// episode lasts (a switch re-sends XOFF before the previous one expires),
// then, unless NoXON, an XON at start + L; without it the pause expires
// with the last XOFF's time. The next episode starts a gap (drawn from
// GapNs) after start + L. The draws come from Config.Seed through a
// random source of their own: the RoCE traffic is the same frames at the
// same times with or without pause frames. The pause frames do not slow
// the RoCE traffic down; they are written in time order among its frames
// (a pause frame before a RoCE frame of the same time), and after its last
// frame until the last pause frame.
//
// The truth (truthpause.go) is computed from the bytes and timestamps
// written.

// PauseKind is the kind of pause frames of a stream.
type PauseKind uint8

// Pause frame kinds.
const (
	PausePFC   PauseKind = iota // IEEE 802.1Qbb Priority Flow Control, opcode 0x0101
	Pause8023x                  // IEEE 802.3x PAUSE, opcode 0x0001
)

// String returns the truth's name of the kind: "pfc" or "802.3x".
func (k PauseKind) String() string {
	if k == Pause8023x {
		return "802.3x"
	}
	return "pfc"
}

// The pause frame's fixed fields (the EtherType and opcodes are the
// layers': layers.EthernetTypeMACControl, layers.MACControlOpcodePause
// and layers.MACControlOpcodePFC).
const (
	pauseFrameLen = 60 // the minimum Ethernet frame, no FCS
	// pauseFieldsEnd is where a PFC frame's times end: the bytes a
	// capture must hold to show every field.
	pauseFieldsEnd = 14 + 2 + 2 + 16
)

// pauseDst is the MAC Control multicast address.
var pauseDst = net.HardwareAddr{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01}

// PauseStream is one --pfc, --pause or --pfc-storm flag. Zero fields take
// the defaults given.
type PauseStream struct {
	Kind PauseKind
	// Storm marks a --pfc-storm: episodes default to one of 5/4 of the
	// storm threshold, and each must be longer than the threshold.
	Storm bool
	// Priorities are the PFC priorities paused (0…7; the class-enable
	// bits), default {3}, the RoCE data priority. Not used by 802.3x.
	Priorities []int
	// Senders is the number of senders, each with its own source MAC
	// 02:50:46:43:SS:NN (SS the stream's place among the streams from 1,
	// NN the sender's from 1); default 1.
	Senders int
	// Quanta is the time of every XOFF (per enabled priority for PFC),
	// 1…65535, default 65535.
	Quanta uint16
	// RefreshNs is the interval between the XOFFs of an episode; default
	// half the XOFF time at the link speed.
	RefreshNs int64
	// PauseNs, GapNs and StartNs are ranges [lo, hi], each drawn uniformly
	// per episode (StartNs once per sender): the episode's length (default
	// 10 µs; a storm's 5/4 of the threshold), the time from an episode's end
	// to the next one's start (default 10 µs) and the first episode's start
	// after StartTime (default 0).
	PauseNs, GapNs, StartNs [2]int64
	// Episodes per sender; default 3 (a storm's 1).
	Episodes int
	// NoXON ends the episodes without an XON: the last XOFF expires.
	NoXON bool
}

// PauseConfig is the pause frames of a capture. The zero value writes
// none.
type PauseConfig struct {
	Streams []PauseStream
	// LinkSpeedGbps is the link speed the pause quanta are timed at
	// (one quantum = 512 bit times), default 100.
	LinkSpeedGbps float64
	// StormThresholdNs is the storm threshold of the truth: a pause
	// stretch longer than it is a storm; default 200 ms.
	StormThresholdNs int64
}

// Pause defaults.
const (
	DefaultLinkSpeedGbps    = 100
	DefaultStormThresholdNs = int64(200 * time.Millisecond)
	DefaultPauseQuanta      = 65535
	DefaultPauseEpisodes    = 3
	DefaultPauseNs          = int64(10 * time.Microsecond)
	DefaultPauseGapNs       = int64(10 * time.Microsecond)
	defaultPFCPriority      = vlanPCP
	maxPauseFrames          = 1 << 20
	maxPauseSenders         = 255
)

func (pc *PauseConfig) any() bool { return len(pc.Streams) > 0 }

// linkBps is the link speed in bit/s.
func (pc *PauseConfig) linkBps() int64 { return int64(pc.LinkSpeedGbps*1e9 + 0.5) }

// pauseDurationNs is how long q quanta pause a link of bps bit/s:
// floor(q × 512 × 10⁹ / bps) ns.
func pauseDurationNs(q uint16, bps int64) int64 { return int64(q) * 512 * 1e9 / bps }

// normalize fills in the defaults and checks the pause configuration of c.
func (pc *PauseConfig) normalize(c *Config) error {
	if pc.LinkSpeedGbps == 0 {
		pc.LinkSpeedGbps = DefaultLinkSpeedGbps
	}
	if pc.LinkSpeedGbps < 0.001 || pc.LinkSpeedGbps > 1e6 {
		return fmt.Errorf("synth: %w: --link-speed %g Gbit/s", ErrConfig, pc.LinkSpeedGbps)
	}
	if pc.StormThresholdNs == 0 {
		pc.StormThresholdNs = DefaultStormThresholdNs
	}
	if pc.StormThresholdNs < 0 {
		return fmt.Errorf("synth: %w: negative storm threshold", ErrConfig)
	}
	if !pc.any() {
		return nil
	}
	if c.Encap.Native() {
		return fmt.Errorf("synth: %w: pause frames are Ethernet frames: not with --encap %s", ErrConfig, c.Encap)
	}
	if c.SnapLen > 0 && c.SnapLen < pauseFrameLen {
		return fmt.Errorf("synth: %w: pause frames need --snaplen 0 or %d and more (they stay whole)", ErrConfig, pauseFrameLen)
	}
	if len(pc.Streams) > 255 {
		return fmt.Errorf("synth: %w: %d pause streams (at most 255)", ErrConfig, len(pc.Streams))
	}
	pc.Streams = slices.Clone(pc.Streams) // the caller's stay as they are
	for i := range pc.Streams {
		s := &pc.Streams[i]
		s.Priorities = slices.Clone(s.Priorities)
		if err := s.normalize(pc); err != nil {
			return fmt.Errorf("synth: %w: %s (pause stream %d): %v", ErrConfig, s.flag(), i+1, err)
		}
	}
	return nil
}

func (s *PauseStream) flag() string {
	switch {
	case s.Storm:
		return "--pfc-storm"
	case s.Kind == Pause8023x:
		return "--pause"
	}
	return "--pfc"
}

func (s *PauseStream) normalize(pc *PauseConfig) error {
	if s.Kind > Pause8023x {
		return fmt.Errorf("kind %d", s.Kind)
	}
	if s.Kind == Pause8023x {
		if s.Storm {
			return fmt.Errorf("a storm is PFC")
		}
		if len(s.Priorities) > 0 {
			return fmt.Errorf("802.3x PAUSE has no priorities")
		}
	} else if len(s.Priorities) == 0 {
		s.Priorities = []int{defaultPFCPriority}
	}
	for i, p := range s.Priorities {
		if p < 0 || p > 7 {
			return fmt.Errorf("priority %d (want 0…7)", p)
		}
		if slices.Contains(s.Priorities[:i], p) {
			return fmt.Errorf("priority %d given twice", p)
		}
	}
	if s.Senders == 0 {
		s.Senders = 1
	}
	if s.Senders < 0 || s.Senders > maxPauseSenders {
		return fmt.Errorf("%d senders (want 1…%d)", s.Senders, maxPauseSenders)
	}
	if s.Quanta == 0 {
		s.Quanta = DefaultPauseQuanta
	}
	if s.RefreshNs == 0 {
		s.RefreshNs = max(1, pauseDurationNs(s.Quanta, pc.linkBps())/2)
	}
	if s.Episodes == 0 {
		s.Episodes = DefaultPauseEpisodes
		if s.Storm {
			s.Episodes = 1
		}
	}
	if s.PauseNs == [2]int64{} {
		s.PauseNs = [2]int64{DefaultPauseNs, DefaultPauseNs}
		if s.Storm {
			d := pc.StormThresholdNs + pc.StormThresholdNs/4
			s.PauseNs = [2]int64{d, d}
		}
	}
	if s.GapNs == [2]int64{} {
		s.GapNs = [2]int64{DefaultPauseGapNs, DefaultPauseGapNs}
	}
	switch {
	case s.RefreshNs < 0:
		return fmt.Errorf("negative refresh interval")
	case s.Episodes < 0:
		return fmt.Errorf("%d episodes", s.Episodes)
	case s.PauseNs[0] <= 0:
		return fmt.Errorf("pause length %v (want more than 0)", time.Duration(s.PauseNs[0]))
	}
	for _, r := range []*[2]int64{&s.PauseNs, &s.GapNs, &s.StartNs} {
		if r[0] < 0 || r[1] < r[0] {
			return fmt.Errorf("range %v-%v", time.Duration(r[0]), time.Duration(r[1]))
		}
	}
	if s.Storm {
		if s.PauseNs[0] <= pc.StormThresholdNs {
			return fmt.Errorf("pause %v is not longer than the storm threshold %v (use --pfc for shorter pauses)",
				time.Duration(s.PauseNs[0]), time.Duration(pc.StormThresholdNs))
		}
		if s.RefreshNs > pauseDurationNs(s.Quanta, pc.linkBps()) {
			return fmt.Errorf("refresh %v is longer than the XOFF time %v: the pause would break",
				time.Duration(s.RefreshNs), time.Duration(pauseDurationNs(s.Quanta, pc.linkBps())))
		}
	}
	return nil
}

// pauseMAC is the source MAC of sender n of stream s (both from 0).
func pauseMAC(s, n int) net.HardwareAddr {
	return net.HardwareAddr{0x02, 0x50, 0x46, 0x43, byte(s + 1), byte(n + 1)}
}

// PauseInfo describes a pause frame to Config.OnFrame (FrameInfo.Pause).
type PauseInfo struct {
	Kind PauseKind
	// Opcode is 0x0001 (PAUSE) or 0x0101 (PFC).
	Opcode uint16
	// ClassEnable is the PFC class-enable vector.
	ClassEnable uint16
	// Quanta are the PFC times of priorities 0…7; a PAUSE's pause_time
	// is Quanta[0].
	Quanta [8]uint16
}

// pauseFrame is one scheduled pause frame.
type pauseFrame struct {
	t              int64 // ns after StartTime
	stream, sender int
	xon            bool
}

// pauseGen writes the scheduled pause frames among the RoCE frames.
type pauseGen struct {
	cfg    *PauseConfig
	frames []pauseFrame
	next   int
	buf    gopacket.SerializeBuffer
	eth    gplayers.Ethernet
	mc     layers.MACControl
	src    [6]byte   // pg.eth's SrcMAC
	info   PauseInfo // the last frame's; Config.OnFrame gets a copy of its own
	truth  *pauseTruth
}

// schedule draws the pause frames of pc from seed, in time order (frames
// of the same time in stream, sender and episode order).
func (pc *PauseConfig) schedule(seed uint64) ([]pauseFrame, error) {
	rng := rand.New(rand.NewPCG(seed, 0x7061757365)) // "pause"
	draw := func(r [2]int64) int64 {
		if r[1] == r[0] {
			return r[0]
		}
		return r[0] + rng.Int64N(r[1]-r[0]+1)
	}
	var out []pauseFrame
	for si, s := range pc.Streams {
		for n := range s.Senders {
			t := draw(s.StartNs)
			for range s.Episodes {
				l := draw(s.PauseNs)
				for x := t; x < t+l; x += s.RefreshNs {
					out = append(out, pauseFrame{t: x, stream: si, sender: n})
					if len(out) > maxPauseFrames {
						return nil, fmt.Errorf("synth: %w: more than %d pause frames: fewer episodes, shorter pauses or a longer refresh", ErrConfig, maxPauseFrames)
					}
				}
				if !s.NoXON {
					out = append(out, pauseFrame{t: t + l, stream: si, sender: n, xon: true})
				}
				t += l + draw(s.GapNs)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b pauseFrame) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return 0
	})
	return out, nil
}

// encode writes the bytes of f into pg.buf and what they carry into
// pg.info, and returns the bytes.
func (pg *pauseGen) encode(f *pauseFrame) ([]byte, error) {
	s := &pg.cfg.Streams[f.stream]
	q := s.Quanta
	if f.xon {
		q = 0
	}
	pg.info = PauseInfo{Kind: s.Kind, Opcode: uint16(layers.MACControlOpcodePause)}
	if s.Kind == PausePFC {
		pg.info.Opcode = uint16(layers.MACControlOpcodePFC)
		for _, p := range s.Priorities {
			pg.info.ClassEnable |= 1 << p
			pg.info.Quanta[p] = q
		}
	} else {
		pg.info.Quanta[0] = q
	}
	return pg.serialize(pauseMAC(f.stream, f.sender), &pg.info)
}

// serialize writes the 60-byte pause frame of info from src into pg.buf
// with the layers (Ethernet, then MACControl padded to the minimum
// frame) and returns its bytes, valid until the next call.
func (pg *pauseGen) serialize(src net.HardwareAddr, info *PauseInfo) ([]byte, error) {
	copy(pg.src[:], src) // pg.eth keeps its SrcMAC: a copy, so that src stays off the heap
	pg.eth = gplayers.Ethernet{DstMAC: pauseDst, SrcMAC: pg.src[:], EthernetType: layers.EthernetTypeMACControl}
	pg.mc = layers.MACControl{Opcode: layers.MACControlOpcode(info.Opcode)}
	if pg.mc.Opcode == layers.MACControlOpcodePFC {
		pg.mc.ClassEnableVector, pg.mc.PauseTimes = info.ClassEnable, info.Quanta
	} else {
		pg.mc.PauseTime = info.Quanta[0]
	}
	if err := gopacket.SerializeLayers(pg.buf, gopacket.SerializeOptions{FixLengths: true}, &pg.eth, &pg.mc); err != nil {
		return nil, fmt.Errorf("synth: serializing a pause frame: %w", err)
	}
	return pg.buf.Bytes(), nil
}

// initPause schedules the pause frames of the configuration, if any.
func (g *generator) initPause() error {
	pc := &g.cfg.Pause
	if !pc.any() {
		return nil
	}
	frames, err := pc.schedule(g.cfg.Seed)
	if err != nil {
		return err
	}
	g.pause = &pauseGen{cfg: pc, frames: frames, truth: newPauseTruth(pc),
		buf: gopacket.NewSerializeBufferExpectedSize(pauseFieldsEnd, pauseFrameLen-pauseFieldsEnd)} // headers and fields prepended, padding appended
	return nil
}

// pausesUntil writes the pause frames scheduled at or before t (ns after
// StartTime), each counted in the truth as the next frame.
func (g *generator) pausesUntil(t int64) error {
	pg := g.pause
	if pg == nil {
		return nil
	}
	for pg.next < len(pg.frames) && pg.frames[pg.next].t <= t {
		f := &pg.frames[pg.next]
		pg.next++
		data, err := pg.encode(f)
		if err != nil {
			return err
		}
		ts := StartTime.Add(time.Duration(f.t))
		if err := g.w.write(ts, data, len(data)); err != nil {
			return err
		}
		g.tr.truth.Frames++
		pg.truth.add(g.tr.truth.Frames, writtenTime(ts, g.cfg).UnixNano(), data)
		if g.cfg.OnFrame != nil {
			info := pg.info // on the heap only for the callback, which may keep it
			g.info = FrameInfo{Index: g.tr.truth.Frames, Timestamp: ts, CaptureLength: len(data), Length: len(data),
				Src: net.HardwareAddr(data[6:12]).String(), Dst: pauseDst.String(), Encap: g.cfg.Encap, Pause: &info, Data: data}
			g.cfg.OnFrame(&g.info)
		}
	}
	return nil
}

// pauseFlow records a RoCE packet of the truth's flow fs for the flows'
// paused time: p as written in frame (its Ethernet bytes) at the
// tracker's time.
func (g *generator) pauseFlow(fs *flowState, p *pkt, frame []byte) {
	if g.pause == nil {
		return
	}
	fs.pause.packet(g.tr.now, frame, p.op.IsCNP())
}

// finishPause writes the remaining pause frames' truth: the per-sender
// statistics, the storms and their findings, the flows' paused time. It
// runs before the tracker's finish (which sorts the findings).
func (g *generator) finishPause() {
	if g.pause == nil {
		return
	}
	g.pause.truth.finish(g.tr)
}

// addPauseFlags adds the pause frame flags to roce-synth.
func addPauseFlags(fs *flag.FlagSet, v *cliFlags) {
	pc := &v.cfg.Pause
	add := func(kind PauseKind, storm bool) func(string) error {
		return func(s string) error {
			st, err := ParsePauseSpec(kind, storm, s)
			if err == nil {
				pc.Streams = append(pc.Streams, st)
			}
			return err
		}
	}
	fs.Func("pfc", "add PFC (802.1Qbb) pause frames, repeatable; `SPEC` is \"on\" or comma-separated key=value,\n"+
		"a leading bare value being prio (\"3\", \"3+4,senders=2,pause=5us-50us\"):\n"+
		"  prio=P[+P…]     priorities paused, 0…7 (default 3, the RoCE data priority)\n"+
		"  senders=N       senders, each with its own MAC 02:50:46:43:SS:NN (default 1)\n"+
		"  quanta=Q        XOFF time of each frame, 1…65535 quanta of 512 bit times (default 65535)\n"+
		"  refresh=DUR     XOFF re-sent every DUR during an episode (default half the XOFF time)\n"+
		"  pause=DUR[-DUR] episode length, or a range drawn per episode (default 10us)\n"+
		"  gap=DUR[-DUR]   from an episode's end to the next one's start (default 10us)\n"+
		"  episodes=N      episodes per sender (default 3)\n"+
		"  start=DUR[-DUR] first episode's start after the capture's (default 0)\n"+
		"  xon=yes|no      an XON (quanta 0) ends each episode, else the last XOFF expires (default yes)",
		add(PausePFC, false))
	fs.Func("pause", "add 802.3x PAUSE frames, repeatable; `SPEC` as --pfc's without prio", add(Pause8023x, false))
	fs.Func("pfc-storm", "add a PFC storm, repeatable: `SPEC` as --pfc's, by default one episode of 5/4 of --storm-threshold\n"+
		"(\"3\": priority 3 paused 250 ms without a break); an episode must be longer than the threshold", add(PausePFC, true))
	fs.Float64Var(&pc.LinkSpeedGbps, "link-speed", DefaultLinkSpeedGbps, "link speed the pause quanta are timed at, in `Gbit/s` (a quantum is 512 bit times)")
	fs.Func("storm-threshold", "a pause stretch longer than `DUR` is a storm in the truth (default 200ms)", func(s string) error {
		d, err := time.ParseDuration(s)
		if err == nil && d <= 0 {
			err = fmt.Errorf("want a positive duration")
		}
		pc.StormThresholdNs = int64(d)
		return err
	})
}

// ParsePauseSpec parses the SPEC of --pfc (kind PausePFC), --pause
// (Pause8023x) or --pfc-storm (PausePFC, storm): "on" for the defaults,
// or comma-separated key=value (prio, senders, quanta, refresh, pause,
// gap, episodes, start, xon; see PauseStream), where a first item without
// "=" is the PFC priorities. Priorities are joined by "+"; durations are
// Go durations ("5us", "1.5ms"), ranges "LO-HI".
func ParsePauseSpec(kind PauseKind, storm bool, spec string) (PauseStream, error) {
	s := PauseStream{Kind: kind, Storm: storm}
	if spec == "on" {
		return s, nil
	}
	seen := map[string]bool{}
	for i, item := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			if i > 0 || kind != PausePFC {
				return s, fmt.Errorf("want key=value, got %q", item)
			}
			k, v = "prio", k
		}
		if seen[k] {
			return s, fmt.Errorf("%s given twice", k)
		}
		seen[k] = true
		var err error
		switch k {
		case "prio":
			if kind != PausePFC {
				return s, fmt.Errorf("802.3x PAUSE has no priorities")
			}
			for f := range strings.SplitSeq(v, "+") {
				var p int
				if p, err = strconv.Atoi(f); err != nil || p < 0 || p > 7 {
					return s, fmt.Errorf("priority %q (want 0…7)", f)
				}
				s.Priorities = append(s.Priorities, p)
			}
		case "senders":
			s.Senders, err = positive(v, maxPauseSenders)
		case "episodes":
			s.Episodes, err = positive(v, maxPauseFrames)
		case "quanta":
			var q int
			if q, err = positive(v, 65535); err == nil {
				s.Quanta = uint16(q)
			}
		case "refresh":
			var d time.Duration
			if d, err = time.ParseDuration(v); err == nil && d <= 0 {
				err = fmt.Errorf("want a positive duration")
			}
			s.RefreshNs = int64(d)
		case "pause":
			s.PauseNs, err = parseDurationRange(v)
			if err == nil && s.PauseNs[0] == 0 {
				err = fmt.Errorf("want a positive duration")
			}
		case "gap":
			s.GapNs, err = parseDurationRange(v)
		case "start":
			s.StartNs, err = parseDurationRange(v)
		case "xon":
			switch v {
			case "yes", "true", "1":
			case "no", "false", "0":
				s.NoXON = true
			default:
				err = fmt.Errorf("want yes or no")
			}
		default:
			return s, fmt.Errorf("unknown key %q (want prio, senders, quanta, refresh, pause, gap, episodes, start or xon)", k)
		}
		if err != nil {
			return s, fmt.Errorf("%s=%s: %w", k, v, err)
		}
	}
	return s, nil
}

// positive parses an integer in 1…hi.
func positive(s string, hi int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > hi {
		return 0, fmt.Errorf("want a number from 1 to %d", hi)
	}
	return n, nil
}

// parseDurationRange parses "DUR" or "LO-HI" (Go durations, not negative).
func parseDurationRange(s string) ([2]int64, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	a, err := time.ParseDuration(lo)
	if err != nil {
		return [2]int64{}, err
	}
	b := a
	if isRange {
		if b, err = time.ParseDuration(hi); err != nil {
			return [2]int64{}, err
		}
	}
	if a < 0 || b < a {
		return [2]int64{}, fmt.Errorf("want LO-HI with 0 ≤ LO ≤ HI")
	}
	return [2]int64{int64(a), int64(b)}, nil
}
