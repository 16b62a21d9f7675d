package ncclsynth

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/internal/outfile"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// Usage is the help of "roce-synth nccl".
const Usage = `usage: roce-synth nccl --ranks N [flags]

Writes an NCCL job's per-host captures, one per rank, PREFIX.rankR.pcap(ng),
and its truth PREFIX.truth.json (PREFIX: -o, default "nccl"): ring
collectives over NCCL's net_ib transport (CTS writes into the sender's
FIFO, data written with immediate to the buffer the CTS named, ACKs).

flags:
`

// cliFlags holds the values of a command line.
type cliFlags struct {
	cfg                     Config
	prefix, format, encap   string
	imm, colls, offsets     string
	hostLate, gpuLate, slow string
	loss, pfc, ring         string
}

func newFlagSet(v *cliFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("roce-synth nccl", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	c := &v.cfg
	fs.StringVar(&v.prefix, "o", "nccl", "output `prefix`: PREFIX.rank0.pcap … and PREFIX.truth.json")
	fs.IntVar(&c.Ranks, "ranks", 0, "ranks (hosts), 3 to 64")
	fs.IntVar(&c.Channels, "channels", 1, "channels (rings), 1 to 32")
	fs.IntVar(&c.QPs, "qps", 1, "NCCL_IB_QPS_PER_CONNECTION: data QPs per connection, messages round-robin over them")
	fs.StringVar(&c.Layout, "layout", DefaultLayout, "FIFO entry layout of the CTS: "+strings.Join(layoutNames(), ", "))
	fs.StringVar(&v.imm, "imm", "", "byte order of the immediate: host (little-endian, NCCL ≤ 2.28) or big (≥ 2.29.2); default big for layout 2.30, else host")
	fs.StringVar(&v.colls, "coll", "all_reduce:1048576", "the collectives in turn: comma-separated `KIND:BYTES[:ALGORITHM]` (S as nccl-tests defines it; K, M, G suffixes), KIND one of "+strings.Join(Kinds(), ", ")+"; ALGORITHM ring (default) or tree (all_reduce on the double binary tree)")
	fs.StringVar(&v.format, "format", "pcap", "capture format: pcap or pcapng")
	fs.BoolVar(&c.Nanos, "nanos", false, "nanosecond pcap timestamps (pcapng always has ns)")
	fs.IntVar(&c.SnapLen, "snaplen", 0, "cut frames to `N` bytes; 0 keeps them whole")
	fs.StringVar(&v.encap, "encap", "ipv4", "encapsulation: ipv4, ipv6 or vlan (RoCE v2)")
	fs.IntVar(&c.MTU, "mtu", DefaultMTU, "path MTU: 256, 512, 1024, 2048 or 4096")
	fs.Float64Var(&c.Gbps, "gbps", DefaultGbps, "link rate, Gbit/s")
	fs.DurationVar(&c.LinkDelay, "link-delay", defaultDelay, "one-way delay from a sender's capture to the receiver's")
	fs.DurationVar(&c.Gap, "gap", defaultGap, "idle time between collectives")
	fs.Uint64Var(&c.Seed, "seed", 1, "random seed (same seed, same bytes)")
	fs.StringVar(&v.offsets, "clock-offset", "", "capture clocks ahead of true time: comma-separated `RANK=DURATION`")
	fs.StringVar(&v.hostLate, "host-late", "", "ranks whose host enqueues each collective late (their CTS late): comma-separated `RANK=DURATION`")
	fs.StringVar(&v.gpuLate, "gpu-late", "", "ranks whose GPU starts each collective late (CTS on time, data late): comma-separated `RANK=DURATION`")
	fs.StringVar(&v.slow, "slow-link", "", "links from these ranks to their ring successor sent at the link rate divided by FACTOR: comma-separated `RANK=FACTOR`")
	fs.StringVar(&v.loss, "loss", "", "links from these ranks to their ring successor lose every EVERY-th data packet after the sender's capture (NAK, go-back-N resend): comma-separated `RANK=EVERY`")
	fs.StringVar(&v.pfc, "pfc", "", "the switch pauses these ranks with a PFC frame of QUANTA (priority 3) after every EVERY-th data packet to their ring successor: comma-separated `RANK=EVERY:QUANTA`")
	fs.StringVar(&v.ring, "ring", "", "the ranks in ring order, comma-separated (default 0, 1, …, N-1)")
	return fs
}

// ParseArgs parses the flags of "roce-synth nccl" (after "nccl"): the
// configuration and the output prefix; flag.ErrHelp when help was asked
// for.
func ParseArgs(args []string) (Config, string, error) {
	var v cliFlags
	fs := newFlagSet(&v)
	if err := fs.Parse(args); err != nil {
		return Config{}, "", err
	}
	if fs.NArg() > 0 {
		return Config{}, "", fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c := v.cfg
	var err error
	if c.Format, err = synth.ParseFormat(v.format); err != nil {
		return c, "", err
	}
	if c.Encap, err = synth.ParseEncap(v.encap); err != nil {
		return c, "", err
	}
	switch v.imm {
	case "":
	case "host":
		c.BigEndianImm = new(false)
	case "big":
		c.BigEndianImm = new(true)
	default:
		return c, "", fmt.Errorf("--imm %q (want host or big)", v.imm)
	}
	if v.ring != "" {
		for f := range strings.SplitSeq(v.ring, ",") {
			r, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return c, "", fmt.Errorf("--ring %q: %q is no rank", v.ring, f)
			}
			c.Ring = append(c.Ring, r)
		}
	}
	if c.Collectives, err = parseCollectives(v.colls); err != nil {
		return c, "", err
	}
	offs, err := parseRankValues(v.offsets, "--clock-offset", time.ParseDuration)
	if err != nil {
		return c, "", err
	}
	for _, o := range offs {
		r, d := o.rank, o.value
		if r >= MaxRanks {
			return c, "", fmt.Errorf("--clock-offset: rank %d", r)
		}
		for len(c.ClockOffsets) <= r {
			c.ClockOffsets = append(c.ClockOffsets, 0)
		}
		c.ClockOffsets[r] = d
	}
	for _, l := range []struct {
		s, name string
		dst     *[]Late
	}{{v.hostLate, "--host-late", &c.HostLate}, {v.gpuLate, "--gpu-late", &c.GPULate}} {
		m, err := parseRankValues(l.s, l.name, time.ParseDuration)
		if err != nil {
			return c, "", err
		}
		for _, x := range m {
			*l.dst = append(*l.dst, Late{Rank: x.rank, Delay: x.value})
		}
	}
	slow, err := parseRankValues(v.slow, "--slow-link", func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	if err != nil {
		return c, "", err
	}
	for _, x := range slow {
		c.Slow = append(c.Slow, SlowLink{Sender: x.rank, Factor: x.value})
	}
	loss, err := parseRankValues(v.loss, "--loss", strconv.Atoi)
	if err != nil {
		return c, "", err
	}
	for _, x := range loss {
		c.Loss = append(c.Loss, LinkLoss{Sender: x.rank, Every: x.value})
	}
	pfc, err := parseRankValues(v.pfc, "--pfc", func(s string) (LinkPause, error) {
		every, quanta, ok := strings.Cut(s, ":")
		e, err1 := strconv.Atoi(every)
		q, err2 := strconv.ParseUint(quanta, 10, 16)
		if !ok || err1 != nil || err2 != nil {
			return LinkPause{}, errors.New("want EVERY:QUANTA")
		}
		return LinkPause{Every: e, Quanta: uint16(q)}, nil
	})
	if err != nil {
		return c, "", err
	}
	for _, x := range pfc {
		x.value.Sender = x.rank
		c.Pause = append(c.Pause, x.value)
	}
	if v.prefix == "" || v.prefix == "-" {
		return c, "", errors.New("-o wants a file name prefix (the captures are one per rank)")
	}
	n := c
	if err := n.Normalize(); err != nil {
		return c, "", err
	}
	return c, v.prefix, nil
}

// parseCollectives parses --coll: KIND:BYTES[:ALGORITHM],….
func parseCollectives(s string) ([]Collective, error) {
	var out []Collective
	for item := range strings.SplitSeq(s, ",") {
		f := strings.Split(strings.TrimSpace(item), ":")
		if len(f) < 2 || len(f) > 3 {
			return nil, fmt.Errorf("--coll %q: want KIND:BYTES[:ALGORITHM]", item)
		}
		size, mult := f[1], int64(1)
		for suffix, m := range map[string]int64{"K": 1 << 10, "M": 1 << 20, "G": 1 << 30} {
			if rest, ok := strings.CutSuffix(size, suffix); ok {
				size, mult = rest, m
			}
		}
		n, err := strconv.ParseInt(size, 10, 64)
		if err != nil || n < 1 || n > 1<<40/mult {
			return nil, fmt.Errorf("--coll %q: bytes %q", item, f[1])
		}
		co := Collective{Kind: f[0], Size: n * mult}
		if len(f) == 3 {
			co.Algorithm = f[2]
		}
		out = append(out, co)
	}
	return out, nil
}

// rankValue is one RANK=VALUE of a flag.
type rankValue[V any] struct {
	rank  int
	value V
}

// parseRankValues parses RANK=VALUE,…, each rank once, in the order
// given.
func parseRankValues[V any](s, name string, parse func(string) (V, error)) ([]rankValue[V], error) {
	var out []rankValue[V]
	if s == "" {
		return out, nil
	}
	for item := range strings.SplitSeq(s, ",") {
		k, val, ok := strings.Cut(item, "=")
		r, err := strconv.Atoi(k)
		if !ok || err != nil || r < 0 {
			return nil, fmt.Errorf("%s %q: want RANK=VALUE", name, item)
		}
		if slices.ContainsFunc(out, func(x rankValue[V]) bool { return x.rank == r }) {
			return nil, fmt.Errorf("%s: rank %d twice", name, r)
		}
		v, err := parse(val)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", name, item, err)
		}
		out = append(out, rankValue[V]{r, v})
	}
	return out, nil
}

// Run is "roce-synth nccl" (args after "nccl"); it returns the exit
// code: 0 success, 1 failure, 2 usage error.
func Run(args []string, stdout, stderr io.Writer) int {
	cfg, prefix, err := ParseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, Usage)
		fs := newFlagSet(&cliFlags{})
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "roce-synth nccl: %v\nrun 'roce-synth nccl -h' for help\n", err)
		return 2
	}
	if err := writeFiles(cfg, prefix, stdout); err != nil {
		fmt.Fprintf(stderr, "roce-synth nccl: %v\n", err)
		return 1
	}
	return 0
}

// writeFiles writes the captures and the truth of cfg under prefix, each
// put in place only when every one was written whole (outfile: a planted
// symlink is replaced, never followed).
func writeFiles(cfg Config, prefix string, stdout io.Writer) (err error) {
	ext := "." + cfg.Format.String()
	names := make([]string, cfg.Ranks)
	outs := make([]io.Writer, cfg.Ranks)
	files := make([]*outfile.File, 0, cfg.Ranks)
	defer func() {
		if err != nil {
			for _, f := range files {
				f.Abort()
			}
		}
	}()
	bufs := make([]*bufio.Writer, cfg.Ranks)
	for r := range names {
		names[r] = prefix + ".rank" + strconv.Itoa(r) + ext
		f, err := outfile.Create(names[r])
		if err != nil {
			return err
		}
		files = append(files, f)
		bufs[r] = bufio.NewWriter(f)
		outs[r] = bufs[r]
	}
	tr, err := Write(cfg, outs, names)
	if err != nil {
		return err
	}
	for _, b := range bufs {
		if err := b.Flush(); err != nil {
			return err
		}
	}
	err = outfile.Write(prefix+".truth.json", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(tr)
	})
	if err != nil {
		return err
	}
	for i, f := range files {
		if err := f.Commit(nil); err != nil {
			for _, g := range files[i+1:] {
				g.Abort()
			}
			files = nil
			return err
		}
	}
	files = nil
	for _, n := range names {
		fmt.Fprintf(stdout, "wrote %s\n", n)
	}
	fmt.Fprintf(stdout, "wrote %s\n", prefix+".truth.json")
	return nil
}
