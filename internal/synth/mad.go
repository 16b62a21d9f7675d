package synth

import (
	"encoding/binary"
)

// madLen is the size of a MAD. The CM messages are encoded here from the
// IBTA offsets (PROTOCOL.md) so that the generator does not depend on
// package cm's encoder.
const madLen = 256

// CM attribute IDs.
const (
	attrREQ  = 0x0010
	attrREP  = 0x0013
	attrRTU  = 0x0014
	attrDREQ = 0x0015
	attrDREP = 0x0016
)

// ServicePort is the TCP port the RDMA CM service IDs of the generated
// connections name (perftest's default).
const ServicePort = 18515

// encodeMAD writes the 256-byte CM MAD of kind k for connection c into b.
func encodeMAD(b *[madLen]byte, c *conn, k cmKind, encap Encap) {
	*b = [madLen]byte{}
	attr, tid := uint16(0), c.tid
	switch k {
	case cmREQ:
		attr = attrREQ
	case cmREP:
		attr = attrREP
	case cmRTU:
		attr = attrRTU
	case cmDREQ:
		attr, tid = attrDREQ, c.dtid
	case cmDREP:
		attr, tid = attrDREP, c.dtid
	}
	b[0] = 1    // BaseVersion
	b[1] = 0x07 // MgmtClass CM
	b[2] = 2    // ClassVersion
	b[3] = 0x03 // Method Send
	binary.BigEndian.PutUint64(b[8:16], tid)
	binary.BigEndian.PutUint16(b[16:18], attr)
	d := b[24:]
	mtu, _ := mtuEnum(c.mtu)
	switch k {
	case cmREQ:
		binary.BigEndian.PutUint32(d[0:], c.commA)
		binary.BigEndian.PutUint64(d[8:], 0x0000000001060000|ServicePort) // RDMA CM, TCP port space
		binary.BigEndian.PutUint64(d[16:], c.a.guid)
		put24(d[32:], c.qa)
		d[35] = 16            // ResponderResources
		d[39] = 16            // InitiatorDepth
		d[43] = 20 << 3       // RemoteCMResponseTimeout, TransportServiceType RC, no E2E flow control
		put24(d[44:], c.psnB) // where the passive side's (B's) requests start
		d[47] = 20<<3 | 7     // LocalCMResponseTimeout, RetryCount
		binary.BigEndian.PutUint16(d[48:], pkeyDefault)
		d[50] = mtu<<4 | 7 // PathMTU, RNRRetryCount
		d[51] = 15 << 4    // MaxCMRetries
		ll, rl := uint16(0xFFFF), uint16(0xFFFF)
		if encap.Native() {
			ll, rl = c.a.lid, c.b.lid
		}
		binary.BigEndian.PutUint16(d[52:], ll)
		binary.BigEndian.PutUint16(d[54:], rl)
		copy(d[56:72], c.a.cmGID(encap))
		copy(d[72:88], c.b.cmGID(encap))
		binary.BigEndian.PutUint32(d[88:], c.flowLabel<<12|3) // FlowLabel, PacketRate
		d[92] = 26 << 2                                       // TrafficClass (DSCP 26)
		d[93] = 64                                            // HopLimit
		d[94] = 0x08                                          // SL 0, SubnetLocal
		d[95] = 14 << 3                                       // LocalACKTimeout
		// RDMA CM private data: version 0.0, IP version, source port, addresses.
		pd := d[140:]
		if encap == EncapIPv6 {
			pd[1] = 6 << 4
			copy(pd[4:20], c.a.ip6)
			copy(pd[20:36], c.b.ip6)
		} else {
			pd[1] = 4 << 4
			copy(pd[16:20], c.a.ip4)
			copy(pd[32:36], c.b.ip4)
		}
		binary.BigEndian.PutUint16(pd[2:], 32768+uint16(c.idx))
	case cmREP:
		binary.BigEndian.PutUint32(d[0:], c.commB)
		binary.BigEndian.PutUint32(d[4:], c.commA)
		put24(d[12:], c.qb)
		put24(d[20:], c.psnA) // where the active side's (A's) requests start
		d[24] = 16
		d[25] = 16
		d[26] = 15 << 3 // TargetACKDelay
		d[27] = 7 << 5  // RNRRetryCount
		binary.BigEndian.PutUint64(d[28:], c.b.guid)
	case cmRTU:
		binary.BigEndian.PutUint32(d[0:], c.commA)
		binary.BigEndian.PutUint32(d[4:], c.commB)
	case cmDREQ:
		binary.BigEndian.PutUint32(d[0:], c.commA)
		binary.BigEndian.PutUint32(d[4:], c.commB)
		put24(d[8:], c.qb)
	case cmDREP:
		binary.BigEndian.PutUint32(d[0:], c.commB)
		binary.BigEndian.PutUint32(d[4:], c.commA)
	}
}

func put24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }
