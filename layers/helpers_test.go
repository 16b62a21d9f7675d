package layers

import (
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/require"
)

// capturesDir is the shared capture folder, next to the repository.
const capturesDir = "../../shared/captures"

// goldenFrame is a frame written header by header from PROTOCOL.md.
type goldenFrame struct {
	name  string
	first gopacket.LayerType // Ethernet, LRH or ERF
	hex   []string           // one string per header, bytes grouped by field
	want  []gopacket.Layer   // this package's layers (and the payload), header fields only
}

// bytes returns the frame.
func (g goldenFrame) bytes() []byte {
	return mustHex(strings.Join(g.hex, ""))
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func payloadOf(s string) *gopacket.Payload {
	p := gopacket.Payload(mustHex(s))
	return &p
}

func gid(s string) net.IP { return net.IP(mustHex(s)) }

// bthHeader returns the header fields of b, nothing else.
func bthHeader(b *BTH) *BTH {
	return &BTH{
		Opcode: b.Opcode, SolicitedEvent: b.SolicitedEvent, MigReq: b.MigReq, PadCnt: b.PadCnt,
		TVer: b.TVer, PKey: b.PKey, FECN: b.FECN, BECN: b.BECN, Resv6: b.Resv6,
		DestQP: b.DestQP, AckReq: b.AckReq, Resv7: b.Resv7, PSN: b.PSN, DC: b.DC,
	}
}

// header returns a copy of one of this package's layers (or a payload)
// holding only the values a golden frame states: no Contents/Payload
// slices, no links, no check results.
func header(l gopacket.Layer) gopacket.Layer {
	switch v := l.(type) {
	case *BTH:
		return bthHeader(v)
	case *RDETH:
		c := *v
		c.BaseLayer, c.extLink = gplayers.BaseLayer{}, extLink{}
		return &c
	case *DETH:
		c := *v
		c.BaseLayer, c.extLink = gplayers.BaseLayer{}, extLink{}
		return &c
	case *XRCETH:
		c := *v
		c.BaseLayer, c.extLink = gplayers.BaseLayer{}, extLink{}
		return &c
	case *RETH:
		c := *v
		c.BaseLayer, c.extLink = gplayers.BaseLayer{}, extLink{}
		return &c
	case *AtomicETH:
		c := *v
		c.BaseLayer, c.extLink = gplayers.BaseLayer{}, extLink{}
		return &c
	case *AETH:
		c := *v
		c.BaseLayer, c.extLink = gplayers.BaseLayer{}, extLink{}
		return &c
	case *AtomicAckETH:
		c := *v
		c.BaseLayer, c.extLink = gplayers.BaseLayer{}, extLink{}
		return &c
	case *ImmDt:
		c := *v
		c.BaseLayer, c.extLink = gplayers.BaseLayer{}, extLink{}
		return &c
	case *IETH:
		c := *v
		c.BaseLayer, c.extLink = gplayers.BaseLayer{}, extLink{}
		return &c
	case *FETH:
		c := *v
		c.BaseLayer, c.extLink = gplayers.BaseLayer{}, extLink{}
		return &c
	case *CNP:
		c := *v
		c.BaseLayer, c.extLink = gplayers.BaseLayer{}, extLink{}
		return &c
	case *DCETH:
		c := *v
		c.BaseLayer, c.extLink = gplayers.BaseLayer{}, extLink{}
		return &c
	case *GRH:
		c := *v
		c.BaseLayer = gplayers.BaseLayer{}
		c.SGID = append(net.IP(nil), v.SGID...)
		c.DGID = append(net.IP(nil), v.DGID...)
		return &c
	case *LRH:
		return &LRH{VL: v.VL, LVer: v.LVer, SL: v.SL, Reserved2: v.Reserved2, LNH: v.LNH, DLID: v.DLID,
			Reserved5: v.Reserved5, PktLen: v.PktLen, SLID: v.SLID}
	case *ERF:
		c := *v
		c.BaseLayer = gplayers.BaseLayer{}
		if len(c.ExtHeaders) == 0 {
			c.ExtHeaders = nil
		}
		return &c
	case *ERSPANIII:
		c := *v
		c.BaseLayer = gplayers.BaseLayer{}
		return &c
	case *MACControl:
		c := *v
		c.BaseLayer = gplayers.BaseLayer{}
		return &c
	case *ICRC:
		return &ICRC{Value: v.Value}
	case *VCRC:
		return &VCRC{Value: v.Value}
	case *gopacket.Payload:
		p := gopacket.Payload(append([]byte(nil), *v...))
		return &p
	}
	return nil
}

// ibLayers returns header() of every layer of pkt that belongs to this
// package, plus the payload.
func ibLayers(pkt gopacket.Packet) []gopacket.Layer {
	var out []gopacket.Layer
	for _, l := range pkt.Layers() {
		if h := header(l); h != nil {
			out = append(out, h)
		}
	}
	return out
}

func headers(ls []gopacket.Layer) []gopacket.Layer {
	out := make([]gopacket.Layer, 0, len(ls))
	for _, l := range ls {
		out = append(out, header(l))
	}
	return out
}

// offsetIn returns where sub starts inside data (sub must alias data).
func offsetIn(data, sub []byte) int { return cap(data) - cap(sub) }

// newParser returns a DecodingLayerParser for Ethernet/IPv4/IPv6/UDP and
// every IB layer, starting at first.
func newParser(first gopacket.LayerType) (*gopacket.DecodingLayerParser, *stdLayers, *TransportLayers) {
	std := &stdLayers{}
	ib := NewTransportLayers()
	dl := append([]gopacket.DecodingLayer{&std.eth, &std.ip4, &std.ip6, &std.udp}, ib.DecodingLayers()...)
	return gopacket.NewDecodingLayerParser(first, dl...), std, ib
}

type stdLayers struct {
	eth gplayers.Ethernet
	ip4 gplayers.IPv4
	ip6 gplayers.IPv6
	udp gplayers.UDP
}

// checkDLP verifies the ICRC of a packet decoded by a DecodingLayerParser.
func checkDLP(decoded []gopacket.LayerType, std *stdLayers, ib *TransportLayers) ICRCResult {
	kind, netHdr, udpHdr := NetworkNone, []byte(nil), []byte(nil)
	for _, t := range decoded {
		switch t {
		case gplayers.LayerTypeIPv4:
			kind, netHdr = NetworkIPv4, std.ip4.Contents
		case gplayers.LayerTypeIPv6:
			kind, netHdr = NetworkIPv6, std.ip6.Contents
		case gplayers.LayerTypeUDP:
			udpHdr = std.udp.Contents
		case LayerTypeGRH:
			kind, netHdr = NetworkGRH, ib.GRH.Contents
		case LayerTypeLRH:
			if ib.LRH.LNH == LNHIBALocal {
				kind, netHdr = NetworkLRH, ib.LRH.Contents
			}
		}
	}
	return CheckICRC(kind, netHdr, udpHdr, &ib.BTH)
}

// dlpLayer returns the TransportLayers member of type t.
func dlpLayer(ib *TransportLayers, t gopacket.LayerType) gopacket.Layer {
	for _, l := range ib.DecodingLayers() {
		if l.CanDecode().Contains(t) {
			return l.(gopacket.Layer)
		}
	}
	return nil
}

// capture is one frame read from a pcap file.
type capture struct {
	data     []byte
	linkType gopacket.LayerType
	n        int // frame number, from 1
}

// readPcap reads every frame of a pcap file; the test is skipped when the
// shared captures are absent.
func readPcap(tb testing.TB, path string) []capture {
	tb.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		tb.Skipf("shared capture %s absent", path)
	}
	require.NoError(tb, err)
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	require.NoError(tb, err)
	var out []capture
	for {
		data, _, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		require.NoError(tb, err)
		out = append(out, capture{data: data, linkType: firstLayer(tb, r.LinkType()), n: len(out) + 1})
	}
	return out
}

// capturePaths lists the pcap files of one shared capture folder, or
// skips the test when it is absent.
func capturePaths(tb testing.TB, dir string) []string {
	tb.Helper()
	paths, _ := filepath.Glob(filepath.Join(capturesDir, dir, "*.pcap"))
	if len(paths) == 0 {
		tb.Skipf("shared captures %s absent", filepath.Join(capturesDir, dir))
	}
	return paths
}

// firstLayer maps a pcap link type to the first layer type.
func firstLayer(tb testing.TB, lt gplayers.LinkType) gopacket.LayerType {
	switch lt {
	case gplayers.LinkTypeEthernet:
		return gplayers.LayerTypeEthernet
	case LinkTypeERF:
		return LayerTypeERF
	case LinkTypeInfiniBand:
		return LayerTypeLRH
	}
	tb.Fatalf("unexpected link type %v", lt)
	return gopacket.LayerTypeZero
}
