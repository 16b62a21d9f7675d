// Golden frames, written by testdata/golden_frames.py from the field
// values in the comments. The IPv4/UDP checksums, ICRCs and VCRCs were
// computed there, independently of this package (zlib CRC-32 over the
// headers masked as PROTOCOL.md says, a bitwise CRC-16/0x100B); edit the
// script, not this file, so that they stay right.

package layers

import (
	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// goldenFrames holds one frame per opcode family and encapsulation, written
// header by header (each string is one header, its bytes grouped by field).
var goldenFrames = []goldenFrame{
	{
		name:  "RC SEND_ONLY, 7-byte payload (PadCnt 1)",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0034 1234 4000 40 11 1481 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 52, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0020 a748",                               // UDP: 49152 -> 4791, length 32, checksum
			"04 90 ffff 00 000011 80 000064",                    // BTH: opcode 0x04, SE 1 M 0 PadCnt 1 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x11, AckReq 1, PSN 100
			"68656c6c6f2121",                                    // payload, 7 bytes
			"00",                                                // pad, 1 bytes
			"4fab3807",                                          // ICRC (CRC-32 0x0738AB4F, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x04, SolicitedEvent: true, PadCnt: 1, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 100},
			payloadOf("68656c6c6f2121"),
			&ICRC{Value: 0x0738AB4F},
		},
	},
	{
		name:  "RC SEND_FIRST",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 003c 1234 4000 40 11 1479 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 60, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0028 29fd",                               // UDP: 49152 -> 4791, length 40, checksum
			"00 00 ffff 00 000011 00 000065",                    // BTH: opcode 0x00, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x11, AckReq 0, PSN 101
			"101112131415161718191a1b1c1d1e1f",                  // payload, 16 bytes
			"f8743d3b",                                          // ICRC (CRC-32 0x3B3D74F8, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x00, PKey: 0xFFFF, DestQP: 0x11, PSN: 101},
			payloadOf("101112131415161718191a1b1c1d1e1f"),
			&ICRC{Value: 0x3B3D74F8},
		},
	},
	{
		name:  "RC SEND_LAST_WITH_IMMEDIATE",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0038 1234 4000 40 11 147d 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 56, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0024 1664",                               // UDP: 49152 -> 4791, length 36, checksum
			"03 20 ffff 00 000011 80 000066",                    // BTH: opcode 0x03, SE 0 M 0 PadCnt 2 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x11, AckReq 1, PSN 102
			"deadbeef",                                          // ImmDt: 0xDEADBEEF
			"101112131415",                                      // payload, 6 bytes
			"00 00",                                             // pad, 2 bytes
			"51cb594e",                                          // ICRC (CRC-32 0x4E59CB51, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x03, PadCnt: 2, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 102},
			&ImmDt{Immediate: 0xDEADBEEF},
			payloadOf("101112131415"),
			&ICRC{Value: 0x4E59CB51},
		},
	},
	{
		name:  "RC RDMA_WRITE_FIRST",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 004c 1234 4000 40 11 1469 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 76, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0038 5ffc",                               // UDP: 49152 -> 4791, length 56, checksum
			"06 40 ffff 00 000012 00 fffffe",                    // BTH: opcode 0x06, SE 0 M 1 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x12, AckReq 0, PSN 16777214
			"00007f0000001000 00001234 00000bb8",                // RETH: VA 0x7F0000001000, R_Key 0x00001234, DMA length 3000
			"101112131415161718191a1b1c1d1e1f",                  // payload, 16 bytes
			"f1d059f9",                                          // ICRC (CRC-32 0xF959D0F1, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x06, MigReq: true, PKey: 0xFFFF, DestQP: 0x12, PSN: 16777214},
			&RETH{VA: 0x7F0000001000, RKey: 0x00001234, DMALength: 3000},
			payloadOf("101112131415161718191a1b1c1d1e1f"),
			&ICRC{Value: 0xF959D0F1},
		},
	},
	{
		name:  "RC RDMA_WRITE_MIDDLE",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 003c 1234 4000 40 11 1479 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 60, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0028 7b6e",                               // UDP: 49152 -> 4791, length 40, checksum
			"07 40 ffff 00 000012 00 ffffff",                    // BTH: opcode 0x07, SE 0 M 1 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x12, AckReq 0, PSN 16777215
			"101112131415161718191a1b1c1d1e1f",                  // payload, 16 bytes
			"981a4449",                                          // ICRC (CRC-32 0x49441A98, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x07, MigReq: true, PKey: 0xFFFF, DestQP: 0x12, PSN: 16777215},
			payloadOf("101112131415161718191a1b1c1d1e1f"),
			&ICRC{Value: 0x49441A98},
		},
	},
	{
		name:  "RC RDMA_WRITE_ONLY_WITH_IMMEDIATE, 5-byte payload (PadCnt 3)",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0048 1234 4000 40 11 146d 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 72, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0034 729c",                               // UDP: 49152 -> 4791, length 52, checksum
			"0b 30 ffff 00 000012 80 000000",                    // BTH: opcode 0x0B, SE 0 M 0 PadCnt 3 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x12, AckReq 1, PSN 0
			"0000000000001000 0000abcd 00000005",                // RETH: VA 0x1000, R_Key 0x0000ABCD, DMA length 5
			"01020304",                                          // ImmDt: 0x01020304
			"0102030405",                                        // payload, 5 bytes
			"00 00 00",                                          // pad, 3 bytes
			"ce8d8380",                                          // ICRC (CRC-32 0x80838DCE, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x0B, PadCnt: 3, PKey: 0xFFFF, DestQP: 0x12, AckReq: true, PSN: 0},
			&RETH{VA: 0x1000, RKey: 0x0000ABCD, DMALength: 5},
			&ImmDt{Immediate: 0x01020304},
			payloadOf("0102030405"),
			&ICRC{Value: 0x80838DCE},
		},
	},
	{
		name:  "RC RDMA_READ_REQUEST",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 003c 1234 4000 40 11 1479 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 60, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0028 b221",                               // UDP: 49152 -> 4791, length 40, checksum
			"0c 00 ffff 00 000013 80 0001f4",                    // BTH: opcode 0x0C, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x13, AckReq 1, PSN 500
			"00007f0000002000 00000d48 00000bb8",                // RETH: VA 0x7F0000002000, R_Key 0x00000D48, DMA length 3000
			"7056b063",                                          // ICRC (CRC-32 0x63B05670, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x0C, PKey: 0xFFFF, DestQP: 0x13, AckReq: true, PSN: 500},
			&RETH{VA: 0x7F0000002000, RKey: 0x00000D48, DMALength: 3000},
			&ICRC{Value: 0x63B05670},
		},
	},
	{
		name:  "RC RDMA_READ_RESPONSE_FIRST",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0040 1234 4000 40 11 1475 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 64, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 002c acfa",                               // UDP: 49152 -> 4791, length 44, checksum
			"0d 00 ffff 00 000014 00 0001f4",                    // BTH: opcode 0x0D, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x14, AckReq 0, PSN 500
			"1f 000003",                                         // AETH: syndrome 0x1F, MSN 3
			"101112131415161718191a1b1c1d1e1f",                  // payload, 16 bytes
			"17376dde",                                          // ICRC (CRC-32 0xDE6D3717, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x0D, PKey: 0xFFFF, DestQP: 0x14, PSN: 500},
			&AETH{Syndrome: 0x1F, MSN: 3},
			payloadOf("101112131415161718191a1b1c1d1e1f"),
			&ICRC{Value: 0xDE6D3717},
		},
	},
	{
		name:  "RC RDMA_READ_RESPONSE_MIDDLE",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 003c 1234 4000 40 11 1479 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 60, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0028 bd2c",                               // UDP: 49152 -> 4791, length 40, checksum
			"0e 00 ffff 00 000014 00 0001f5",                    // BTH: opcode 0x0E, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x14, AckReq 0, PSN 501
			"101112131415161718191a1b1c1d1e1f",                  // payload, 16 bytes
			"0ff182fc",                                          // ICRC (CRC-32 0xFC82F10F, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x0E, PKey: 0xFFFF, DestQP: 0x14, PSN: 501},
			payloadOf("101112131415161718191a1b1c1d1e1f"),
			&ICRC{Value: 0xFC82F10F},
		},
	},
	{
		name:  "RC RDMA_READ_RESPONSE_LAST, 6-byte payload (PadCnt 2)",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0038 1234 4000 40 11 147d 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 56, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0024 c57b",                               // UDP: 49152 -> 4791, length 36, checksum
			"0f 20 ffff 00 000014 00 0001f6",                    // BTH: opcode 0x0F, SE 0 M 0 PadCnt 2 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x14, AckReq 0, PSN 502
			"1f 000003",                                         // AETH: syndrome 0x1F, MSN 3
			"101112131415",                                      // payload, 6 bytes
			"00 00",                                             // pad, 2 bytes
			"36a0b669",                                          // ICRC (CRC-32 0x69B6A036, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x0F, PadCnt: 2, PKey: 0xFFFF, DestQP: 0x14, PSN: 502},
			&AETH{Syndrome: 0x1F, MSN: 3},
			payloadOf("101112131415"),
			&ICRC{Value: 0x69B6A036},
		},
	},
	{
		name:  "RC RDMA_READ_RESPONSE_ONLY",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0038 1234 4000 40 11 147d 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 56, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0024 9b80",                               // UDP: 49152 -> 4791, length 36, checksum
			"10 00 ffff 00 000014 00 0001f7",                    // BTH: opcode 0x10, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x14, AckReq 0, PSN 503
			"0a 000004",                                         // AETH: syndrome 0x0A, MSN 4
			"1011121314151617",                                  // payload, 8 bytes
			"eac62a45",                                          // ICRC (CRC-32 0x452AC6EA, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x10, PKey: 0xFFFF, DestQP: 0x14, PSN: 503},
			&AETH{Syndrome: 0x0A, MSN: 4},
			payloadOf("1011121314151617"),
			&ICRC{Value: 0x452AC6EA},
		},
	},
	{
		name:  "RC ACKNOWLEDGE, unlimited credits",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0030 1234 4000 40 11 1485 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 48, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 001c 08a1",                               // UDP: 49152 -> 4791, length 28, checksum
			"11 00 ffff 00 000015 00 000066",                    // BTH: opcode 0x11, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x15, AckReq 0, PSN 102
			"1f 000007",                                         // AETH: syndrome 0x1F, MSN 7
			"ad823256",                                          // ICRC (CRC-32 0x563282AD, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x11, PKey: 0xFFFF, DestQP: 0x15, PSN: 102},
			&AETH{Syndrome: 0x1F, MSN: 7},
			&ICRC{Value: 0x563282AD},
		},
	},
	{
		name:  "RC ACKNOWLEDGE, NAK PSN sequence error",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0030 1234 4000 40 11 1485 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 48, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 001c c204",                               // UDP: 49152 -> 4791, length 28, checksum
			"11 00 ffff 00 000015 00 000067",                    // BTH: opcode 0x11, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x15, AckReq 0, PSN 103
			"60 000007",                                         // AETH: syndrome 0x60, MSN 7
			"d71b0e58",                                          // ICRC (CRC-32 0x580E1BD7, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x11, PKey: 0xFFFF, DestQP: 0x15, PSN: 103},
			&AETH{Syndrome: 0x60, MSN: 7},
			&ICRC{Value: 0x580E1BD7},
		},
	},
	{
		name:  "RC ACKNOWLEDGE, RNR NAK timer 14 (1.28 ms)",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0030 1234 4000 40 11 1485 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 48, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 001c 3b20",                               // UDP: 49152 -> 4791, length 28, checksum
			"11 00 ffff 00 000015 00 000067",                    // BTH: opcode 0x11, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x15, AckReq 0, PSN 103
			"2e 000007",                                         // AETH: syndrome 0x2E, MSN 7
			"d934c523",                                          // ICRC (CRC-32 0x23C534D9, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x11, PKey: 0xFFFF, DestQP: 0x15, PSN: 103},
			&AETH{Syndrome: 0x2E, MSN: 7},
			&ICRC{Value: 0x23C534D9},
		},
	},
	{
		name:  "RC COMPARE_SWAP",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                              // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0048 1234 4000 40 11 146d 0a000001 0a000002",           // IPv4: IHL 5, TOS 0x02, total length 72, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0034 2cd8",                                         // UDP: 49152 -> 4791, length 52, checksum
			"13 00 ffff 00 000016 80 000007",                              // BTH: opcode 0x13, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x16, AckReq 1, PSN 7
			"00007f0000003000 00001986 1111111111111111 2222222222222222", // AtomicETH: VA 0x7F0000003000, R_Key 0x00001986, swap/add 0x1111111111111111, compare 0x2222222222222222
			"0355c02d", // ICRC (CRC-32 0x2DC05503, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x13, PKey: 0xFFFF, DestQP: 0x16, AckReq: true, PSN: 7},
			&AtomicETH{VA: 0x7F0000003000, RKey: 0x00001986, SwapOrAdd: 0x1111111111111111, Compare: 0x2222222222222222},
			&ICRC{Value: 0x2DC05503},
		},
	},
	{
		name:  "RC FETCH_ADD",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                              // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0048 1234 4000 40 11 146d 0a000001 0a000002",           // IPv4: IHL 5, TOS 0x02, total length 72, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0034 d279",                                         // UDP: 49152 -> 4791, length 52, checksum
			"14 00 ffff 00 000016 80 000008",                              // BTH: opcode 0x14, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x16, AckReq 1, PSN 8
			"00007f0000003008 00001986 0000000000000001 0000000000000000", // AtomicETH: VA 0x7F0000003008, R_Key 0x00001986, swap/add 0x1, compare 0x0
			"d75f1244", // ICRC (CRC-32 0x44125FD7, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x14, PKey: 0xFFFF, DestQP: 0x16, AckReq: true, PSN: 8},
			&AtomicETH{VA: 0x7F0000003008, RKey: 0x00001986, SwapOrAdd: 0x1, Compare: 0x0},
			&ICRC{Value: 0x44125FD7},
		},
	},
	{
		name:  "RC ATOMIC_ACKNOWLEDGE",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0038 1234 4000 40 11 147d 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 56, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0024 8fb8",                               // UDP: 49152 -> 4791, length 36, checksum
			"12 00 ffff 00 000017 00 000008",                    // BTH: opcode 0x12, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x17, AckReq 0, PSN 8
			"1f 000009",                                         // AETH: syndrome 0x1F, MSN 9
			"3a00b0a0c0d0e0f1",                                  // AtomicAckETH: original remote data 0x3A00B0A0C0D0E0F1
			"dc11ef95",                                          // ICRC (CRC-32 0x95EF11DC, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x12, PKey: 0xFFFF, DestQP: 0x17, PSN: 8},
			&AETH{Syndrome: 0x1F, MSN: 9},
			&AtomicAckETH{OrigRemoteData: 0x3A00B0A0C0D0E0F1},
			&ICRC{Value: 0x95EF11DC},
		},
	},
	{
		name:  "RC SEND_ONLY_WITH_INVALIDATE",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0034 1234 4000 40 11 1481 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 52, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0020 ce11",                               // UDP: 49152 -> 4791, length 32, checksum
			"17 00 ffff 00 000011 80 000067",                    // BTH: opcode 0x17, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x11, AckReq 1, PSN 103
			"00004321",                                          // IETH: R_Key 0x00004321
			"10111213",                                          // payload, 4 bytes
			"dc107213",                                          // ICRC (CRC-32 0x137210DC, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x17, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 103},
			&IETH{RKey: 0x00004321},
			payloadOf("10111213"),
			&ICRC{Value: 0x137210DC},
		},
	},
	{
		name:  "RC SEND_LAST_WITH_INVALIDATE",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 003c 1234 4000 40 11 1479 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 60, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0028 2556",                               // UDP: 49152 -> 4791, length 40, checksum
			"16 30 ffff 00 000011 80 000068",                    // BTH: opcode 0x16, SE 0 M 0 PadCnt 3 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x11, AckReq 1, PSN 104
			"00004322",                                          // IETH: R_Key 0x00004322
			"101112131415161718",                                // payload, 9 bytes
			"00 00 00",                                          // pad, 3 bytes
			"4baf69c2",                                          // ICRC (CRC-32 0xC269AF4B, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x16, PadCnt: 3, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 104},
			&IETH{RKey: 0x00004322},
			payloadOf("101112131415161718"),
			&ICRC{Value: 0xC269AF4B},
		},
	},
	{
		name:  "RC FLUSH",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0040 1234 4000 40 11 1475 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 64, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 002c 97b1",                               // UDP: 49152 -> 4791, length 44, checksum
			"1c 00 ffff 00 000012 80 000009",                    // BTH: opcode 0x1C, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x12, AckReq 1, PSN 9
			"00000012",                                          // FETH: reserved, selectivity 1, placement type 2
			"00007f0000004000 00000777 00001000",                // RETH: VA 0x7F0000004000, R_Key 0x00000777, DMA length 4096
			"40e9cd9b",                                          // ICRC (CRC-32 0x9BCDE940, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x1C, PKey: 0xFFFF, DestQP: 0x12, AckReq: true, PSN: 9},
			&FETH{SelectivityLevel: 1, PlacementType: 2},
			&RETH{VA: 0x7F0000004000, RKey: 0x00000777, DMALength: 4096},
			&ICRC{Value: 0x9BCDE940},
		},
	},
	{
		name:  "RC ATOMIC_WRITE",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0044 1234 4000 40 11 1471 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 68, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0030 5eb8",                               // UDP: 49152 -> 4791, length 48, checksum
			"1d 00 ffff 00 000012 80 00000a",                    // BTH: opcode 0x1D, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x12, AckReq 1, PSN 10
			"00007f0000004008 00000777 00000008",                // RETH: VA 0x7F0000004008, R_Key 0x00000777, DMA length 8
			"0102030405060708",                                  // payload, 8 bytes
			"2f9516ce",                                          // ICRC (CRC-32 0xCE16952F, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x1D, PKey: 0xFFFF, DestQP: 0x12, AckReq: true, PSN: 10},
			&RETH{VA: 0x7F0000004008, RKey: 0x00000777, DMALength: 8},
			payloadOf("0102030405060708"),
			&ICRC{Value: 0xCE16952F},
		},
	},
	{
		name:  "UC SEND_ONLY over IPv6",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 86dd", // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x86DD
			"60212345 0020 11 40 fd000000000000000000000000000001 fd000000000000000000000000000002", // IPv6: traffic class 0x02, flow label 0x12345, payload length 32, UDP, hop limit 64, fd00::1 -> fd00::2
			"c000 12b7 0020 133a",            // UDP: 49152 -> 4791, length 32, checksum
			"24 30 ffff 00 0000d3 00 cf1710", // BTH: opcode 0x24, SE 0 M 0 PadCnt 3 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0xD3, AckReq 0, PSN 13571856
			"1011121314",                     // payload, 5 bytes
			"00 00 00",                       // pad, 3 bytes
			"1fb18d00",                       // ICRC (CRC-32 0x008DB11F, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x24, PadCnt: 3, PKey: 0xFFFF, DestQP: 0xD3, PSN: 13571856},
			payloadOf("1011121314"),
			&ICRC{Value: 0x008DB11F},
		},
	},
	{
		name:  "UC RDMA_WRITE_ONLY",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 004c 1234 4000 40 11 1469 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 76, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0038 48b0",                               // UDP: 49152 -> 4791, length 56, checksum
			"2a 00 ffff 00 0000d4 00 000001",                    // BTH: opcode 0x2A, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0xD4, AckReq 0, PSN 1
			"0000000000005000 00000099 00000010",                // RETH: VA 0x5000, R_Key 0x00000099, DMA length 16
			"101112131415161718191a1b1c1d1e1f",                  // payload, 16 bytes
			"2b0970cb",                                          // ICRC (CRC-32 0xCB70092B, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x2A, PKey: 0xFFFF, DestQP: 0xD4, PSN: 1},
			&RETH{VA: 0x5000, RKey: 0x00000099, DMALength: 16},
			payloadOf("101112131415161718191a1b1c1d1e1f"),
			&ICRC{Value: 0xCB70092B},
		},
	},
	{
		name:  "RD SEND_ONLY, 4-byte payload (too short for DC)",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 003c 1234 4000 40 11 1479 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 60, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0028 f5de",                               // UDP: 49152 -> 4791, length 40, checksum
			"44 00 ffff 00 000020 80 000001",                    // BTH: opcode 0x44, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x20, AckReq 1, PSN 1
			"00 0abcde",                                         // RDETH: reserved, EE context 0xABCDE
			"11111111 00 000021",                                // DETH: Q_Key 0x11111111, reserved, SrcQP 0x21
			"10111213",                                          // payload, 4 bytes
			"1f033e90",                                          // ICRC (CRC-32 0x903E031F, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x44, PKey: 0xFFFF, DestQP: 0x20, AckReq: true, PSN: 1},
			&RDETH{EECnxt: 0xABCDE},
			&DETH{QKey: 0x11111111, SrcQP: 0x21},
			payloadOf("10111213"),
			&ICRC{Value: 0x903E031F},
		},
	},
	{
		name:  "RD RDMA_WRITE_ONLY_WITH_IMMEDIATE (four extension headers)",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0050 1234 4000 40 11 1465 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 80, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 003c 6b3d",                               // UDP: 49152 -> 4791, length 60, checksum
			"4b 10 ffff 00 000020 80 000002",                    // BTH: opcode 0x4B, SE 0 M 0 PadCnt 1 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x20, AckReq 1, PSN 2
			"00 0abcde",                                         // RDETH: reserved, EE context 0xABCDE
			"11111111 00 000021",                                // DETH: Q_Key 0x11111111, reserved, SrcQP 0x21
			"0000000000006000 00000055 00000003",                // RETH: VA 0x6000, R_Key 0x00000055, DMA length 3
			"00000007",                                          // ImmDt: 0x00000007
			"aabbcc",                                            // payload, 3 bytes
			"00",                                                // pad, 1 bytes
			"c6b5654e",                                          // ICRC (CRC-32 0x4E65B5C6, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x4B, PadCnt: 1, PKey: 0xFFFF, DestQP: 0x20, AckReq: true, PSN: 2},
			&RDETH{EECnxt: 0xABCDE},
			&DETH{QKey: 0x11111111, SrcQP: 0x21},
			&RETH{VA: 0x6000, RKey: 0x00000055, DMALength: 3},
			&ImmDt{Immediate: 0x00000007},
			payloadOf("aabbcc"),
			&ICRC{Value: 0x4E65B5C6},
		},
	},
	{
		name:  "RD ACKNOWLEDGE",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0034 1234 4000 40 11 1481 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 52, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0020 f605",                               // UDP: 49152 -> 4791, length 32, checksum
			"51 00 ffff 00 000021 00 000002",                    // BTH: opcode 0x51, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x21, AckReq 0, PSN 2
			"00 0abcde",                                         // RDETH: reserved, EE context 0xABCDE
			"1f 000002",                                         // AETH: syndrome 0x1F, MSN 2
			"05d1f00e",                                          // ICRC (CRC-32 0x0EF0D105, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x51, PKey: 0xFFFF, DestQP: 0x21, PSN: 2},
			&RDETH{EECnxt: 0xABCDE},
			&AETH{Syndrome: 0x1F, MSN: 2},
			&ICRC{Value: 0x0EF0D105},
		},
	},
	{
		name:  "DC RDMA_WRITE_ONLY, 8 bytes (real DC header bytes)",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0058 1234 4000 40 11 145d 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 88, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0044 4b2e",                               // UDP: 49152 -> 4791, length 68, checksum
			"4a 00 ffff 00 61e24f 80 0003a5",                    // BTH: opcode 0x4A, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x61E24F, AckReq 1, PSN 933
			"11 009036",                                         // DC RDETH place: 11, 0x9036
			"00715001 00 61e24e",                                // DC DETH place: 0x00715001, 00, 0x61E24E
			"0000c0dc 00000000",                                 // DCETH: two words of unknown meaning
			"00007fb235d09a00 00053829 00000008",                // RETH: VA 0x7FB235D09A00, R_Key 0x00053829, DMA length 8
			"0102030405060708",                                  // payload, 8 bytes
			"e7c6085d",                                          // ICRC (CRC-32 0x5D08C6E7, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x4A, PKey: 0xFFFF, DestQP: 0x61E24F, AckReq: true, PSN: 933, DC: true},
			&RDETH{Reserved: 0x11, EECnxt: 0x9036},
			&DETH{QKey: 0x00715001, Reserved: 0x00, SrcQP: 0x61E24E},
			&DCETH{Word0: 0xC0DC, Word1: 0x0},
			&RETH{VA: 0x7FB235D09A00, RKey: 0x00053829, DMALength: 8},
			payloadOf("0102030405060708"),
			&ICRC{Value: 0x5D08C6E7},
		},
	},
	{
		name:  "DC ACKNOWLEDGE (real DC header bytes)",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0044 1234 4000 40 11 1471 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 68, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0030 7133",                               // UDP: 49152 -> 4791, length 48, checksum
			"51 00 ffff 00 61e24e 00 0003a5",                    // BTH: opcode 0x51, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x61E24E, AckReq 0, PSN 933
			"10 807ff4",                                         // DC RDETH place: 10, 0x807FF4
			"00715001 00 61e24f",                                // DC DETH place: 0x00715001, 00, 0x61E24F
			"0000c0db 00000000",                                 // DCETH: two words of unknown meaning
			"1f 000000",                                         // AETH: syndrome 0x1F, MSN 0
			"8c6c406b",                                          // ICRC (CRC-32 0x6B406C8C, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x51, PKey: 0xFFFF, DestQP: 0x61E24E, PSN: 933, DC: true},
			&RDETH{Reserved: 0x10, EECnxt: 0x807FF4},
			&DETH{QKey: 0x00715001, Reserved: 0x00, SrcQP: 0x61E24F},
			&DCETH{Word0: 0xC0DB, Word1: 0x0},
			&AETH{Syndrome: 0x1F, MSN: 0},
			&ICRC{Value: 0x6B406C8C},
		},
	},
	{
		name:  "DC RDMA_READ_REQUEST",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0050 1234 4000 40 11 1465 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 80, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 003c c8b2",                               // UDP: 49152 -> 4791, length 60, checksum
			"4c 00 ffff 00 61e24f 80 0003a6",                    // BTH: opcode 0x4C, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x61E24F, AckReq 1, PSN 934
			"11 009036",                                         // DC RDETH place: 11, 0x9036
			"00715001 00 61e24e",                                // DC DETH place: 0x00715001, 00, 0x61E24E
			"0000c0dc 00000000",                                 // DCETH: two words of unknown meaning
			"00007fb235d09a00 00053829 00001000",                // RETH: VA 0x7FB235D09A00, R_Key 0x00053829, DMA length 4096
			"3b6c355e",                                          // ICRC (CRC-32 0x5E356C3B, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x4C, PKey: 0xFFFF, DestQP: 0x61E24F, AckReq: true, PSN: 934, DC: true},
			&RDETH{Reserved: 0x11, EECnxt: 0x9036},
			&DETH{QKey: 0x00715001, Reserved: 0x00, SrcQP: 0x61E24E},
			&DCETH{Word0: 0xC0DC, Word1: 0x0},
			&RETH{VA: 0x7FB235D09A00, RKey: 0x00053829, DMALength: 4096},
			&ICRC{Value: 0x5E356C3B},
		},
	},
	{
		name:  "DC RDMA_READ_RESPONSE_ONLY over RoCE v1",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 8915", // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x8915
			"60212345 0030 1b 40 fe800000000000000002c90300000001 fe800000000000000002c90300000002", // GRH: IPVer 6, TClass 0x02, flow label 0x12345, PayLen 48, NxtHdr 0x1B, HopLmt 64, SGID, DGID
			"50 20 ffff 00 61e24e 00 0003a6", // BTH: opcode 0x50, SE 0 M 0 PadCnt 2 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x61E24E, AckReq 0, PSN 934
			"10 807ff4",                      // DC RDETH place: 10, 0x807FF4
			"00715001 00 61e24f",             // DC DETH place: 0x00715001, 00, 0x61E24F
			"0000c0db 00000000",              // DCETH: two words of unknown meaning
			"1f 000001",                      // AETH: syndrome 0x1F, MSN 1
			"101112131415",                   // payload, 6 bytes
			"00 00",                          // pad, 2 bytes
			"0122556c",                       // ICRC (CRC-32 0x6C552201)
		},
		want: []gopacket.Layer{
			&GRH{IPVer: 6, TClass: 0x02, FlowLabel: 0x12345, PayLen: 48, NxtHdr: 0x1B, HopLmt: 64, SGID: gid("fe800000000000000002c90300000001"), DGID: gid("fe800000000000000002c90300000002")},
			&BTH{Opcode: 0x50, PadCnt: 2, PKey: 0xFFFF, DestQP: 0x61E24E, PSN: 934, DC: true},
			&RDETH{Reserved: 0x10, EECnxt: 0x807FF4},
			&DETH{QKey: 0x00715001, Reserved: 0x00, SrcQP: 0x61E24F},
			&DCETH{Word0: 0xC0DB, Word1: 0x0},
			&AETH{Syndrome: 0x1F, MSN: 1},
			payloadOf("101112131415"),
			&ICRC{Value: 0x6C552201},
		},
	},
	{
		name:  "UD SEND_ONLY",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0044 1234 4000 40 11 1471 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 68, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0030 c611",                               // UDP: 49152 -> 4791, length 48, checksum
			"64 00 ffff 00 000022 00 123456",                    // BTH: opcode 0x64, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x22, AckReq 0, PSN 1193046
			"11111111 00 000023",                                // DETH: Q_Key 0x11111111, reserved, SrcQP 0x23
			"101112131415161718191a1b1c1d1e1f",                  // payload, 16 bytes
			"78a06691",                                          // ICRC (CRC-32 0x9166A078, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x64, PKey: 0xFFFF, DestQP: 0x22, PSN: 1193046},
			&DETH{QKey: 0x11111111, SrcQP: 0x23},
			payloadOf("101112131415161718191a1b1c1d1e1f"),
			&ICRC{Value: 0x9166A078},
		},
	},
	{
		name:  "UD SEND_ONLY_WITH_IMMEDIATE",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0044 1234 4000 40 11 1471 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 68, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0030 284d",                               // UDP: 49152 -> 4791, length 48, checksum
			"65 20 ffff 00 000022 00 123457",                    // BTH: opcode 0x65, SE 0 M 0 PadCnt 2 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x22, AckReq 0, PSN 1193047
			"11111111 00 000023",                                // DETH: Q_Key 0x11111111, reserved, SrcQP 0x23
			"cafef00d",                                          // ImmDt: 0xCAFEF00D
			"10111213141516171819",                              // payload, 10 bytes
			"00 00",                                             // pad, 2 bytes
			"6b6da9b2",                                          // ICRC (CRC-32 0xB2A96D6B, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x65, PadCnt: 2, PKey: 0xFFFF, DestQP: 0x22, PSN: 1193047},
			&DETH{QKey: 0x11111111, SrcQP: 0x23},
			&ImmDt{Immediate: 0xCAFEF00D},
			payloadOf("10111213141516171819"),
			&ICRC{Value: 0xB2A96D6B},
		},
	},
	{
		name:  "XRC SEND_ONLY",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 003c 1234 4000 40 11 1479 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 60, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 0028 eac3",                               // UDP: 49152 -> 4791, length 40, checksum
			"a4 00 ffff 00 000030 80 00000b",                    // BTH: opcode 0xA4, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x30, AckReq 1, PSN 11
			"00 000031",                                         // XRCETH: reserved, XRC SRQ 0x31
			"101112131415161718191a1b",                          // payload, 12 bytes
			"444d46e1",                                          // ICRC (CRC-32 0xE1464D44, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0xA4, PKey: 0xFFFF, DestQP: 0x30, AckReq: true, PSN: 11},
			&XRCETH{XRCSRQ: 0x31},
			payloadOf("101112131415161718191a1b"),
			&ICRC{Value: 0xE1464D44},
		},
	},
	{
		name:  "XRC RDMA_READ_REQUEST",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0040 1234 4000 40 11 1475 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 64, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 002c 25a6",                               // UDP: 49152 -> 4791, length 44, checksum
			"ac 00 ffff 00 000030 80 00000c",                    // BTH: opcode 0xAC, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x30, AckReq 1, PSN 12
			"00 000031",                                         // XRCETH: reserved, XRC SRQ 0x31
			"0000000000007000 00000066 00000040",                // RETH: VA 0x7000, R_Key 0x00000066, DMA length 64
			"29f32c2e",                                          // ICRC (CRC-32 0x2E2CF329, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0xAC, PKey: 0xFFFF, DestQP: 0x30, AckReq: true, PSN: 12},
			&XRCETH{XRCSRQ: 0x31},
			&RETH{VA: 0x7000, RKey: 0x00000066, DMALength: 64},
			&ICRC{Value: 0x2E2CF329},
		},
	},
	{
		name:  "XRC ACKNOWLEDGE (no XRCETH)",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 0030 1234 4000 40 11 1485 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 48, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c000 12b7 001c 2fc9",                               // UDP: 49152 -> 4791, length 28, checksum
			"b1 00 ffff 00 000032 00 00000c",                    // BTH: opcode 0xB1, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x32, AckReq 0, PSN 12
			"1f 000001",                                         // AETH: syndrome 0x1F, MSN 1
			"973181c1",                                          // ICRC (CRC-32 0xC1813197, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0xB1, PKey: 0xFFFF, DestQP: 0x32, PSN: 12},
			&AETH{Syndrome: 0x1F, MSN: 1},
			&ICRC{Value: 0xC1813197},
		},
	},
	{
		name:  "RoCE v2 CNP 0x81, ECN CE, UDP source port 0",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 c3 003c 1234 4000 40 11 13b8 0a000001 0a000002", // IPv4: IHL 5, TOS 0xC3, total length 60, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"0000 12b7 0028 21db",                               // UDP: 0 -> 4791, length 40, checksum
			"81 00 ffff 40 000118 00 000000",                    // BTH: opcode 0x81, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 1, DestQP 0x118, AckReq 0, PSN 0
			"00000000000000000000000000000000",                  // CNP: 16 reserved bytes
			"eb6a0986",                                          // ICRC (CRC-32 0x86096AEB, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x81, PKey: 0xFFFF, BECN: true, DestQP: 0x118, PSN: 0},
			&CNP{},
			&ICRC{Value: 0x86096AEB},
		},
	},
	{
		name:  "CNP 0x80 over RoCE v2",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 0800",                    // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
			"45 02 003c 1234 4000 40 11 1479 0a000001 0a000002", // IPv4: IHL 5, TOS 0x02, total length 60, ID 0x1234, DF, TTL 64, UDP, checksum, 10.0.0.1 -> 10.0.0.2
			"c001 12b7 0028 25a0",                               // UDP: 49153 -> 4791, length 40, checksum
			"80 00 ffff 40 000118 00 000000",                    // BTH: opcode 0x80, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 1, DestQP 0x118, AckReq 0, PSN 0
			"00000000000000000000000000000000",                  // CNP: 16 reserved bytes
			"280e0a1c",                                          // ICRC (CRC-32 0x1C0A0E28, least-significant byte first)
		},
		want: []gopacket.Layer{
			&BTH{Opcode: 0x80, PKey: 0xFFFF, BECN: true, DestQP: 0x118, PSN: 0},
			&CNP{},
			&ICRC{Value: 0x1C0A0E28},
		},
	},
	{
		name:  "RoCE v1 (GRH) RC SEND_ONLY",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 8915", // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x8915
			"60212345 001c 1b 40 fe800000000000000002c90300000001 fe800000000000000002c90300000002", // GRH: IPVer 6, TClass 0x02, flow label 0x12345, PayLen 28, NxtHdr 0x1B, HopLmt 64, SGID, DGID
			"04 10 ffff 00 000040 80 00004d", // BTH: opcode 0x04, SE 0 M 0 PadCnt 1 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x40, AckReq 1, PSN 77
			"101112131415161718191a",         // payload, 11 bytes
			"00",                             // pad, 1 bytes
			"45bc46a0",                       // ICRC (CRC-32 0xA046BC45)
		},
		want: []gopacket.Layer{
			&GRH{IPVer: 6, TClass: 0x02, FlowLabel: 0x12345, PayLen: 28, NxtHdr: 0x1B, HopLmt: 64, SGID: gid("fe800000000000000002c90300000001"), DGID: gid("fe800000000000000002c90300000002")},
			&BTH{Opcode: 0x04, PadCnt: 1, PKey: 0xFFFF, DestQP: 0x40, AckReq: true, PSN: 77},
			payloadOf("101112131415161718191a"),
			&ICRC{Value: 0xA046BC45},
		},
	},
	{
		name:  "RoCE v1 (GRH) RC ACKNOWLEDGE",
		first: gplayers.LayerTypeEthernet,
		hex: []string{
			"020000000002 020000000001 8915", // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x8915
			"60212345 0014 1b 40 fe800000000000000002c90300000001 fe800000000000000002c90300000002", // GRH: IPVer 6, TClass 0x02, flow label 0x12345, PayLen 20, NxtHdr 0x1B, HopLmt 64, SGID, DGID
			"11 00 ffff 00 000041 00 00004d", // BTH: opcode 0x11, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x41, AckReq 0, PSN 77
			"1f 000001",                      // AETH: syndrome 0x1F, MSN 1
			"fa8d2153",                       // ICRC (CRC-32 0x53218DFA)
		},
		want: []gopacket.Layer{
			&GRH{IPVer: 6, TClass: 0x02, FlowLabel: 0x12345, PayLen: 20, NxtHdr: 0x1B, HopLmt: 64, SGID: gid("fe800000000000000002c90300000001"), DGID: gid("fe800000000000000002c90300000002")},
			&BTH{Opcode: 0x11, PKey: 0xFFFF, DestQP: 0x41, PSN: 77},
			&AETH{Syndrome: 0x1F, MSN: 1},
			&ICRC{Value: 0x53218DFA},
		},
	},
	{
		name:  "native IB, LRH without GRH, RC SEND_ONLY",
		first: LayerTypeLRH,
		hex: []string{
			"20 32 0002 0008 0001",           // LRH: VL 2 LVer 0, SL 3 LNH 2, DLID 0x0002, PktLen 8 words, SLID 0x0001
			"04 10 ffff 00 000050 80 000005", // BTH: opcode 0x04, SE 0 M 0 PadCnt 1 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x50, AckReq 1, PSN 5
			"10111213141516",                 // payload, 7 bytes
			"00",                             // pad, 1 bytes
			"630911dd",                       // ICRC (CRC-32 0xDD110963)
			"427e",                           // VCRC (CRC-16 0x7E42, least-significant byte first)
		},
		want: []gopacket.Layer{
			&LRH{VL: 2, LVer: 0, SL: 3, LNH: 2, DLID: 0x0002, PktLen: 8, SLID: 0x0001},
			&BTH{Opcode: 0x04, PadCnt: 1, PKey: 0xFFFF, DestQP: 0x50, AckReq: true, PSN: 5},
			payloadOf("10111213141516"),
			&ICRC{Value: 0xDD110963},
			&VCRC{Value: 0x7E42},
		},
	},
	{
		name:  "native IB, LRH without GRH, CNP 0x80",
		first: LayerTypeLRH,
		hex: []string{
			"00 02 0002 000a 0001",             // LRH: VL 0 LVer 0, SL 0 LNH 2, DLID 0x0002, PktLen 10 words, SLID 0x0001
			"80 00 ffff 40 000050 00 000000",   // BTH: opcode 0x80, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 1, DestQP 0x50, AckReq 0, PSN 0
			"00000000000000000000000000000000", // CNP: 16 reserved bytes
			"033052a8",                         // ICRC (CRC-32 0xA8523003)
			"0d66",                             // VCRC (CRC-16 0x660D, least-significant byte first)
		},
		want: []gopacket.Layer{
			&LRH{VL: 0, LVer: 0, SL: 0, LNH: 2, DLID: 0x0002, PktLen: 10, SLID: 0x0001},
			&BTH{Opcode: 0x80, PKey: 0xFFFF, BECN: true, DestQP: 0x50, PSN: 0},
			&CNP{},
			&ICRC{Value: 0xA8523003},
			&VCRC{Value: 0x660D},
		},
	},
	{
		name:  "native IB, LRH + GRH, UD SEND_ONLY",
		first: LayerTypeLRH,
		hex: []string{
			"00 03 0002 0016 0001", // LRH: VL 0 LVer 0, SL 0 LNH 3, DLID 0x0002, PktLen 22 words, SLID 0x0001
			"60000000 0028 1b 01 fe800000000000000002c90300000001 fe800000000000000002c90300000002", // GRH: IPVer 6, TClass 0x00, flow label 0x0, PayLen 40, NxtHdr 0x1B, HopLmt 1, SGID, DGID
			"64 30 ffff 00 000051 00 000006", // BTH: opcode 0x64, SE 0 M 0 PadCnt 3 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x51, AckReq 0, PSN 6
			"22222222 00 000052",             // DETH: Q_Key 0x22222222, reserved, SrcQP 0x52
			"101112131415161718191a1b1c",     // payload, 13 bytes
			"00 00 00",                       // pad, 3 bytes
			"01c3468c",                       // ICRC (CRC-32 0x8C46C301)
			"775e",                           // VCRC (CRC-16 0x5E77, least-significant byte first)
		},
		want: []gopacket.Layer{
			&LRH{VL: 0, LVer: 0, SL: 0, LNH: 3, DLID: 0x0002, PktLen: 22, SLID: 0x0001},
			&GRH{IPVer: 6, TClass: 0x00, FlowLabel: 0x0, PayLen: 40, NxtHdr: 0x1B, HopLmt: 1, SGID: gid("fe800000000000000002c90300000001"), DGID: gid("fe800000000000000002c90300000002")},
			&BTH{Opcode: 0x64, PadCnt: 3, PKey: 0xFFFF, DestQP: 0x51, PSN: 6},
			&DETH{QKey: 0x22222222, SrcQP: 0x52},
			payloadOf("101112131415161718191a1b1c"),
			&ICRC{Value: 0x8C46C301},
			&VCRC{Value: 0x5E77},
		},
	},
	{
		name:  "native IB, LRH without GRH, DC SEND_ONLY",
		first: LayerTypeLRH,
		hex: []string{
			"00 02 0002 000e 0001",           // LRH: VL 0 LVer 0, SL 0 LNH 2, DLID 0x0002, PktLen 14 words, SLID 0x0001
			"44 30 ffff 00 000054 80 000007", // BTH: opcode 0x44, SE 0 M 0 PadCnt 3 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x54, AckReq 1, PSN 7
			"11 009036",                      // DC RDETH place: 11, 0x9036
			"00715001 00 61e24e",             // DC DETH place: 0x00715001, 00, 0x61E24E
			"0000c0dc 00000000",              // DCETH: two words of unknown meaning
			"101112131415161718",             // payload, 9 bytes
			"00 00 00",                       // pad, 3 bytes
			"4993f552",                       // ICRC (CRC-32 0x52F59349)
			"53ef",                           // VCRC (CRC-16 0xEF53, least-significant byte first)
		},
		want: []gopacket.Layer{
			&LRH{VL: 0, LVer: 0, SL: 0, LNH: 2, DLID: 0x0002, PktLen: 14, SLID: 0x0001},
			&BTH{Opcode: 0x44, PadCnt: 3, PKey: 0xFFFF, DestQP: 0x54, AckReq: true, PSN: 7, DC: true},
			&RDETH{Reserved: 0x11, EECnxt: 0x9036},
			&DETH{QKey: 0x00715001, Reserved: 0x00, SrcQP: 0x61E24E},
			&DCETH{Word0: 0xC0DC, Word1: 0x0},
			payloadOf("101112131415161718"),
			&ICRC{Value: 0x52F59349},
			&VCRC{Value: 0xEF53},
		},
	},
	{
		name:  "ERF record (type 21), LRH, RC ACKNOWLEDGE",
		first: LayerTypeERF,
		hex: []string{
			"0000000000105e5f 15 04 002e 0000 001e", // ERF: timestamp (little-endian), type 21 (InfiniBand), flags 0x04, rlen 46, loss 0, wlen 30
			"00 02 0002 0007 0001",                  // LRH: VL 0 LVer 0, SL 0 LNH 2, DLID 0x0002, PktLen 7 words, SLID 0x0001
			"11 00 ffff 00 000053 00 000006",        // BTH: opcode 0x11, SE 0 M 0 PadCnt 0 TVer 0, P_Key 0xFFFF, FECN 0 BECN 0, DestQP 0x53, AckReq 0, PSN 6
			"1f 000006",                             // AETH: syndrome 0x1F, MSN 6
			"560665d4",                              // ICRC (CRC-32 0xD4650656)
			"fe8b",                                  // VCRC (CRC-16 0x8BFE, least-significant byte first)
		},
		want: []gopacket.Layer{
			&ERF{Timestamp: 0x5F5E100000000000, Type: 21, Flags: 0x04, RLen: 46, WLen: 30},
			&LRH{VL: 0, LVer: 0, SL: 0, LNH: 2, DLID: 0x0002, PktLen: 7, SLID: 0x0001},
			&BTH{Opcode: 0x11, PKey: 0xFFFF, DestQP: 0x53, PSN: 6},
			&AETH{Syndrome: 0x1F, MSN: 6},
			&ICRC{Value: 0xD4650656},
			&VCRC{Value: 0x8BFE},
		},
	},
}
