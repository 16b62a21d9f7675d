package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/internal/wrap"
)

// PointsUsage is the help of "roce-synth points".
const PointsUsage = `usage: roce-synth points SCENARIO --point SPEC --point SPEC… [--loss-hop N] [--corrupt-between PSNs] [scenario flags]

Writes one capture per point of the same traffic, OUT.NAME.pcap(ng), and
the truth OUT.points.truth.json (OUT: -o, default the scenario name).
SPEC is NAME[,offset=DURATION][,delay=DURATION][,jitter=DURATION][,ttl=N][,drop=PSN;PSN…][,ecn=PSN;PSN…][,wrap=KIND+KIND…]:
the first point is the requester's tap; delay, jitter and ttl describe the
hop into the point; drop lists request PSNs the point's capture misses;
ecn lists request PSNs the hop into the point marks ECN CE (no CNP);
wrap wraps its frames as a switch mirror or overlay delivers them
(outermost first, the kinds of --wrap: e.g. wrap=erspan2 for a switch's
mirror session).
--nak PSNs are lost between point loss-hop-1 and point loss-hop (default 1);
--corrupt-between PSNs (a subset of --nak) arrive there corrupted instead.
`

// runPoints is "roce-synth points".
func runPoints(args []string, stdout, stderr io.Writer) int {
	var pc PointsConfig
	var rest []string
	var corrupt string
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() (string, bool) {
			if i+1 >= len(args) {
				return "", false
			}
			i++
			return args[i], true
		}
		switch a {
		case "--point", "-point", "--loss-hop", "-loss-hop", "--corrupt-between", "-corrupt-between":
			v, ok := val()
			if !ok {
				fmt.Fprintf(stderr, "roce-synth points: %s needs a value\n%s", a, PointsUsage)
				return 2
			}
			var err error
			switch a {
			case "--point", "-point":
				var p Point
				p, err = parsePoint(v)
				pc.Points = append(pc.Points, p)
			case "--loss-hop", "-loss-hop":
				_, err = fmt.Sscan(v, &pc.LossHop)
			default:
				corrupt = v
			}
			if err != nil {
				fmt.Fprintf(stderr, "roce-synth points: %s %s: %v\n", a, v, err)
				return 2
			}
		case "-h", "--help":
			fmt.Fprint(stdout, PointsUsage)
			return 0
		default:
			rest = append(rest, a)
		}
	}
	cfg, out, _, err := ParseArgs(rest)
	if err == nil {
		pc.Corrupt, err = ParsePSNList(corrupt)
	}
	if err != nil {
		fmt.Fprintf(stderr, "roce-synth points: %v\n%s", err, PointsUsage)
		return 2
	}
	pc.Base = cfg
	if out == "" || out == "-" {
		out = cfg.Scenario + "." + cfg.Format.String()
	}
	prefix := strings.TrimSuffix(out, "."+cfg.Format.String())
	var files []*os.File
	var ws []io.Writer
	for _, p := range pc.Points {
		f, err := os.Create(prefix + "." + p.Name + "." + cfg.Format.String())
		if err != nil {
			fmt.Fprintf(stderr, "roce-synth points: %v\n", err)
			return 1
		}
		defer f.Close()
		files = append(files, f)
		ws = append(ws, f)
	}
	for i := range pc.Points {
		pc.Points[i].Name = files[i].Name()
	}
	tr, err := WritePoints(pc, ws)
	if err == nil {
		for _, f := range files {
			if cerr := f.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}
	}
	if err == nil {
		var b bytes.Buffer
		if err = json.NewEncoder(&b).Encode(tr); err == nil {
			err = os.WriteFile(prefix+".points.truth.json", b.Bytes(), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "roce-synth points: %v\n", err)
		return 1
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "wrote %s\n", f.Name())
	}
	return 0
}

// parsePoint parses a --point SPEC.
func parsePoint(s string) (Point, error) {
	parts := strings.Split(s, ",")
	p := Point{Name: parts[0]}
	if p.Name == "" {
		return p, fmt.Errorf("missing point name")
	}
	for _, kv := range parts[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return p, fmt.Errorf("want key=value, got %q", kv)
		}
		var err error
		switch k {
		case "offset":
			p.ClockOffset, err = time.ParseDuration(v)
		case "delay":
			p.Delay, err = time.ParseDuration(v)
		case "jitter":
			p.Jitter, err = time.ParseDuration(v)
		case "ttl":
			p.TTLDec, err = strconv.Atoi(v)
		case "drop":
			p.TapDrop, err = ParsePSNList(strings.ReplaceAll(v, ";", ","))
		case "ecn":
			p.ECN, err = ParsePSNList(strings.ReplaceAll(v, ";", ","))
		case "wrap":
			p.Wrap, err = wrap.Parse(strings.ReplaceAll(v, "+", ","))
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return p, err
		}
	}
	return p, nil
}
