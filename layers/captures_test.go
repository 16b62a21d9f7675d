package layers

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vectorCase is one file of ../shared/captures/vectors with the values
// README.md gives (opcode, PadCnt, data bytes, MSN, UDP ports, ICRC on the
// wire) and the rest of its header fields.
type vectorCase struct {
	file string
	kind NetworkKind
	want []gopacket.Layer
	wire string // ICRC bytes on the wire
}

var vectorCases = []vectorCase{
	{
		file: "01_scapy_cnp_connectx4lx.pcap", kind: NetworkIPv4, wire: "82fd002a",
		want: []gopacket.Layer{
			&BTH{Opcode: OpcodeRoCEv2CNP, PKey: 0xFFFF, BECN: true, DestQP: 0x118},
			&CNP{},
			&ICRC{Value: 0x2a00fd82},
		},
	},
	{
		file: "02_scapy_rocev1_rc_rdma_write_only.pcap", kind: NetworkGRH, wire: "e3d856bb",
		want: []gopacket.Layer{
			&GRH{IPVer: 6, TClass: 0x02, PayLen: 40, NxtHdr: NxtHdrBTH, HopLmt: 64,
				SGID: gid("00000000000000000000ffff0f000002"), DGID: gid("00000000000000000000ffff0f000002")},
			&BTH{Opcode: OpcodeRCRDMAWriteOnly, MigReq: true, PadCnt: 3, PKey: 0xFFFF, DestQP: 0x10a, AckReq: true, PSN: 0xa788bc},
			&RETH{VA: 0x55d4c0726000, RKey: 0x47b3, DMALength: 5},
			payloadOf("0000000001"),
			&ICRC{Value: 0xbb56d8e3},
		},
	},
	{
		file: "03_scapy_rocev1_rc_ack.pcap", kind: NetworkGRH, wire: "25f0c038",
		want: []gopacket.Layer{
			&GRH{IPVer: 6, TClass: 0x02, PayLen: 20, NxtHdr: NxtHdrBTH, HopLmt: 64,
				SGID: gid("00000000000000000000ffff0f000002"), DGID: gid("00000000000000000000ffff0f000002")},
			&BTH{Opcode: OpcodeRCAcknowledge, MigReq: true, PKey: 0xFFFF, DestQP: 0x109, PSN: 0xa788c0},
			&AETH{Syndrome: 0, MSN: 5},
			&ICRC{Value: 0x38c0f025},
		},
	},
	{
		file: "04_scapy_synthetic_uc_send_only_ipv4.pcap", kind: NetworkIPv4, wire: "78f353f3",
		want: []gopacket.Layer{
			&BTH{Opcode: OpcodeUCSendOnly, MigReq: true, PadCnt: 2, PKey: 0xFFFF, DestQP: 0xd3, PSN: 0xcf1710},
			payloadOf("4630818be28935d90e9a95505401be885e50"),
			&ICRC{Value: 0xf353f378},
		},
	},
	{
		file: "05_scapy_synthetic_uc_send_only_ipv6.pcap", kind: NetworkIPv6, wire: "3e5b743b",
		want: []gopacket.Layer{
			&BTH{Opcode: OpcodeUCSendOnly, MigReq: true, PadCnt: 2, PKey: 0xFFFF, DestQP: 0xd3, PSN: 0xcf1710},
			payloadOf("4630818be28935d90e9a95505401be885e50"),
			&ICRC{Value: 0x3b745b3e},
		},
	},
	{
		file: "06_mellanox_cnp_example_libconntrack.pcap", kind: NetworkIPv4, wire: "dafc1bef",
		want: []gopacket.Layer{
			&BTH{Opcode: OpcodeRoCEv2CNP, PKey: 0xFFFF, BECN: true, DestQP: 0xd2},
			&CNP{},
			&ICRC{Value: 0xef1bfcda},
		},
	},
	{
		file: "07_pcapplusplus_branch_rc_read_request.pcap", kind: NetworkIPv4, wire: "08c6154a",
		want: []gopacket.Layer{
			&BTH{Opcode: OpcodeRCRDMAReadRequest, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 0x54cb63},
			&RETH{VA: 0x7fee260fb000, RKey: 0x2b8, DMALength: 65536},
			&ICRC{Value: 0x4a15c608},
		},
	},
}

func vectorPath(file string) string { return filepath.Join(capturesDir, "vectors", file) }

// TestVectors decodes the seven known-good frames.
func TestVectors(t *testing.T) {
	var all []capture
	for _, c := range vectorCases {
		t.Run(c.file, func(t *testing.T) {
			frames := readPcap(t, vectorPath(c.file))
			require.Len(t, frames, 1)
			all = append(all, frames[0])
			pkt := gopacket.NewPacket(frames[0].data, frames[0].linkType, gopacket.Default)
			require.Nil(t, pkt.ErrorLayer())
			assert.Equal(t, headers(c.want), ibLayers(pkt))
			icrc := pkt.Layer(LayerTypeICRC).(*ICRC)
			assert.Equal(t, ICRCOK, icrc.Status)
			assert.Equal(t, mustHex(c.wire), icrc.Contents)
			if c.kind == NetworkIPv4 || c.kind == NetworkIPv6 {
				assert.Equal(t, UDPPortRoCEv2, pkt.Layer(gplayers.LayerTypeUDP).(*gplayers.UDP).DstPort)
			}
		})
	}
	t.Run("all_vectors.pcap", func(t *testing.T) {
		frames := readPcap(t, vectorPath("all_vectors.pcap"))
		require.Len(t, frames, len(all))
		for i, f := range frames {
			assert.Equal(t, all[i].data, f.data, "frame %d", i+1)
		}
	})
}

// icrcRegions locates, in a decoded vector, the bytes the ICRC covers.
type icrcRegions struct {
	netOff, netLen int // network header (IPv4/IPv6/GRH)
	udpOff         int // -1 without UDP
	bthOff, end    int // BTH through pad
	kind           NetworkKind
}

func regionsOf(t *testing.T, data []byte, pkt gopacket.Packet) icrcRegions {
	r := icrcRegions{udpOff: -1}
	kind, netHdr, udpHdr := networkOf(pkt.(gopacket.PacketBuilder))
	require.NotEqual(t, NetworkNone, kind)
	r.kind = kind
	r.netOff, r.netLen = offsetIn(data, netHdr), len(netHdr)
	if udpHdr != nil {
		r.udpOff = offsetIn(data, udpHdr)
	}
	bth := pkt.Layer(LayerTypeBTH).(*BTH)
	r.bthOff = offsetIn(data, bth.Contents)
	r.end = r.bthOff + len(bth.ICRCCovered())
	return r
}

// maskedBits returns, for a byte of the frame, the bits the ICRC does not
// cover (PROTOCOL.md), or -1 when the byte is outside the coverage.
func (r icrcRegions) maskedBits(i int) int {
	switch {
	case i >= r.netOff && i < r.netOff+r.netLen:
		o := i - r.netOff
		if r.kind == NetworkIPv4 {
			switch o {
			case 1, 8, 10, 11: // TOS, TTL, header checksum
				return 0xFF
			}
			return 0
		}
		switch o { // IPv6 / GRH: traffic class, flow label, hop limit
		case 0:
			return 0x0F
		case 1, 2, 3, 7:
			return 0xFF
		}
		return 0
	case r.udpOff >= 0 && i >= r.udpOff && i < r.udpOff+8:
		if o := i - r.udpOff; o == 6 || o == 7 { // UDP checksum
			return 0xFF
		}
		return 0
	case i >= r.bthOff && i < r.end:
		if i-r.bthOff == 4 { // FECN, BECN, resv6
			return 0xFF
		}
		return 0
	case i >= r.end && i < r.end+ICRCLen: // the ICRC itself
		return 0
	}
	return -1
}

// TestVectorsICRCCoverage flips every bit of every vector, one at a time,
// and recomputes the ICRC over the same regions: a covered bit makes it
// bad, a masked bit (TOS/ECN, TTL, IP checksum, flow label, hop limit, UDP
// checksum, FECN/BECN) keeps it ok. Then a few flips go through NewPacket.
func TestVectorsICRCCoverage(t *testing.T) {
	for _, c := range vectorCases {
		t.Run(c.file, func(t *testing.T) {
			frames := readPcap(t, vectorPath(c.file))
			data := frames[0].data
			r := regionsOf(t, data, gopacket.NewPacket(data, frames[0].linkType, gopacket.Default))
			check := func(d []byte) ICRCStatus {
				var udp []byte
				if r.udpOff >= 0 {
					udp = d[r.udpOff : r.udpOff+8]
				}
				crc, err := ComputeICRC(r.kind, d[r.netOff:r.netOff+r.netLen], udp, d[r.bthOff:r.end])
				require.NoError(t, err)
				if crc == binary.LittleEndian.Uint32(d[r.end:]) {
					return ICRCOK
				}
				return ICRCBad
			}
			require.Equal(t, ICRCOK, check(data))
			flipped := append([]byte(nil), data...)
			covered := 0
			for i := range data {
				masked := r.maskedBits(i)
				if masked < 0 {
					continue
				}
				for bit := range 8 {
					flipped[i] ^= 1 << bit
					want := ICRCBad
					if masked&(1<<bit) != 0 {
						want = ICRCOK
					} else {
						covered++
					}
					require.Equal(t, want, check(flipped), "byte %d bit %d", i, bit)
					flipped[i] ^= 1 << bit
				}
			}
			assert.Greater(t, covered, 8*(r.end-r.bthOff))

			// Through NewPacket: masked fields keep it ok, others make it bad.
			flips := map[string]struct {
				off, mask int
				want      ICRCStatus
			}{
				"FECN":         {r.bthOff + 4, 0x80, ICRCOK},
				"BECN":         {r.bthOff + 4, 0x40, ICRCOK},
				"PSN":          {r.bthOff + 11, 0x01, ICRCBad},
				"P_Key":        {r.bthOff + 2, 0x80, ICRCBad},
				"last covered": {r.end - 1, 0x01, ICRCBad},
				"ICRC":         {r.end, 0x01, ICRCBad},
			}
			if r.kind == NetworkIPv4 {
				flips["ECN"] = struct {
					off, mask int
					want      ICRCStatus
				}{r.netOff + 1, 0x03, ICRCOK}
				flips["TTL"] = struct {
					off, mask int
					want      ICRCStatus
				}{r.netOff + 8, 0xFF, ICRCOK}
				flips["IP source"] = struct {
					off, mask int
					want      ICRCStatus
				}{r.netOff + 12, 0x01, ICRCBad}
			} else {
				flips["hop limit"] = struct {
					off, mask int
					want      ICRCStatus
				}{r.netOff + 7, 0xFF, ICRCOK}
				flips["ECN"] = struct {
					off, mask int
					want      ICRCStatus
				}{r.netOff + 1, 0x30, ICRCOK}
				flips["source GID"] = struct {
					off, mask int
					want      ICRCStatus
				}{r.netOff + 23, 0x01, ICRCBad}
			}
			if r.udpOff >= 0 {
				flips["UDP checksum"] = struct {
					off, mask int
					want      ICRCStatus
				}{r.udpOff + 6, 0xFF, ICRCOK}
				flips["UDP source port"] = struct {
					off, mask int
					want      ICRCStatus
				}{r.udpOff + 1, 0x01, ICRCBad}
			}
			for name, f := range flips {
				d := append([]byte(nil), data...)
				d[f.off] ^= byte(f.mask)
				pkt := gopacket.NewPacket(d, frames[0].linkType, gopacket.Default)
				require.Nil(t, pkt.ErrorLayer(), name)
				icrc := pkt.Layer(LayerTypeICRC).(*ICRC)
				assert.Equal(t, f.want, icrc.Status, name)
			}
		})
	}
}

// TestSoftRoCECaptures: every RoCE frame of every Soft-RoCE capture decodes
// without error and with a valid ICRC, through NewPacket and through a
// DecodingLayerParser, which agree.
func TestSoftRoCECaptures(t *testing.T) {
	for _, path := range capturePaths(t, "softroce") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			parser, std, ib := newParser(gplayers.LayerTypeEthernet)
			parser.IgnoreUnsupported = true // MADs (package cm) on QP1
			var decoded []gopacket.LayerType
			roce := 0
			for _, f := range readPcap(t, path) {
				pkt := gopacket.NewPacket(f.data, f.linkType, gopacket.Default)
				udp, _ := pkt.Layer(gplayers.LayerTypeUDP).(*gplayers.UDP)
				if udp == nil || udp.DstPort != UDPPortRoCEv2 {
					assert.Nil(t, pkt.Layer(LayerTypeBTH), "frame %d", f.n)
					continue
				}
				roce++
				require.Nil(t, pkt.ErrorLayer(), "frame %d", f.n)
				bth := pkt.Layer(LayerTypeBTH).(*BTH)
				require.True(t, bth.Opcode.Known(), "frame %d", f.n)
				for _, h := range bth.Opcode.Headers() {
					assert.NotNil(t, pkt.Layer(h), "frame %d: %s", f.n, h)
				}
				icrc := pkt.Layer(LayerTypeICRC).(*ICRC)
				require.Equal(t, ICRCOK, icrc.Status, "frame %d", f.n)

				require.NoError(t, parser.DecodeLayers(f.data, &decoded), "frame %d", f.n)
				assert.Equal(t, bthHeader(bth), bthHeader(&ib.BTH), "frame %d", f.n)
				assert.Equal(t, ICRCOK, checkDLP(decoded, std, ib).Status, "frame %d", f.n)
				if bth.IsMAD() {
					// Without package cm, the MAD stays raw payload.
					assert.Len(t, pkt.ApplicationLayer().Payload(), 256, "frame %d: MAD", f.n)
				}
			}
			assert.Positive(t, roce)
		})
	}
}

// TestNativeIBCapture: every frame of the ERF capture decodes its ERF
// header, LRH (and GRH where LNH says so) with valid ICRC and VCRC.
func TestNativeIBCapture(t *testing.T) {
	frames := readPcap(t, filepath.Join(capturesDir, "ib-erf", "infiniband.pcap"))
	require.Len(t, frames, 43)
	parser, std, ib := newParser(LayerTypeERF)
	parser.IgnoreUnsupported = true
	var decoded []gopacket.LayerType
	withGRH := 0
	for _, f := range frames {
		require.Equal(t, LayerTypeERF, f.linkType)
		pkt := gopacket.NewPacket(f.data, f.linkType, gopacket.Default)
		require.Nil(t, pkt.ErrorLayer(), "frame %d", f.n)
		erf := pkt.Layer(LayerTypeERF).(*ERF)
		assert.Equal(t, uint8(ERFTypeInfiniBand), erf.Type)
		lrh := pkt.Layer(LayerTypeLRH).(*LRH)
		assert.Equal(t, int(erf.WLen), int(lrh.PktLen)*4+VCRCLen, "frame %d", f.n)
		if lrh.LNH == LNHIBAGlobal {
			withGRH++
			require.NotNil(t, pkt.Layer(LayerTypeGRH), "frame %d", f.n)
		} else {
			require.Nil(t, pkt.Layer(LayerTypeGRH), "frame %d", f.n)
		}
		if lrh.VL == 15 {
			assert.Equal(t, uint32(0), pkt.Layer(LayerTypeBTH).(*BTH).DestQP, "frame %d: VL15 is QP0", f.n)
		}
		icrc := pkt.Layer(LayerTypeICRC).(*ICRC)
		require.Equal(t, ICRCOK, icrc.Status, "frame %d", f.n)
		vcrc := pkt.Layer(LayerTypeVCRC).(*VCRC)
		require.Equal(t, ICRCOK, vcrc.Status, "frame %d", f.n)

		require.NoError(t, parser.DecodeLayers(f.data, &decoded), "frame %d", f.n)
		assert.Equal(t, ICRCOK, checkDLP(decoded, std, ib).Status, "frame %d", f.n)
		assert.Equal(t, ICRCOK, ib.LRH.CheckVCRC().Status, "frame %d", f.n)
	}
	assert.Positive(t, withGRH)
}
