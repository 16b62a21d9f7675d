package analyze

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
)

// otherLevel is how far the decode stage's walk reached into a frame that
// is not RDMA traffic: the innermost protocol an otherKey names.
type otherLevel = decode.OtherLevel

const (
	otherLink  = decode.OtherLink  // nothing past the link header: the number is the link type
	otherEther = decode.OtherEther // the number is the EtherType
	otherIP    = decode.OtherIP    // the number is the IP protocol (IPv6: the next header)
	otherTCP   = decode.OtherTCP   // the number is the service port
	otherUDP   = decode.OtherUDP   // the number is the service port
)

// otherKey names the protocol of a frame that is not RDMA traffic, for
// Capture.OtherProtocols (the zero otherKey: none yet). Keys order by
// level, then number.
type otherKey struct {
	level otherLevel
	num   uint16
}

// otherKeyOf is the otherKey of the decode stage's Other.
func otherKeyOf(o decode.Other) otherKey { return otherKey{o.Level, o.Num} }

func (k otherKey) compare(o otherKey) int {
	return cmp.Or(cmp.Compare(k.level, o.level), cmp.Compare(k.num, o.num))
}

// otherCount is the frames and bytes of one otherKey.
type otherCount struct{ frames, bytes uint64 }

func (c *otherCount) add(o otherCount) { c.frames, c.bytes = c.frames+o.frames, c.bytes+o.bytes }

const (
	// maxOtherKeys bounds the keys an otherCounts keeps of each level
	// (link types, EtherTypes, IP protocols, TCP ports, UDP ports), so
	// that many TCP ports never crowd out a busy UDP one.
	maxOtherKeys = 256
	// listedOthers is how many keys Capture.OtherProtocols lists.
	listedOthers = 8
)

// otherCounts counts the other frames by otherKey. Of each level it keeps
// the maxOtherKeys smallest keys seen and counts the frames of the rest
// as unlisted: which keys are kept does not depend on the order the
// frames come in, so the shards of a capture, combined, count as the
// whole does.
type otherCounts struct {
	keys     map[otherKey]otherCount
	n        [otherUDP + 1]int      // the keys kept of each level
	largest  [otherUDP + 1]otherKey // the largest key kept of a full level
	unlisted otherCount
}

// add counts c under key k.
func (t *otherCounts) add(k otherKey, c otherCount) {
	if t.keys == nil {
		t.keys = make(map[otherKey]otherCount)
	}
	if have, ok := t.keys[k]; ok {
		have.add(c)
		t.keys[k] = have
		return
	}
	l := k.level
	if t.n[l] < maxOtherKeys {
		t.keys[k] = c
		if t.n[l]++; t.n[l] == maxOtherKeys {
			t.largest[l] = t.findLargest(l)
		}
		return
	}
	if k.compare(t.largest[l]) > 0 {
		t.unlisted.add(c)
		return
	}
	t.unlisted.add(t.keys[t.largest[l]])
	delete(t.keys, t.largest[l])
	t.keys[k] = c
	t.largest[l] = t.findLargest(l)
}

// findLargest is the largest key kept of level l.
func (t *otherCounts) findLargest(l otherLevel) otherKey {
	var big otherKey
	for k := range t.keys {
		if k.level == l && k.compare(big) > 0 {
			big = k
		}
	}
	return big
}

// merge adds o's counts to t's (the result keeps the smallest keys of
// both, as one otherCounts fed both would).
func (t *otherCounts) merge(o *otherCounts) {
	for k, c := range o.keys {
		t.add(k, c)
	}
	t.unlisted.add(o.unlisted)
}

// OtherProtocol counts the frames of one protocol among those that are
// not RDMA traffic (Capture.OtherProtocols).
type OtherProtocol struct {
	// Protocol is the innermost protocol decoded: "tcp" or "udp" (with
	// Port), an IP protocol ("icmp", "icmpv6", "igmp", …, else "ip N"),
	// an EtherType ("arp", "lldp", "mac_control", "ipv4" for a fragment
	// or a header that did not decode, …, else "ethertype 0xNNNN"), or
	// "linktype N" when the frame's link header names none.
	Protocol string `json:"protocol"`
	// Port is the TCP or UDP service port: the lower of the two ports.
	Port *int `json:"port,omitempty"`
	// Frames and Bytes (original lengths) of the protocol's frames.
	Frames uint64 `json:"frames"`
	Bytes  uint64 `json:"bytes"`
}

// ipProtocolNames names the IP protocols of OtherProtocol.Protocol.
var ipProtocolNames = map[uint16]string{1: "icmp", 2: "igmp", 6: "tcp", 17: "udp", 47: "gre", 50: "esp", 51: "ah", 58: "icmpv6", 89: "ospf", 103: "pim", 112: "vrrp", 132: "sctp"}

// etherTypeNames names the EtherTypes of OtherProtocol.Protocol.
var etherTypeNames = map[uint16]string{
	0x0800: "ipv4", 0x0806: "arp", 0x8035: "rarp", 0x86dd: "ipv6", 0x8808: "mac_control",
	0x8809: "slow_protocols", 0x888e: "eapol", 0x88cc: "lldp", 0x88f7: "ptp", 0x8100: "vlan", 0x88a8: "qinq",
}

// protocol is the OtherProtocol of k's counts c.
func (k otherKey) protocol(c otherCount) OtherProtocol {
	o := OtherProtocol{Frames: c.frames, Bytes: c.bytes}
	switch k.level {
	case otherTCP, otherUDP:
		o.Protocol = "tcp"
		if k.level == otherUDP {
			o.Protocol = "udp"
		}
		port := int(k.num)
		o.Port = &port
	case otherIP:
		o.Protocol = cmp.Or(ipProtocolNames[k.num], fmt.Sprintf("ip %d", k.num))
	case otherEther:
		o.Protocol = cmp.Or(etherTypeNames[k.num], fmt.Sprintf("ethertype 0x%04x", k.num))
	default:
		o.Protocol = fmt.Sprintf("linktype %d", k.num)
	}
	return o
}

// list sets c.OtherProtocols to t's listedOthers keys of the most frames
// (ties: the smaller key first), and c.OtherFramesUnlisted to the frames
// of the rest.
func (t *otherCounts) list(c *Capture) {
	keys := make([]otherKey, 0, len(t.keys))
	for k := range t.keys {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b otherKey) int {
		return cmp.Or(cmp.Compare(t.keys[b].frames, t.keys[a].frames), a.compare(b))
	})
	c.OtherProtocols, c.OtherFramesUnlisted = nil, t.unlisted.frames
	for i, k := range keys {
		if i >= listedOthers {
			c.OtherFramesUnlisted += t.keys[k].frames
			continue
		}
		c.OtherProtocols = append(c.OtherProtocols, k.protocol(t.keys[k]))
	}
}
