package analyze

// Transport names of flows that carried no packet of a known transport.
const (
	// transportCNP names a flow of only CNPs whose QP's transport is not
	// known from elsewhere.
	transportCNP = "CNP"
	// transportUnknown names a flow of only opcodes outside the IBTA table
	// (reserved ones such as 0x1F): nothing says what it is.
	transportUnknown = "unknown"
)

// untypedTransports names the transport of every flow that carried no
// packet of a known transport, keyed by flow index. A flow of CNPs takes
// that of its QP's connection, else that of the datagram flow the QP sends
// from (its requests carry the QP as DETH SrcQP), else "CNP"; a flow of
// only unknown opcodes is "unknown". The datagram senders are indexed once,
// so naming costs O(flows) however many flows need it.
func (a *Analyzer) untypedTransports() map[int32]string {
	var out map[int32]string
	var senders map[flowKey]string // (src, dst, tunnel, DETH SrcQP) → transport, first flow wins
	for _, f := range a.flowList {
		if f.hasTransport {
			continue
		}
		if out == nil {
			out = map[int32]string{}
		}
		switch {
		case f.cold == nil || f.cold.congestion.CNPs == 0:
			out[f.index] = transportUnknown
		case f.conn >= 0 && a.conns.List[f.conn].Transport != nil:
			out[f.index] = *a.conns.List[f.conn].Transport
		default:
			if senders == nil {
				senders = a.datagramSenders()
			}
			t, ok := senders[flowKey{src: f.dir.dst, dst: f.dir.src, tun: f.dir.tun, qp: f.qp}]
			if !ok {
				t = transportCNP
			}
			out[f.index] = t
		}
	}
	return out
}

// datagramSenders indexes the flows of a known transport that follow a
// DETH source QP by (source, destination, source QP).
func (a *Analyzer) datagramSenders() map[flowKey]string {
	m := map[flowKey]string{}
	for _, g := range a.flowList {
		if !g.hasDatagramSrc || !g.hasTransport {
			continue
		}
		k := flowKey{src: g.dir.src, dst: g.dir.dst, tun: g.dir.tun, qp: g.datagramSrc}
		if _, ok := m[k]; !ok {
			m[k] = g.transport.String()
		}
	}
	return m
}

// transportRank orders what a flow's transport says, for Merge: a real
// transport beats "CNP", which beats "unknown".
func transportRank(t string) int {
	switch t {
	case transportUnknown:
		return 0
	case transportCNP:
		return 1
	}
	return 2
}
