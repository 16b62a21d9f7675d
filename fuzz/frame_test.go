package fuzz_test

import (
	"errors"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	_ "github.com/roce-dissect/roce-dissect/cm" // the MAD decoder of gopacket.NewPacket
	"github.com/roce-dissect/roce-dissect/layers"
)

// FuzzFrame decodes one frame of any link type twice: with
// gopacket.NewPacket (layers and cm registered, panics recovered by
// gopacket and reported here) and with the analyzer's fast path
// (analyze.Analyzer.Feed, one reused DecodingLayer per header). Neither
// may panic, and where both reach a BTH they must agree on every decoded
// field: the BTH, each extension header and what follows it, the ICRC
// (status, wire value, expected value), the addresses, the ECN bits and
// whether an extension header was malformed.
//
// The two paths differ by design in a few places, so the comparison is
// restricted to frames where the analyzer's definition applies:
//   - the analyzer takes UDP to be RoCE v2 by the destination port only
//     (a RoCE packet always goes to 4791; the source port is an entropy
//     hash), while gopacket's UDP falls back to the source port and
//     decodes other protocols for other destination ports;
//   - the analyzer walks Ethernet, Linux SLL/SLL2, 802.1Q, IPv4 (not
//     fragments), IPv6 without extension headers, UDP, ERF, LRH and GRH,
//     and nothing else (no GRE, VXLAN, MPLS, …), where gopacket follows
//     any registered protocol to a BTH inside;
//   - gopacket has no decoder for LINKTYPE_IPV4/IPV6 (228/229): those
//     frames are given to it as IPv4/IPv6 layers;
//   - the analyzer keeps a MAD as bytes (it parses CM messages itself),
//     gopacket decodes it with package cm: a MAD that cm rejects is an
//     error layer in gopacket, not a malformed frame in the analyzer.
func FuzzFrame(f *testing.F) {
	for _, fr := range seedFrames(f, 12) {
		f.Add(linkIndex(fr.linkType), fr.data)
	}
	f.Fuzz(func(t *testing.T, lt uint8, data []byte) {
		defer watchdog(data)()
		linkType := linkTypes[int(lt)%len(linkTypes)]
		a := analyze.New(analyze.Options{MaxFlows: 4, MaxFindings: 16})
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1, 0), CaptureLength: len(data), Length: len(data)}
		p := a.Feed(ci, linkType, data)

		var first gopacket.Decoder = linkType
		switch linkType {
		case gplayers.LinkTypeIPv4:
			first = gplayers.LayerTypeIPv4
		case gplayers.LinkTypeIPv6:
			first = gplayers.LayerTypeIPv6
		}
		pkt := gopacket.NewPacket(data, first, gopacket.Default)
		if el, ok := pkt.ErrorLayer().(*gopacket.DecodeFailure); ok && el.Dump() != "" {
			// gopacket recovered a panic: ours is a bug, gopacket's own
			// layers' are reported for what they are.
			if strings.Contains(el.Dump(), "roce-dissect/") {
				t.Fatalf("panic decoding %x: %v\n%s", data, el.Error(), el.Dump())
			}
			t.Skipf("gopacket's own decoder panicked (not ours): %v", el.Error())
		}
		compareFrame(t, pkt, p)
	})
}

// analyzerWalks says whether the analyzer's fast path follows a layer of
// gopacket's decoding to the BTH.
func analyzerWalks(l gopacket.Layer) bool {
	switch v := l.(type) {
	case *gplayers.Ethernet, *gplayers.LinuxSLL, *gplayers.LinuxSLL2, *gplayers.Dot1Q, *layers.ERF, *layers.LRH, *layers.GRH:
		return true
	case *gplayers.IPv4:
		return v.Flags&gplayers.IPv4MoreFragments == 0 && v.FragOffset == 0
	case *gplayers.IPv6:
		return v.NextHeader != gplayers.IPProtocolIPv6HopByHop
	case *gplayers.UDP:
		return v.DstPort == layers.UDPPortRoCEv2
	}
	return false
}

// wellDefined returns gopacket's BTH when the analyzer's definition of the
// frame applies (every layer before the BTH is one it walks), else nil.
func wellDefined(pkt gopacket.Packet) (*layers.BTH, bool) {
	for _, l := range pkt.Layers() {
		if bth, ok := l.(*layers.BTH); ok {
			return bth, true
		}
		if !analyzerWalks(l) {
			return nil, false
		}
	}
	return nil, true
}

// compareFrame checks that gopacket's decoding and the analyzer's agree.
func compareFrame(t *testing.T, pkt gopacket.Packet, p *analyze.Packet) {
	t.Helper()
	bth, ok := wellDefined(pkt)
	if !ok {
		return
	}
	if bth == nil {
		require.Nil(t, p.BTH, "the analyzer found a BTH gopacket did not: %v", pkt)
		return
	}
	if udpBeyondIP(pkt) {
		// gopacket reads such a frame as cut; the analyzer calls it
		// malformed (docs/analysis.md).
		require.Nil(t, p.BTH, "a UDP length past the IP payload")
		require.ErrorContains(t, p.Err, "UDP length")
		return
	}
	if el := pkt.ErrorLayer(); el != nil && strings.HasPrefix(el.Error().Error(), "bth: ") && !errors.Is(el.Error(), layers.ErrUnknownOpcode) {
		// gopacket keeps a BTH that failed to decode, before its error;
		// the analyzer has a malformed frame, for the same reason.
		require.Nil(t, p.BTH, "a BTH gopacket could not decode")
		require.Error(t, p.Err, "a BTH gopacket could not decode (%v)", el.Error())
		require.Equal(t, el.Error().Error(), p.Err.Error())
		return
	}
	require.NotNil(t, p.BTH, "gopacket found a BTH the analyzer did not (analyzer error %v): %v", p.Err, pkt)
	require.Equal(t, exported(bth), exported(p.BTH), "BTH")
	require.Equal(t, bth.Contents, p.BTH.Contents, "BTH bytes")
	require.Equal(t, bth.Payload, p.BTH.Payload, "BTH payload")
	require.Equal(t, bth.Trailer, p.BTH.Trailer, "ICRC bytes")
	require.Equal(t, bth.Pad, p.BTH.Pad, "pad bytes")
	require.Equal(t, bth.Truncated, p.Truncated, "truncated")

	// Extension headers, in order, with what follows each.
	ours := map[gopacket.LayerType]gopacket.Layer{}
	for _, l := range []gopacket.Layer{p.RDETH, p.DETH, p.XRCETH, p.RETH, p.AtomicETH, p.AETH, p.AtomicAckETH, p.ImmDt, p.IETH, p.FETH, p.DCETH, p.CNP} {
		if !reflect.ValueOf(l).IsNil() {
			ours[l.LayerType()] = l
		}
	}
	var theirs []gopacket.LayerType
	for _, l := range pkt.Layers() {
		lt := l.LayerType()
		if lt != layers.LayerTypeBTH && strings.HasSuffix(lt.String(), "ETH") || lt == layers.LayerTypeImmDt || lt == layers.LayerTypeCNP {
			theirs = append(theirs, lt)
		}
	}
	require.Len(t, ours, len(theirs), "extension headers: gopacket %v, analyzer %v (analyzer error %v)", theirs, keys(ours), p.Err)
	for _, typ := range theirs {
		l := pkt.Layer(typ)
		o, ok := ours[typ]
		require.True(t, ok, "%v decoded by gopacket only", typ)
		require.Equal(t, exported(l), exported(o), "%v", typ)
		require.Equal(t, l.LayerContents(), o.LayerContents(), "%v bytes", typ)
		require.Equal(t, l.LayerPayload(), o.LayerPayload(), "what follows %v", typ)
	}

	// Malformed: an extension header that does not fit.
	if errors.Is(p.Err, analyze.ErrShortMAD) {
		// A datagram to QP0/QP1 recorded whole must hold a whole 256-byte
		// MAD (docs/robustness.md): the analyzer calls a shorter one,
		// even an empty one, malformed; gopacket leaves an empty payload
		// undecoded.
		return
	}
	if errors.Is(p.Err, analyze.ErrFrameLength) {
		// Length fields past a frame recorded whole: the analyzer judges
		// it against the capture's other frames (a tool's cut, or a
		// lying frame, docs/robustness.md); gopacket, frame by frame,
		// reads it as cut or, for an ERF RLen, does not read that length
		// at all.
		return
	}
	if p.Err != nil {
		require.NotNil(t, pkt.ErrorLayer(), "the analyzer calls it malformed (%v), gopacket does not", p.Err)
	} else if el := pkt.ErrorLayer(); el != nil && bth.Opcode.Known() && !bth.Truncated && p.MAD == nil {
		t.Fatalf("gopacket calls it malformed (%v), the analyzer does not", el.Error())
	}

	// Addresses and ECN of the header in front of the BTH.
	src, dst, ecn, ok := network(pkt)
	if ok {
		require.Equal(t, src, p.Src, "source")
		require.Equal(t, dst, p.Dst, "destination")
		require.Equal(t, ecn, p.ECN, "ECN")
	}

	// ICRC: gopacket adds a checked ICRC layer when the packet is whole
	// and its headers decoded; the analyzer checks every packet it
	// accounts (those with no malformed header).
	if icrc, ok := pkt.Layer(layers.LayerTypeICRC).(*layers.ICRC); ok && p.Err == nil && p.SrcPortRewritten {
		checkSrcPortRewritten(t, pkt, icrc, p)
	} else if ok && p.Err == nil {
		require.Equal(t, layers.ICRCResult{Status: icrc.Status, Value: icrc.Value, Expected: icrc.Expected}, p.ICRC, "ICRC")
	} else if p.Err == nil && p.BTH.Opcode.Known() {
		require.NotEqual(t, layers.ICRCOK, p.ICRC.Status, "an ICRC the analyzer checked and gopacket did not find")
	}
	if vcrc, ok := pkt.Layer(layers.LayerTypeVCRC).(*layers.VCRC); ok && p.VCRC != nil {
		require.Equal(t, vcrc.Status, p.VCRC.Status, "VCRC status")
		require.Equal(t, vcrc.Value, p.VCRC.Value, "VCRC")
	}
}

// network returns the addresses and ECN bits the analyzer should give the
// packet: those of the last IP header, GRH or LRH before the BTH.
func network(pkt gopacket.Packet) (src, dst analyze.Addr, ecn uint8, ok bool) {
	ip := func(b net.IP) netip.Addr {
		a, _ := netip.AddrFromSlice(b)
		return a
	}
	for _, l := range pkt.Layers() {
		switch v := l.(type) {
		case *gplayers.IPv4:
			src, dst, ecn, ok = analyze.Addr{IP: ip(v.SrcIP.To4())}, analyze.Addr{IP: ip(v.DstIP.To4())}, v.TOS&3, true
		case *gplayers.IPv6:
			src, dst, ecn, ok = analyze.Addr{IP: ip(v.SrcIP)}, analyze.Addr{IP: ip(v.DstIP)}, v.TrafficClass&3, true
		case *layers.LRH:
			src, dst, ecn, ok = analyze.Addr{LID: v.SLID, IsLID: true}, analyze.Addr{LID: v.DLID, IsLID: true}, 0, true
		case *layers.GRH:
			s, d := src, dst
			// An IPv4-mapped GID names its host by the IPv4 address.
			s.IP, d.IP, s.IsLID, d.IsLID = ip(v.SGID).Unmap(), ip(v.DGID).Unmap(), false, false
			src, dst, ecn, ok = s, d, v.TClass&3, true
		case *layers.BTH:
			return
		}
	}
	return
}

// udpBeyondIP reports a RoCE v2 UDP length larger than the IP payload
// length its IP header declares.
func udpBeyondIP(pkt gopacket.Packet) bool {
	payload := -1
	for _, l := range pkt.Layers() {
		switch v := l.(type) {
		case *gplayers.IPv4:
			payload = int(v.Length) - int(v.IHL)*4
		case *gplayers.IPv6:
			if v.Length > 0 {
				payload = int(v.Length)
			}
		case *gplayers.UDP:
			return payload >= 0 && int(v.Length) > payload
		}
	}
	return false
}

// exported returns the exported, non-embedded fields of the struct l
// points to, by name: the decoded values, without the BaseLayer slices
// and the link to the BTH.
func exported(l any) map[string]any {
	v := reflect.ValueOf(l).Elem()
	out := map[string]any{}
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if f.Anonymous || !f.IsExported() {
			continue
		}
		out[f.Name] = v.Field(i).Interface()
	}
	return out
}

func keys(m map[gopacket.LayerType]gopacket.Layer) []gopacket.LayerType {
	var out []gopacket.LayerType
	for k := range m {
		out = append(out, k)
	}
	return out
}
