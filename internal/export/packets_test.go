package export

import (
	"encoding/binary"
	"errors"
	"maps"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/export/exporttest"
	"github.com/roce-dissect/roce-dissect/layers"
)

// wrapCase is a chain of wraps variedPackets gives a packet, and the
// encapsulation columns docs/parquet.md says its row has (nil: null).
type wrapCase struct {
	wraps                           []analyze.Wrap
	chain, mirrorSrc                any
	session, tunnelID, tunnelIDName any
}

var (
	switchA, switchB = netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.9")
	collector        = netip.MustParseAddr("192.0.2.2")
	vtep1, vtep2     = netip.MustParseAddr("172.16.0.1"), netip.MustParseAddr("172.16.0.2")
)

// wrapCases are variedPackets' wraps by frame index modulo 97.
var wrapCases = map[int]wrapCase{
	41: {[]analyze.Wrap{{Kind: analyze.WrapERSPAN3, Src: switchA, Dst: collector, ID: 7}, {Kind: analyze.WrapVXLAN, Src: vtep1, Dst: vtep2, ID: 5001}},
		"erspan3/vxlan", "192.0.2.1", uint32(7), uint32(5001), "VNI"},
	43: {[]analyze.Wrap{{Kind: analyze.WrapERSPAN1, Src: switchB, Dst: collector}},
		"erspan1", "192.0.2.9", nil, nil, nil},
	47: {[]analyze.Wrap{{Kind: analyze.WrapQinQ, ID: 200}, {Kind: analyze.WrapMPLS, ID: 16001}},
		"qinq/mpls", nil, nil, uint32(16001), "label"},
	53: {[]analyze.Wrap{{Kind: analyze.WrapERSPAN2, Src: switchB, Dst: collector, ID: 1023}},
		"erspan2", "192.0.2.9", uint32(1023), nil, nil},
	59: {[]analyze.Wrap{{Kind: analyze.WrapERSPAN2, Src: switchA, Dst: collector, ID: 3}, {Kind: analyze.WrapNVGRE, Src: vtep1, Dst: vtep2, ID: 0xABCDEF}},
		"erspan2/nvgre", "192.0.2.1", uint32(3), uint32(0xABCDEF), "VSID"},
	61: {[]analyze.Wrap{{Kind: analyze.WrapGENEVE, Src: vtep2, Dst: vtep1, ID: 0}},
		"geneve", nil, nil, uint32(0), "VNI"},
}

// variedPackets are benchPackets(n) with, every few frames, what the
// columns' nulls and other values come from: a VLAN tag, a LID address
// (no priority), a frame without BTH (malformed, with its error), a
// truncated one (no ICRC), a NIC-rewritten source port, an unknown payload length,
// a NAK, IPv6 (a flow label), RoCE v1 (a GRH), the wraps of wrapCases;
// priorities go round 0…7.
func variedPackets(n int) []analyze.Packet {
	ps := benchPackets(n)
	for i := range ps {
		p := &ps[i]
		p.Priority = int8(i % 8)
		if c, ok := wrapCases[i%97]; ok {
			p.Wraps = c.wraps
		}
		switch i % 97 {
		case 3:
			p.VLAN = 100 + i%7
		case 5:
			p.Src, p.Dst, p.Encap = analyze.Addr{LID: uint16(i % 300), IsLID: true}, analyze.Addr{LID: 7, IsLID: true}, analyze.EncapIB
			p.Priority = -1
		case 11:
			p.BTH, p.AETH, p.RETH, p.PayloadLen = nil, nil, nil, -1
			p.Err = errors.New("short BTH: " + time.Duration(i).String())
		case 7:
			p.Src.IP, p.Dst.IP = netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
			p.IPID, p.FlowLabel, p.HopLimit = 0, uint32(0xABCDE-i%5), 255
		case 13:
			p.Truncated, p.CapLength, p.ICRC.Status = true, 128, layers.ICRCUnverifiable
			p.BTH.Trailer = nil
		case 67:
			p.Src, p.Dst, p.Encap = analyze.Addr{IP: netip.MustParseAddr("10.1.0.1")}, analyze.Addr{IP: netip.MustParseAddr("10.1.0.2")}, analyze.EncapRoCEv1
			p.GRH, p.IPID, p.FlowLabel, p.HopLimit = &layers.GRH{}, 0, 17, 1
		case 17:
			p.SrcPortRewritten, p.OriginalSrcPort = true, uint16(49152+i)
		case 19:
			p.PayloadLen = -1
		case 23:
			p.AETH = &layers.AETH{Syndrome: 0x60 | 1, MSN: uint32(i)} // NAK
			p.BTH.Opcode, p.BTH.FECN = layers.OpcodeRCAcknowledge, true
		case 31:
			p.BTH.BECN, p.BTH.AckReq = true, true
		case 37:
			p.BTH.SolicitedEvent, p.ECN = true, 3
		case 29:
			p.IsRDMA = false // not a row
		}
	}
	return ps
}

// want is the row of p as docs/parquet.md describes it, in the values
// Arrow reads (nil for null): exporttest.PacketRow and the newer columns.
func want(file string, p *analyze.Packet) map[string]any {
	m := exporttest.PacketRow(file, p)
	maps.Copy(m, map[string]any{
		"encapsulation": nil, "mirror_src": nil, "mirror_session": nil, "tunnel_id": nil, "tunnel_id_name": nil,
		"priority":               exporttest.Null(p.Priority >= 0, int32(p.Priority)),
		"icrc_value":             nil,
		"icrc_original_src_port": exporttest.Null(p.SrcPortRewritten, p.OriginalSrcPort),
		"ip_id":                  exporttest.Null(p.Encap == analyze.EncapRoCEv2 || p.GRH != nil, uint32(p.IPID)|p.FlowLabel),
		"ttl":                    exporttest.Null(p.Encap == analyze.EncapRoCEv2 || p.GRH != nil, p.HopLimit),
	})
	if c, ok := wrapCases[int(p.Frame-1)%97]; ok {
		m["encapsulation"], m["mirror_src"] = c.chain, c.mirrorSrc
		m["mirror_session"], m["tunnel_id"], m["tunnel_id_name"] = c.session, c.tunnelID, c.tunnelIDName
	}
	if b := p.BTH; b != nil {
		if len(b.Trailer) == layers.ICRCLen {
			m["icrc_value"] = binary.BigEndian.Uint32(b.Trailer) // as Wireshark shows it
		}
	}
	return m
}

// TestPacketWriterReadBack: every column of every row, over several
// batches and row groups, read back by Arrow, is the packet's field the
// schema documents, nulls included; non-RDMA frames leave no row.
func TestPacketWriterReadBack(t *testing.T) {
	for _, n := range []int{0, 1, batchRows, rowGroupRows + 3*batchRows + 5} {
		ps := variedPackets(n)
		path := filepath.Join(t.TempDir(), "sub", PacketsFile(0, 1))
		pw, err := NewPacketWriter(path, "cap.pcapng")
		require.NoError(t, err)
		var rows []map[string]any
		for i := range ps {
			pw.Add(&ps[i], ps[i].Frame)
			if ps[i].IsRDMA {
				rows = append(rows, want("cap.pcapng", &ps[i]))
			}
		}
		require.NoError(t, pw.Close())
		got := exporttest.ReadRows(t, path)
		require.Len(t, got, len(rows), "%d packets", n)
		for i := range rows {
			if !assert.Equal(t, rows[i], got[i], "%d packets: row %d", n, i) {
				break
			}
		}
	}
}

// TestPacketWriterAddAllocs: once a capture's addresses, opcodes and
// encapsulations are known, Add allocates nothing, wrapped packets and
// malformed ones included (the encoding goroutine, idle during the
// count, allocates its pages per row group).
func TestPacketWriterAddAllocs(t *testing.T) {
	var ps []analyze.Packet
	for _, p := range variedPackets(5 * batchRows) {
		if p.IsRDMA && len(ps) < 4*batchRows {
			ps = append(ps, p)
		}
	}
	pw, err := NewPacketWriter(filepath.Join(t.TempDir(), PacketsFile(0, 0)), "a.pcap")
	require.NoError(t, err)
	for i := range ps {
		pw.Add(&ps[i], ps[i].Frame)
	}
	require.Empty(t, pw.cur.recs, "the packets are batches whole: the count below hands none over")
	for len(pw.free) == 0 { // the goroutine is encoding the last batch
		time.Sleep(time.Millisecond)
	}
	// Each run adds batchRows/3 packets (AllocsPerRun's average is an
	// integer: one a run would not show): a warm-up, then the one counted.
	i := 0
	allocs := testing.AllocsPerRun(1, func() {
		for range batchRows / 3 {
			pw.Add(&ps[i], ps[i].Frame)
			i++
		}
	})
	assert.Zero(t, allocs, "allocations in %d packets", batchRows/3)
	assert.Equal(t, 2*(batchRows/3), i)
	require.NoError(t, pw.Close())
}
