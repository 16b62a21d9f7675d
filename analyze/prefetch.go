package analyze

import (
	"encoding/binary"
	"net/netip"
	"unsafe"

	gplayers "github.com/gopacket/gopacket/layers"
)

// Prefetch reads into the CPU's caches the state of the flows of frames,
// the next frames to be fed (of link type lt), and changes no result:
// what Feed does with them is the same with or without it (it changes
// only what later Prefetches answer). A packet of
// one of many flows finds its flow's state (the flow, its direction, NIC
// state, connection, pending requests, RTT histogram, series, and the
// flow it answers) in main memory, about twenty cache misses one after
// the other; read for several frames at once, in stages (the index's
// slots, then the flows they name, then what the flows point to), the
// misses of the frames overlap. Frames whose flow has no state yet, or
// which are not plain RoCE v2 over Ethernet (peekKey), are passed over.
//
// It does nothing while the Analyzer holds fewer than prefetchFlows
// flows, whose state the caches hold well enough.
func (a *Analyzer) Prefetch(lt gplayers.LinkType, frames [][]byte) {
	if !a.Prefetches() {
		return
	}
	var fs [prefetchMax]*flowState
	var sum uintptr
	flows := a.aheadFlows(lt, frames, &fs)
	if 4*len(flows) < min(len(frames), prefetchMax) {
		a.prefetchRest = prefetchMax - 1
	}
	for _, f := range flows {
		sum += touch(unsafe.Pointer(f), unsafe.Sizeof(*f))
	}
	for _, f := range flows { // what they point to, and the flows they answer
		sum += a.touchRefs(f)
		if f.peer >= 0 {
			sum += touch(unsafe.Pointer(a.flowList[f.peer]), unsafe.Sizeof(*f))
		}
	}
	for _, f := range flows {
		if f.peer >= 0 {
			sum += a.touchRefs(a.flowList[f.peer])
		}
	}
	a.prefetched += sum
}

// aheadFlows finds the flows of the first prefetchMax frames, in fs, and
// returns them: the index's slots of all the frames are read first, so
// that their cache misses overlap, then the flows they name. A frame
// whose key peekKey does not read, or whose flow is not in the index, has
// none; the flow of a slot whose hash matches is taken unchecked (Feed
// checks it), so that a hint costs no more reads.
func (a *Analyzer) aheadFlows(lt gplayers.LinkType, frames [][]byte, fs *[prefetchMax]*flowState) []*flowState {
	var hs [prefetchMax]uint32
	var sum int32
	n := 0
	mask := uint32(len(a.index.slots) - 1)
	for _, data := range frames[:min(len(frames), prefetchMax)] {
		k, ok := a.peekKey(lt, data)
		if !ok {
			continue
		}
		hs[n] = a.index.hash(&k.src, &k.dst, k.tun, k.qp)
		sum += a.index.slots[hs[n]&mask].idx
		n++
	}
	m := 0
	for _, h := range hs[:n] {
		for i := h & mask; a.index.slots[i].idx != 0; i = (i + 1) & mask {
			if s := a.index.slots[i]; s.hash == h {
				fs[m] = a.flowList[s.idx-1]
				m++
				break
			}
		}
	}
	a.prefetched += uintptr(sum)
	return fs[:m]
}

// Prefetches reports whether a Prefetch now would read ahead, so that a
// caller that gathers the frames ahead for it may skip that when it would
// not; a call that says no counts as a Prefetch. After a Prefetch that
// found the flows of fewer than a quarter of its frames (new flows, whose
// state does not exist yet: a capture of one-packet flows), the next
// prefetchMax-1 say no: one in 16 looks whether reading ahead pays again.
func (a *Analyzer) Prefetches() bool {
	if len(a.flowList) < prefetchFlows || len(a.index.slots) == 0 {
		return false
	}
	if a.prefetchRest > 0 {
		a.prefetchRest--
		return false
	}
	return true
}

// prefetchMax is the most frames Prefetch reads ahead for, and
// prefetchFlows the flows an Analyzer holds before it does: below, the
// caches hold the flows' state well enough that reading ahead costs more
// than it saves (BenchmarkAnalyzeFlowLocality compares capture order
// with and without it).
const (
	prefetchMax   = 16
	prefetchFlows = 4096
)

// touchRefs reads the first cache line of what f points to that a packet
// reads: its direction, NIC state, connection, the newest of its pending
// requests, its RTT histogram, series and head log.
func (a *Analyzer) touchRefs(f *flowState) uintptr {
	sum := uintptr(f.dir.src.LID)
	if p, size := f.nic.Mem(); p != nil {
		sum += touch(p, size)
	}
	if f.conn >= 0 && int(f.conn) < len(a.conns.List) {
		sum += touch(unsafe.Pointer(a.conns.List[f.conn]), unsafe.Sizeof(Connection{}))
	}
	if b := f.pending.buf; len(b) > 0 {
		sum += uintptr(b[(int(f.pending.head)+len(b)-1)%len(b)].psn)
	}
	if f.rtt != nil {
		sum += uintptr(f.rtt.N())
	}
	if s := f.series; s != nil && len(s.samples) > 0 {
		sum += uintptr(s.samples[len(s.samples)-1].Packets)
	}
	if f.log != nil {
		sum += uintptr(f.log.firstFrame)
	}
	if f.resp != nil {
		sum += uintptr(f.resp.Packets)
	}
	return sum
}

// touch reads a byte of every cache line of the size bytes at p.
func touch(p unsafe.Pointer, size uintptr) uintptr {
	var sum uintptr
	for off := uintptr(0); off < size; off += 64 {
		sum += uintptr(*(*byte)(unsafe.Add(p, off)))
	}
	return sum
}

// peekKey reads the flow key of a frame of plain RoCE v2 (Ethernet, up
// to two VLAN tags, IPv4 without fragments or IPv6 without extension
// headers, UDP to a RoCE port, then a BTH) as decode would: ok is false
// for any other frame. It checks no more than it must to stay within the
// frame: a frame decode finds malformed may still have a key.
func (a *Analyzer) peekKey(lt gplayers.LinkType, d []byte) (k flowKey, ok bool) {
	if lt != gplayers.LinkTypeEthernet || len(d) < 14 {
		return k, false
	}
	et, d := binary.BigEndian.Uint16(d[12:14]), d[14:]
	for range 2 {
		if et != uint16(gplayers.EthernetTypeDot1Q) && et != uint16(gplayers.EthernetTypeQinQ) || len(d) < 4 {
			break
		}
		et, d = binary.BigEndian.Uint16(d[2:4]), d[4:]
	}
	var udp []byte
	switch gplayers.EthernetType(et) {
	case gplayers.EthernetTypeIPv4:
		if len(d) < 20 || d[0]>>4 != 4 || d[9] != uint8(gplayers.IPProtocolUDP) || binary.BigEndian.Uint16(d[6:8])&0x3fff != 0 {
			return k, false
		}
		ihl := int(d[0]&15) * 4
		if ihl < 20 || len(d) < ihl {
			return k, false
		}
		k.src.IP, k.dst.IP = netip.AddrFrom4([4]byte(d[12:16])), netip.AddrFrom4([4]byte(d[16:20]))
		udp = d[ihl:]
	case gplayers.EthernetTypeIPv6:
		if len(d) < 40 || d[0]>>4 != 6 || d[6] != uint8(gplayers.IPProtocolUDP) {
			return k, false
		}
		k.src.IP, k.dst.IP = netip.AddrFrom16([16]byte(d[8:24])), netip.AddrFrom16([16]byte(d[24:40]))
		udp = d[40:]
	default:
		return k, false
	}
	if len(udp) < 8+12 || !a.dec.IsRoCEPort(binary.BigEndian.Uint16(udp[2:4])) {
		return k, false
	}
	bth := udp[8:]
	k.qp = uint32(bth[5])<<16 | uint32(bth[6])<<8 | uint32(bth[7])
	return k, true
}
