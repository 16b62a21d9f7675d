package synth

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/roce-dissect/roce-dissect/internal/wrap"
)

// Usage is the command line help of roce-synth.
const Usage = `usage: roce-synth SCENARIO [flags]
       roce-synth golden [-dir DIR]
       roce-synth points SCENARIO --point SPEC… [flags]   (several capture points; "points -h")
       roce-synth nccl --ranks N [flags]                  (an NCCL job's per-host captures; "nccl -h")

Writes a synthetic RoCE / InfiniBand capture and its ground truth (JSON).
Scenarios: write-bw, read-bw, send-bw, atomic, ud, mix.
"golden" regenerates the captures of testdata/ (see synth.Golden).

PSN lists are comma-separated 24-bit PSNs, or +N for an offset from the
requester's starting PSN; impairments apply to the request packet with
that PSN (its first occurrence).

flags:
`

// Run is the roce-synth command: args without the program name. It
// returns the exit code: 0 success, 1 failure, 2 usage error.
func Run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "golden" {
		return runGolden(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "points" {
		return runPoints(args[1:], stdout, stderr)
	}
	cfg, out, truth, err := ParseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		PrintUsage(stdout)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "roce-synth: %v\n", err)
		fmt.Fprintf(stderr, "run 'roce-synth -h' for help\n")
		return 2
	}
	if err := WriteFiles(cfg, out, truth); err != nil {
		fmt.Fprintf(stderr, "roce-synth: %v\n", err)
		return 1
	}
	return 0
}

// cliFlags holds the flag values of a command line.
type cliFlags struct {
	cfg                                        Config
	out, truth                                 string
	format, encap                              string
	drop, nak, rnr, dup, reorder, ecn, corrupt string
	tapDrop                                    string
	tap, timeout, cnpExtra                     string
	startPSN                                   int64
	udpPort                                    uint
	noTruth                                    bool
}

func newFlagSet(v *cliFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("roce-synth", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	cfg := &v.cfg
	fs.StringVar(&v.out, "o", "", "output capture `file` (default SCENARIO.pcap or .pcapng; - for standard output)")
	fs.StringVar(&v.truth, "truth", "", "truth JSON `file` (default: the output name + .truth.json)")
	fs.BoolVar(&v.noTruth, "no-truth", false, "do not write the truth file")
	fs.StringVar(&v.format, "format", "pcap", "capture format: pcap or pcapng")
	fs.BoolVar(&cfg.Nanos, "nanos", false, "nanosecond pcap timestamps (pcapng always has ns)")
	fs.IntVar(&cfg.SnapLen, "snaplen", 0, "cut frames to `N` bytes (header-only capture); 0 keeps them whole")
	fs.StringVar(&v.encap, "encap", "ipv4", "encapsulation: ipv4, ipv6, vlan, rocev1, ib (LinkType 247) or erf")
	fs.IntVar(&cfg.MTU, "mtu", DefaultMTU, "path MTU: 256, 512, 1024, 2048 or 4096")
	fs.IntVar(&cfg.MsgSize, "msg-size", 0, "message size in bytes (default 4096; ud 512; mix: random 64…4096)")
	fs.IntVar(&cfg.Messages, "messages", DefaultMessages, "messages of the data connection")
	fs.StringVar(&v.drop, "drop", "", "`PSN`s whose request frames are missing from the capture (the tap missed them; the responder still got and ACKs them); a PSN resent after --nak or --rnr (go-back-N) then shows only its resend, so none is missing")
	fs.StringVar(&v.tapDrop, "tap-drop", "", "`PSN`s the tap missed but the responder still ACKs: the same as --drop")
	fs.StringVar(&v.nak, "nak", "", "`PSN`s lost after the tap: NAK (PSN sequence error) and go-back-N")
	fs.StringVar(&v.rnr, "rnr", "", "`PSN`s answered by an RNR NAK, then resent")
	fs.StringVar(&v.dup, "dup", "", "`PSN`s whose frames are written twice")
	fs.StringVar(&v.reorder, "reorder", "", "`PSN`s swapped with the next request")
	fs.StringVar(&v.ecn, "ecn", "", "`PSN`s marked ECN CE, each answered by a CNP (RoCE v2)")
	fs.StringVar(&v.corrupt, "corrupt-icrc", "", "`PSN`s written with a bad ICRC")
	fs.BoolVar(&cfg.SnifferSrcPort, "sniffer-src-port", false, "write UDP source port 4791 on every RoCE v2 packet after the ICRC, as the NIC sniffer does")
	fs.UintVar(&v.udpPort, "udp-port", 0, "UDP destination `port` of the RoCE v2 packets (default 4791; another is RoCE v2 to roce-dissect --decode-as udp.port=N only)")
	fs.Int64Var(&v.startPSN, "start-psn", -1, "requester's starting PSN (default: drawn from the seed)")
	fs.IntVar(&cfg.Packets, "packets", DefaultPackets, "mix: number of frames")
	fs.IntVar(&cfg.QPs, "qps", DefaultQPs, "mix: number of RC connections")
	fs.StringVar(&cfg.MixOp, "mix-op", "", "mix: only this operation (write, send or read); default a mix")
	fs.BoolVar(&cfg.DC, "dc", false, "write the data connection as DC (NVIDIA Dynamically Connected) traffic, without CM: write-bw, read-bw, atomic")
	fs.Uint64Var(&cfg.Seed, "seed", DefaultSeed, "random seed (same seed, same bytes)")
	fs.Float64Var(&cfg.Gbps, "gbps", DefaultGbps, "link rate of the timestamps, Gbit/s")
	fs.IntVar(&cfg.CutFrames, "cut-frames", 0, "cut frames longer than `N` bytes to N and record N as their original length (a tool that cuts without saying so)")
	fs.IntVar(&cfg.Split, "split", 0, "write the capture in pieces of `N` frames, OUT's name with _00000, _00001… before its extension, as a rotating capture leaves it (the truth is the whole capture's)")
	fs.BoolVar(&cfg.V1Requester, "v1-requester", false, "the requester sends RoCE v1 (IPv4-mapped GIDs), the responder answers RoCE v2 over IPv4")
	fs.IntVar(&cfg.ShortMAD, "short-mad", 0, "write the REQ MAD `N` bytes long (< 256) in a frame whose lengths agree: malformed")
	addNICFlags(fs, v)
	addPauseFlags(fs, v)
	fs.Func("wrap", "wrap every frame in these encapsulations, outermost first, as a switch mirror or an overlay delivers it: comma-separated `LIST` of "+strings.Join(wrap.Names(), ", ")+" (e.g. erspan2,vxlan); --snaplen cuts the wrapped frame", func(s string) (err error) { cfg.Wrap, err = wrap.Parse(s); return err })
	return fs
}

// PrintUsage writes the command line help.
func PrintUsage(w io.Writer) {
	fs := newFlagSet(&cliFlags{})
	fs.SetOutput(w)
	fmt.Fprint(w, Usage)
	fs.PrintDefaults()
}

// ParseArgs parses a roce-synth command line: the scenario name first,
// then flags. It returns the configuration, the capture path and the truth
// path ("" for none); flag.ErrHelp when help was asked for.
func ParseArgs(args []string) (cfg Config, out, truth string, err error) {
	var v cliFlags
	fs := newFlagSet(&v)
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help") {
		return cfg, "", "", flag.ErrHelp
	}
	if len(args) == 0 {
		return cfg, "", "", errors.New("missing scenario (one of " + strings.Join(Scenarios(), ", ") + ")")
	}
	if strings.HasPrefix(args[0], "-") {
		return cfg, "", "", fmt.Errorf("the scenario name comes first (one of %s)", strings.Join(Scenarios(), ", "))
	}
	if err := fs.Parse(args[1:]); err != nil {
		return cfg, "", "", err
	}
	cfg, out, truth = v.cfg, v.out, v.truth
	cfg.Scenario = args[0]
	format, encap, startPSN := v.format, v.encap, v.startPSN
	if fs.NArg() > 0 {
		return cfg, "", "", fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.Format, err = ParseFormat(format); err != nil {
		return cfg, "", "", err
	}
	if cfg.Encap, err = ParseEncap(encap); err != nil {
		return cfg, "", "", err
	}
	for _, l := range []struct {
		s   string
		dst *[]PSNRef
	}{{v.drop, &cfg.Drop}, {v.nak, &cfg.NAK}, {v.rnr, &cfg.RNR}, {v.dup, &cfg.Dup}, {v.reorder, &cfg.Reorder}, {v.ecn, &cfg.ECN}, {v.corrupt, &cfg.CorruptICRC}} {
		if *l.dst, err = ParsePSNList(l.s); err != nil {
			return cfg, "", "", err
		}
	}
	tap, err := ParsePSNList(v.tapDrop)
	if err != nil {
		return cfg, "", "", err
	}
	cfg.Drop = append(cfg.Drop, tap...)
	if err := parseNICFlags(&v, &cfg); err != nil {
		return cfg, "", "", err
	}
	if v.udpPort > 65535 {
		return cfg, "", "", fmt.Errorf("--udp-port %d exceeds 16 bits", v.udpPort)
	}
	cfg.UDPPort = uint16(v.udpPort)
	if startPSN >= 0 {
		if startPSN > psnMask {
			return cfg, "", "", fmt.Errorf("--start-psn %d exceeds 24 bits", startPSN)
		}
		v := uint32(startPSN)
		cfg.StartPSN = &v
	}
	if out == "" {
		out = cfg.Scenario + "." + cfg.Format.String()
	}
	if truth == "" && out != "-" {
		truth = out + ".truth.json"
	}
	if v.noTruth {
		truth = ""
	}
	c := cfg
	if err := c.normalize(); err != nil {
		return cfg, "", "", err
	}
	return cfg, out, truth, nil
}

// WriteFiles generates cfg into the capture file out ("-" for standard
// output) and the truth file (skipped when "").
func WriteFiles(cfg Config, out, truth string) (err error) {
	if cfg.Split > 0 {
		return writeSplit(cfg, out, truth)
	}
	var w io.Writer = os.Stdout
	if out != "-" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
		w = f
	}
	var tw io.Writer
	if truth != "" {
		tf, err := os.Create(truth)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := tf.Close(); err == nil {
				err = cerr
			}
		}()
		bw := bufio.NewWriter(tf)
		defer func() {
			if ferr := bw.Flush(); err == nil {
				err = ferr
			}
		}()
		tw = bw
	}
	_, err = Generate(cfg, w, tw)
	return err
}

// GoldenFile is one capture of testdata/: its file name and the
// roce-synth arguments that write it.
type GoldenFile struct {
	Name string
	Args []string
}

// Golden returns the captures of testdata/, regenerated by go generate
// (roce-synth golden) and checked by the golden test.
func Golden() []GoldenFile {
	return []GoldenFile{
		{"write_bw_ipv4.pcap", []string{"write-bw", "--messages", "8", "--msg-size", "4096", "--mtu", "1024"}},
		{"read_bw.pcap", []string{"read-bw", "--nanos", "--messages", "6", "--msg-size", "3000", "--mtu", "1024"}},
		{"send_bw_ipv6.pcapng", []string{"send-bw", "--encap", "ipv6", "--format", "pcapng", "--messages", "6", "--msg-size", "2500", "--mtu", "1024"}},
		{"atomic_vlan.pcap", []string{"atomic", "--encap", "vlan", "--messages", "8"}},
		{"ud.pcap", []string{"ud", "--messages", "8", "--msg-size", "512", "--mtu", "1024"}},
		{"loss_nak_gobackn.pcap", []string{"write-bw", "--messages", "6", "--msg-size", "3072", "--mtu", "1024", "--start-psn", "1000",
			"--drop", "1002", "--nak", "1007"}},
		{"dup_reorder.pcap", []string{"write-bw", "--messages", "6", "--msg-size", "2048", "--mtu", "1024", "--start-psn", "5000",
			"--dup", "5003", "--reorder", "5006"}},
		{"ecn_cnp.pcap", []string{"write-bw", "--messages", "6", "--msg-size", "2048", "--mtu", "1024", "--start-psn", "200",
			"--ecn", "201,204,205"}},
		{"rnr_corrupt_icrc.pcap", []string{"send-bw", "--messages", "6", "--msg-size", "1024", "--mtu", "1024", "--start-psn", "300",
			"--rnr", "302", "--corrupt-icrc", "304"}},
		{"psn_wrap.pcap", []string{"write-bw", "--messages", "8", "--msg-size", "4096", "--mtu", "1024", "--start-psn", "16777200"}},
		{"rocev1.pcap", []string{"send-bw", "--encap", "rocev1", "--messages", "6", "--msg-size", "2048", "--mtu", "1024"}},
		{"ib.pcap", []string{"read-bw", "--encap", "ib", "--messages", "6", "--msg-size", "2048", "--mtu", "1024"}},
		{"erf.pcap", []string{"write-bw", "--encap", "erf", "--messages", "6", "--msg-size", "2048", "--mtu", "1024"}},
		{"header_only_snap128.pcap", []string{"write-bw", "--snaplen", "128", "--messages", "16", "--msg-size", "4096", "--mtu", "1024"}},
		{"mix_small.pcap", []string{"mix", "--packets", "400", "--qps", "8", "--snaplen", "96"}},
		// The tap missed the first request and two more; the responder
		// ACKed them all: capture-side drops, not network loss.
		{"tap_drop.pcap", []string{"write-bw", "--messages", "6", "--msg-size", "3072", "--mtu", "1024", "--start-psn", "2000",
			"--tap-drop", "+0,+5,+9"}},
		// A packet lost in the network, and the tap behind the loss: a
		// jump, the NAK, the resend.
		{"loss_behind_tap.pcap", []string{"send-bw", "--messages", "6", "--msg-size", "2048", "--mtu", "1024", "--start-psn", "3000",
			"--drop", "3004", "--nak", "3004"}},
		{"ud_drop.pcap", []string{"ud", "--messages", "8", "--msg-size", "512", "--mtu", "1024", "--start-psn", "4000", "--drop", "4003"}},
		{"sniffer_src_port.pcap", []string{"send-bw", "--sniffer-src-port", "--messages", "6", "--msg-size", "2048", "--mtu", "1024", "--start-psn", "700",
			"--corrupt-icrc", "703"}},
		{"tool_cut_243.pcap", []string{"write-bw", "--cut-frames", "243", "--messages", "8", "--msg-size", "4096", "--mtu", "4096"}},
		{"v1_requester_v2_responder.pcap", []string{"read-bw", "--v1-requester", "--messages", "4", "--msg-size", "2048", "--mtu", "1024"}},
		{"short_mad.pcap", []string{"write-bw", "--short-mad", "200", "--messages", "2", "--msg-size", "1024", "--mtu", "1024"}},
		// A switch mirror's copy of an overlay: ERSPAN III around VXLAN
		// around RoCE v2, with a packet lost in the network, NAKed and resent.
		{"erspan3_vxlan.pcap", []string{"write-bw", "--wrap", "erspan3,vxlan", "--messages", "6", "--msg-size", "2048", "--mtu", "1024", "--start-psn", "100",
			"--drop", "103", "--nak", "103"}},
		// A lossless fabric at 25 Gb/s: PFC on priority 3 from two senders,
		// a PFC storm of 250 ms and 802.3x PAUSE, among VLAN-tagged RoCE.
		{"pfc_storm.pcap", []string{"write-bw", "--encap", "vlan", "--link-speed", "25", "--pfc", "3,senders=2", "--pfc-storm", "3", "--pause", "episodes=2",
			"--messages", "6", "--msg-size", "2048", "--mtu", "1024"}},
	}
}

func runGolden(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("roce-synth golden", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "testdata", "output `directory`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	for _, gf := range Golden() {
		cfg, _, _, err := ParseArgs(gf.Args)
		if err != nil {
			fmt.Fprintf(stderr, "roce-synth: %s: %v\n", gf.Name, err)
			return 2
		}
		out := filepath.Join(*dir, gf.Name)
		if err := WriteFiles(cfg, out, out+".truth.json"); err != nil {
			fmt.Fprintf(stderr, "roce-synth: %s: %v\n", gf.Name, err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s\n", out)
	}
	return 0
}
