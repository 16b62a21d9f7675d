package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// config is what the command line asks for.
type config struct {
	packets   bool
	verbose   bool
	hex       bool   // -x: a hex dump of each frame
	output    string // text, json, csv
	color     string // auto, always, never
	count     uint64
	qp        int64 // -1: all
	flow      *flowFilter
	rocePorts []uint16
	rdAs      layers.RDDecoding
	noICRC    bool
	interval  time.Duration
	// intervalSet: --interval was given (the plot chooses its own
	// otherwise).
	intervalSet bool
	plot        string
	html        string // --html FILE: the report as one self-contained page
	trace       string // --trace FILE: the timeline as trace-event JSON (Perfetto)
	maxFlows    int
	maxConns    int
	linkGbps    float64       // --link-speed, Gb/s
	pauseStorm  time.Duration // --pause-storm
	dscpPrio    []uint8       // --dscp-priority: DSCP → priority (nil: DSCP>>3)
	progress    string        // auto, never
	// clockOffsets are --clock-offset FILE=DURATION (capture points).
	clockOffsets map[string]time.Duration
	jobs         int    // -j: cores per run (0: all)
	export       string // --export DIR: Parquet tables
	allFlows     bool   // --all-flows: every flow in the text report's table
	// allFindings: --findings all lists every finding in the text report
	// (default: each kind once per flow, report.FindingExamples each).
	allFindings bool
	// minSeverity is --severity: the findings kept are at least this
	// severe (0: all); kinds is --kind: the kinds kept (nil: all).
	minSeverity analyze.Severity
	kinds       map[analyze.Kind]bool
	// findingFilter is --severity and --kind as given, for the text
	// report's Findings title ("" without them).
	findingFilter string
}

// flowFilter selects one flow.
type flowFilter struct {
	src, dst string
	qp       uint32
}

// errUsage marks a bad command line (exit status 2).
var errUsage = errors.New("usage")

// errVersion asks for the version (--version).
var errVersion = errors.New("version")

// fileFlag is -r FILE: a file to read, in order with the others.
type fileFlag struct{ files *[]string }

func (f fileFlag) String() string { return "" }

func (f fileFlag) Set(v string) error {
	*f.files = append(*f.files, v)
	return nil
}

type portList struct {
	ports *[]uint16
	rdAs  *layers.RDDecoding // --decode-as rd|dc|auto: how the RD opcodes decode
}

func (p portList) String() string { return "" }

func (p portList) Set(v string) error {
	if d, err := layers.ParseRDDecoding(v); err == nil && v != "" {
		*p.rdAs = d
		return nil
	}
	spec, ok := strings.CutPrefix(v, "udp.port=")
	if !ok {
		return fmt.Errorf("want udp.port=N, rd, dc or auto, got %q", v)
	}
	n, err := strconv.ParseUint(spec, 10, 16)
	if err != nil || n == 0 {
		return fmt.Errorf("bad UDP port %q", spec)
	}
	*p.ports = append(*p.ports, uint16(n))
	return nil
}

const usageText = `roce-dissect — analyze RDMA traffic (RoCE v2, RoCE v1, native InfiniBand)
in pcap, pcapng and ERF captures, plain or gzip-compressed ("-" reads stdin).

Usage:
  roce-dissect [flags] FILE...

Examples:
  roce-dissect roce.pcap                       report: connections, flows, findings
  roce-dissect -P roce.pcap                    one line per RDMA packet
  roce-dissect -V -c 10 roce.pcap              every header of the first 10 frames
  roce-dissect -o json roce.pcap | jq .flows   the report as JSON
  roce-dissect -P -o json roce.pcap            one JSON object per packet (NDJSON)
  roce-dissect -o csv roce.pcap                the flow table as CSV
  roce-dissect --qp 0x11 roce.pcap             only traffic to QP 0x11
  roce-dissect --decode-as udp.port=4792 x.pcap
                                               RoCE v2 on UDP port 4792 too
  roce-dissect --plot tput.svg roce.pcap       throughput per flow over time
  roce-dissect --html report.html roce.pcap    the report as a page with PSN charts
  tcpdump -i eth0 -w - udp port 4791 | roce-dissect -
                                               read a live capture from stdin

Flags:
`

// parseArgs parses the command line into the configuration and the
// capture files, checking the flags' values (a usage error when wrong).
func parseArgs(args []string) (*config, []string, error) {
	cfg := &config{qp: -1}
	fs := flag.NewFlagSet("roce-dissect", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var qp, flowSpec string
	fs.BoolVar(&cfg.packets, "P", false, "print one line per RDMA packet")
	fs.BoolVar(&cfg.packets, "packets", false, "print one line per RDMA packet")
	fs.BoolVar(&cfg.verbose, "V", false, "print every header of every RDMA packet as a tree")
	fs.BoolVar(&cfg.verbose, "verbose", false, "print every header of every RDMA packet as a tree")
	fs.BoolVar(&cfg.hex, "x", false, "add a hex dump of each RDMA frame (like tshark -x)")
	fs.StringVar(&cfg.output, "o", "text", "output format: text, json or csv")
	fs.StringVar(&cfg.output, "output", "text", "output format: text, json or csv")
	fs.StringVar(&cfg.color, "color", "auto", "colour: auto (on for a terminal unless NO_COLOR is set), always or never")
	fs.Uint64Var(&cfg.count, "c", 0, "stop after N frames (0: all): of each file, or of the pieces of one capture together")
	fs.StringVar(&qp, "qp", "", "only traffic to this destination QP (decimal or 0x hex)")
	fs.StringVar(&flowSpec, "flow", "", "only the flow SRC,DST,QP (e.g. 10.0.0.1,10.0.0.2,0x11)")
	fs.Var(portList{&cfg.rocePorts, &cfg.rdAs}, "decode-as", "decode another UDP destination port as RoCE v2: udp.port=N (repeatable); rd or dc: decode the RD opcodes (0x40–0x54) as Reliable Datagram or as NVIDIA DC (default auto)")
	fs.BoolVar(&cfg.noICRC, "no-icrc", false, "skip ICRC/VCRC verification")
	fs.DurationVar(&cfg.interval, "interval", time.Millisecond, "throughput series interval")
	fs.StringVar(&cfg.plot, "plot", "", "write per-flow throughput over time to FILE.svg or FILE.png")
	fs.StringVar(&cfg.html, "html", "", "write the report as one self-contained HTML page to FILE")
	fs.StringVar(&cfg.trace, "trace", "", "write the timeline (messages, findings, throughput) as Chrome trace-event JSON to FILE.json, for ui.perfetto.dev")
	fs.BoolVar(&cfg.allFlows, "all-flows", false, "list every flow in the text report (default: the top 50 by payload and every flow with a problem)")
	fs.IntVar(&cfg.maxFlows, "max-flows", 1_000_000, "track at most N flows (more are counted, not tracked)")
	fs.IntVar(&cfg.maxConns, "max-connections", 100_000, "track at most N CM connections (more REQs are counted, not tracked)")
	fs.Float64Var(&cfg.linkGbps, "link-speed", analyze.DefaultLinkSpeed/1e9, "link speed in Gb/s at which PFC/PAUSE quanta (512 bit times) are timed")
	fs.DurationVar(&cfg.pauseStorm, "pause-storm", analyze.DefaultPauseStorm, "a priority paused without a break for longer is a pause_storm")
	fs.Var(dscpPriorityFlag{&cfg.dscpPrio}, "dscp-priority", "DSCP=PRIORITY,…: the 802.1p priority of untagged packets of a DSCP (default DSCP>>3)")
	fs.StringVar(&cfg.progress, "progress", "auto", "progress bar on stderr: auto (terminal, reads over 1 s) or never")
	var findings, severity, kinds string
	fs.StringVar(&findings, "findings", "summary", "text report's findings: summary (each kind once per flow, with examples) or all")
	fs.StringVar(&severity, "severity", "", "keep the findings of this severity or worse: error, warning or info")
	fs.StringVar(&kinds, "kind", "", "keep the findings of these kinds only: K,… (docs/analysis.md's table)")
	var files []string
	fs.Var(fileFlag{&files}, "r", "read FILE (as tshark -r; the same as naming it)")
	fs.BoolVar(new(bool), "n", false, "no name resolution (roce-dissect never resolves names; accepted for tcpdump/tshark habits)")
	var showVersion bool
	fs.BoolVar(&showVersion, "version", false, "print the version and exit")
	fs.Var(clockOffsetFlag{&cfg.clockOffsets}, "clock-offset", "FILE=DURATION: FILE's clock runs DURATION ahead of the first file's (capture points; repeatable)")
	fs.IntVar(&cfg.jobs, "j", 0, "analyze on N cores (0: all): one file is sharded by host pair, the report unchanged")
	fs.StringVar(&cfg.export, "export", "", "write the analysis as Parquet tables to DIR (docs/parquet.md)")
	fs.IntVar(&cfg.jobs, "jobs", 0, "analyze on N cores (0: all): one file is sharded by host pair, the report unchanged")

	args, err := expandArgs(args, func(w string) bool { return fs.Lookup(w) != nil })
	if err != nil {
		return nil, nil, err
	}
	if err := parseFlags(fs, args, &files, &showVersion); err != nil {
		return nil, nil, err
	}
	if err := checkFileNames(files); err != nil {
		return nil, nil, err
	}
	if err := checkFormats(cfg); err != nil {
		return nil, nil, err
	}
	if err := cfg.setFindingFilters(findings, severity, kinds); err != nil {
		return nil, nil, err
	}
	fs.Visit(func(f *flag.Flag) { cfg.intervalSet = cfg.intervalSet || f.Name == "interval" })
	if err := checkLimits(cfg); err != nil {
		return nil, nil, err
	}
	if err := cfg.setSelection(qp, flowSpec); err != nil {
		return nil, nil, err
	}
	if err := checkPageNames(cfg); err != nil {
		return nil, nil, err
	}
	if err := checkTrace(cfg); err != nil {
		return nil, nil, err
	}
	if err := checkInputs(cfg, files); err != nil {
		return nil, nil, err
	}
	return cfg, files, nil
}

// parseFlags parses args with fs, taking the words that are not flags
// as capture files (appended to files, where -r puts its own), flags
// after them too; errVersion for --version.
func parseFlags(fs *flag.FlagSet, args []string, files *[]string, showVersion *bool) error {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return fmt.Errorf("%w: %v", errUsage, explainFlagError(err))
		}
		if *showVersion {
			return errVersion
		}
		args = fs.Args()
		if len(args) == 0 {
			return nil
		}
		*files = append(*files, args[0])
		args = args[1:]
	}
}

// checkFileNames checks the capture files named: at least one, and
// standard input ("-") at most once.
func checkFileNames(files []string) error {
	if len(files) == 0 {
		return fmt.Errorf("%w: no capture file given", errUsage)
	}
	if stdins := slices.Index(files, "-"); stdins >= 0 && slices.Contains(files[stdins+1:], "-") {
		return fmt.Errorf("%w: \"-\" (standard input) given more than once", errUsage)
	}
	return nil
}

// checkFormats checks the values of -o (json and csv without -V/-x,
// which have no such form; parquet only with --export and without
// -P/-V), --color and --progress.
func checkFormats(cfg *config) error {
	switch cfg.output {
	case "text":
	case "json", "csv":
		if cfg.verbose || cfg.hex {
			unit := map[string]string{"json": "object", "csv": "row"}[cfg.output]
			return fmt.Errorf("%w: -o %s with -V or -x: the header tree and the bytes are text only; give -P -o %s for one %s per packet", errUsage, cfg.output, cfg.output, unit)
		}
	case "parquet":
		if cfg.export == "" || cfg.packets || cfg.verbose {
			return fmt.Errorf("%w: -o parquet wants --export DIR (and no -P/-V)", errUsage)
		}
	default:
		return fmt.Errorf("%w: -o %q: want text, json, csv or parquet", errUsage, cfg.output)
	}
	switch cfg.color {
	case "auto", "always", "never":
	default:
		return fmt.Errorf("%w: --color %q: want auto, always or never", errUsage, cfg.color)
	}
	switch cfg.progress {
	case "auto", "never":
	default:
		return fmt.Errorf("%w: --progress %q: want auto or never", errUsage, cfg.progress)
	}
	return nil
}

// checkLimits checks the numeric flags' ranges: --interval, -j,
// --max-flows, --max-connections, --link-speed and --pause-storm.
func checkLimits(cfg *config) error {
	if cfg.interval <= 0 {
		return fmt.Errorf("%w: --interval must be positive", errUsage)
	}
	if cfg.jobs < 0 {
		return fmt.Errorf("%w: -j must be 0 (all cores) or more", errUsage)
	}
	if cfg.maxFlows <= 0 {
		return fmt.Errorf("%w: --max-flows must be positive", errUsage)
	}
	if cfg.maxConns <= 0 {
		return fmt.Errorf("%w: --max-connections must be positive", errUsage)
	}
	if !(cfg.linkGbps > 0 && cfg.linkGbps <= 1e6) { // NaN too
		return fmt.Errorf("%w: --link-speed %v: want Gb/s above 0, at most 1000000", errUsage, cfg.linkGbps)
	}
	if cfg.pauseStorm <= 0 {
		return fmt.Errorf("%w: --pause-storm must be positive", errUsage)
	}
	return nil
}

// setSelection sets the traffic selected from the --qp and --flow
// values (empty: not given).
func (cfg *config) setSelection(qp, flowSpec string) error {
	if qp != "" {
		n, err := parseQP(qp)
		if err != nil {
			return fmt.Errorf("%w: --qp: %v", errUsage, err)
		}
		cfg.qp = int64(n)
	}
	if flowSpec != "" {
		f, err := parseFlowSpec(flowSpec)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		cfg.flow = f
	}
	return nil
}

// checkPageNames checks the suffixes of the --plot and --html files.
func checkPageNames(cfg *config) error {
	if cfg.plot != "" && !strings.HasSuffix(cfg.plot, ".svg") && !strings.HasSuffix(cfg.plot, ".png") {
		return fmt.Errorf("%w: --plot wants a .svg or .png file", errUsage)
	}
	// As --plot's: with its page name forgotten, --html a.pcap b.pcap wrote
	// the page over the capture a.pcap.
	if cfg.html != "" && !strings.HasSuffix(cfg.html, ".html") && !strings.HasSuffix(cfg.html, ".htm") {
		return fmt.Errorf("%w: --html wants a .html or .htm file", errUsage)
	}
	return nil
}

func parseQP(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 0, 32)
	if err != nil || n > 0xFFFFFF {
		return 0, fmt.Errorf("bad QP %q (24 bits, decimal or 0x hex)", s)
	}
	return uint32(n), nil
}

// normAddr writes an address the way reports do.
func normAddr(s string) string {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().String()
	}
	return s
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, usageText)
	fmt.Fprint(w, flagHelp)
}

const flagHelp = `  -r FILE                    read FILE (as tshark -r; naming it is the same)
  -P, --packets              one line per RDMA packet (like tshark's summary)
  -V, --verbose              every header of every RDMA packet as a tree (like tshark -V)
  -x                         each RDMA frame's bytes in hex (like tshark -x)
  -o, --output FORMAT        text (default), json, csv or parquet
                             json: the report (docs/json.md); with -P one object per packet
                             csv: the flow table; with -P the packet lines
                             parquet: only the --export DIR tables, nothing on stdout
      --color WHEN           auto (default: on for a terminal, off when NO_COLOR is set),
                             always or never
  -c N                       stop after N frames of each file (of the stream, for
                             files read as one capture)
      --qp N                 only traffic to destination QP N (decimal or 0x hex)
      --flow SRC,DST,QP      only that flow
      --decode-as udp.port=N decode UDP destination port N as RoCE v2 (repeatable)
      --decode-as rd|dc     decode the RD opcodes 0x40–0x54 as Reliable Datagram or as
                            NVIDIA DC (default auto: DC unless the length proves RD)
      --no-icrc              skip ICRC/VCRC verification
      --interval DURATION    throughput series interval (default 1ms; --plot: chosen
                             from the capture's duration)
      --plot FILE            per-flow throughput over time, PSN gaps, NAKs and CNPs
                             marked on their flow (.svg or .png)
      --html FILE            the report as one self-contained HTML page: tables,
                             findings, per-flow PSN sequence and throughput charts
      --trace FILE           the timeline as Chrome trace-event JSON (.json) for
                             ui.perfetto.dev: a track per flow, a slice per message,
                             the findings, throughput and CNP counters
      --findings summary|all the text report's findings: each kind once per flow with its
                             count, first and last frame and 3 examples (default), or all
      --severity LEVEL       keep only the findings of LEVEL or worse: error, warning or
                             info, in every output (text, JSON, Parquet, HTML, plot, -P)
      --kind K,…             keep only the findings of these kinds, in every output
      --all-flows            list every flow in the text report's flow table (default:
                             beyond 50 flows, the top 50 by payload and every flow
                             with a problem, and how many were left out)
      --max-flows N          track at most N flows (default 1000000)
      --max-connections N    track at most N CM connections (default 100000)
      --link-speed GBPS      the link speed PFC/PAUSE quanta are timed at (default 100)
      --pause-storm DURATION a priority paused without a break for longer is a
                             pause_storm (default 200ms, common PFC watchdogs)
      --dscp-priority DSCP=P,…
                             the priority of untagged packets of a DSCP, for the flows'
                             paused time (default DSCP>>3; a VLAN tag's PCP wins)
      --progress WHEN        auto (default) or never
      --clock-offset FILE=DURATION
                             several files of the same traffic (capture points): FILE's
                             clock runs DURATION (e.g. 1.5ms, -200us) ahead of the first
                             file's; overrides the estimate (repeatable)
      --export DIR           also write the analysis as Parquet tables (packets, flows,
                             connections, findings) to DIR; -o parquet: only them
  -j, --jobs N               analyze on N cores (default 0: all): several files one per core,
                             one file sharded by host pair over N cores, the report the same
                             byte for byte as on one core (docs/parallel.md)
  -h, --help                 this help
      --version              the version
Short flags combine as in tshark: -PV, -c5, -PVx -c 10, -ojson. -n is
accepted (names are never resolved). tshark's -Y, -R, -T, -e and tcpdump's
-i, -w are explained when given.

Exit status: 0 ok, 1 a capture was damaged or unreadable (the report of what
was read is still printed), 2 bad usage.
`
