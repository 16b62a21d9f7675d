package synth

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/roce-dissect/roce-dissect/internal/wrap"
)

// Encap is the encapsulation the IB transport packets are written in.
type Encap uint8

// Encapsulations.
const (
	EncapIPv4   Encap = iota // RoCE v2: Ethernet / IPv4 / UDP 4791
	EncapIPv6                // RoCE v2: Ethernet / IPv6 / UDP 4791
	EncapVLAN                // RoCE v2: Ethernet / 802.1Q / IPv4 / UDP 4791
	EncapRoCEv1              // RoCE v1: Ethernet (0x8915) / GRH
	EncapIB                  // native InfiniBand, LINKTYPE_INFINIBAND (247): LRH, no GRH
	EncapERF                 // native InfiniBand in ERF records (LINKTYPE_ERF 197, type 21)
)

var encapNames = [...]string{"ipv4", "ipv6", "vlan", "rocev1", "ib", "erf"}

// String returns the flag spelling of the encapsulation ("ipv4", …).
func (e Encap) String() string {
	if int(e) < len(encapNames) {
		return encapNames[e]
	}
	return fmt.Sprintf("Encap(%d)", uint8(e))
}

// ParseEncap parses "ipv4", "ipv6", "vlan", "rocev1", "ib" or "erf".
func ParseEncap(s string) (Encap, error) {
	for i, n := range encapNames {
		if strings.EqualFold(s, n) {
			return Encap(i), nil
		}
	}
	return 0, fmt.Errorf("synth: unknown encapsulation %q (want one of %s)", s, strings.Join(encapNames[:], ", "))
}

// RoCEv2 reports whether the encapsulation is RoCE v2 (IP and UDP).
func (e Encap) RoCEv2() bool { return e == EncapIPv4 || e == EncapIPv6 || e == EncapVLAN }

// Native reports whether the encapsulation is native InfiniBand (LRH).
func (e Encap) Native() bool { return e == EncapIB || e == EncapERF }

// Format is the capture file format.
type Format uint8

// Capture file formats.
const (
	FormatPcap   Format = iota // libpcap, µs or (Config.Nanos) ns timestamps
	FormatPcapNG               // pcapng, ns timestamps
)

// String returns "pcap" or "pcapng".
func (f Format) String() string {
	if f == FormatPcapNG {
		return "pcapng"
	}
	return "pcap"
}

// ParseFormat parses "pcap" or "pcapng".
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "pcap":
		return FormatPcap, nil
	case "pcapng":
		return FormatPcapNG, nil
	}
	return 0, fmt.Errorf("synth: unknown format %q (want pcap or pcapng)", s)
}

// PSNRef names a request PSN of an impairment: an absolute 24-bit PSN, or
// (Relative) an offset from the requester's starting PSN, written "+N".
type PSNRef struct {
	Value    uint32
	Relative bool
}

// String returns "N" or "+N".
func (r PSNRef) String() string {
	if r.Relative {
		return "+" + strconv.FormatUint(uint64(r.Value), 10)
	}
	return strconv.FormatUint(uint64(r.Value), 10)
}

// resolve returns the absolute PSN.
func (r PSNRef) resolve(start uint32) uint32 {
	if r.Relative {
		return (start + r.Value) & psnMask
	}
	return r.Value
}

// ParsePSNList parses a comma-separated list of PSNs ("5,7" or "+3,+10";
// decimal or 0x hexadecimal).
func ParsePSNList(s string) ([]PSNRef, error) {
	var out []PSNRef
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		var r PSNRef
		if strings.HasPrefix(f, "+") {
			r.Relative = true
			f = f[1:]
		}
		v, err := strconv.ParseUint(f, 0, 32)
		if err != nil || v > psnMask {
			return nil, fmt.Errorf("synth: bad PSN %q (24-bit number, or +offset from the starting PSN)", f)
		}
		r.Value = uint32(v)
		out = append(out, r)
	}
	return out, nil
}

// Impairments are applied to the request packets of the scenario's data
// connection (the first one), each to the first occurrence of the request
// packet with the given PSN. An RDMA READ REQUEST is named by its own PSN,
// the first of the range it reserves.
type Impairments struct {
	// Drop removes the frames from the capture (the tap missed them; the
	// conversation goes on as if they had been delivered: the responder
	// ACKs them, nobody NAKs or resends them). Flags --drop and --tap-drop.
	Drop []PSNRef
	// NAK: the packet is lost after the tap; the responder, seeing the
	// next packets, sends one NAK PSN sequence error for it, and the
	// requester resends from it (go-back-N). Two requests are in flight
	// when the NAK comes back.
	NAK []PSNRef
	// RNR: the responder answers the packet with an RNR NAK (timer 0.64
	// ms); the requester resends from it after the delay. One request is
	// in flight when the RNR NAK comes back.
	RNR []PSNRef
	// Dup writes the frame twice in a row, byte-identical.
	Dup []PSNRef
	// Reorder moves the packet after the next request packet.
	Reorder []PSNRef
	// ECN marks the packet Congestion Experienced (IP ECN 3); the
	// responder answers with a CNP (opcode 0x81) right after. RoCE v2 only.
	ECN []PSNRef
	// CorruptICRC flips bits of the packet's ICRC (the VCRC of native IB
	// stays valid).
	CorruptICRC []PSNRef
}

func (im *Impairments) any() bool {
	for _, l := range im.lists() {
		if len(*l.refs) > 0 {
			return true
		}
	}
	return false
}

// impairmentList is one list of Impairments and the flag that fills it.
type impairmentList struct {
	flag string
	refs *[]PSNRef
}

// lists are the lists of im by flag: the one table of the impairments.
func (im *Impairments) lists() [7]impairmentList {
	return [7]impairmentList{{"drop", &im.Drop}, {"nak", &im.NAK}, {"rnr", &im.RNR}, {"dup", &im.Dup},
		{"reorder", &im.Reorder}, {"ecn", &im.ECN}, {"corrupt-icrc", &im.CorruptICRC}}
}

// Config describes one generated capture. The zero value of a field
// means its default (see Defaults).
type Config struct {
	// Scenario is one of Scenarios(): "write-bw", "read-bw", "send-bw",
	// "atomic", "ud", "mix".
	Scenario string
	Format   Format
	// Nanos writes a nanosecond pcap (magic 0xa1b23c4d); pcapng is always ns.
	Nanos bool
	// SnapLen > 0 cuts every frame to SnapLen bytes (header-only capture);
	// the original length stays the full one.
	SnapLen int
	Encap   Encap
	// MTU is the path MTU in bytes: 256, 512, 1024, 2048 or 4096.
	MTU int
	// MsgSize is the size of each SEND/WRITE/READ message in bytes. In mix,
	// 0 draws each message's size from 64…4096.
	MsgSize int
	// Messages is the number of messages (operations) of the data
	// connection; not used by mix.
	Messages int
	// StartPSN is the requester's starting PSN; nil draws it from the seed.
	StartPSN *uint32
	// Packets is the exact number of frames mix writes.
	Packets int
	// QPs is the number of RC connections of mix.
	QPs int
	// MixOp restricts mix to one operation: "write", "send" or "read"
	// ("" mixes writes, sends and reads).
	MixOp string
	// Seed fixes every random choice (QPNs, PSNs, keys, interleaving).
	Seed uint64
	// Gbps is the link rate the timestamps follow (frame after frame,
	// back to back at this rate, plus any RNR delay).
	Gbps float64
	Impairments
	// DC writes the data connection as NVIDIA Dynamically Connected
	// traffic (RD opcodes with the DC headers, no CM exchange; see dc.go):
	// write-bw, read-bw and atomic only.
	DC bool
	// SnifferSrcPort writes UDP source port 4791 on every RoCE v2 packet
	// after its ICRC was computed over the real (per-flow entropy) source
	// port, as the ConnectX NIC sniffer does.
	SnifferSrcPort bool
	// UDPPort is the UDP destination port of the RoCE v2 packets; 0 is
	// 4791, RoCE v2's. Traffic to another port is RoCE v2 only to an
	// analyzer told so (roce-dissect --decode-as udp.port=N).
	UDPPort uint16
	// Artefacts of capture tools and stacks (artefacts.go).
	Artefacts
	// NIC models the NICs' timing and the capture point (nic.go).
	NIC NICKnobs
	// Pause writes PFC and 802.3x pause frames among the traffic
	// (pause.go); the zero value writes none.
	Pause PauseConfig
	// Wrap wraps every frame in these encapsulations, outermost first, as
	// a switch mirror or an overlay delivers it (--wrap; wrap.go):
	// Ethernet encapsulations only; SnapLen and CutFrames cut the wrapped
	// frame.
	Wrap wrap.Chain
	// OnFrame, when set, is called for every frame written, in order.
	OnFrame func(*FrameInfo)
}

// Scenario names.
const (
	ScenarioWriteBW = "write-bw"
	ScenarioReadBW  = "read-bw"
	ScenarioSendBW  = "send-bw"
	ScenarioAtomic  = "atomic"
	ScenarioUD      = "ud"
	ScenarioMix     = "mix"
)

// Scenarios returns the scenario names.
func Scenarios() []string {
	return []string{ScenarioWriteBW, ScenarioReadBW, ScenarioSendBW, ScenarioAtomic, ScenarioUD, ScenarioMix}
}

const psnMask = 0xFFFFFF

// Defaults of the zero fields of Config.
const (
	DefaultMTU      = 1024
	DefaultMsgSize  = 4096
	DefaultMessages = 16
	DefaultPackets  = 100000
	DefaultQPs      = 16
	DefaultSeed     = 1
	DefaultGbps     = 25
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("invalid configuration")

// mtuEnum returns the CM PathMTU enum (1 = 256 … 5 = 4096).
func mtuEnum(n int) (uint8, bool) {
	switch n {
	case 256:
		return 1, true
	case 512:
		return 2, true
	case 1024:
		return 3, true
	case 2048:
		return 4, true
	case 4096:
		return 5, true
	}
	return 0, false
}
