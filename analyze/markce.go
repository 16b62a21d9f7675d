package analyze

import (
	"fmt"
	"time"

	"github.com/roce-dissect/roce-dissect/layers"
)

// ceDetail is the detail of an ecn_ce finding.
func ceDetail(bth *layers.BTH) string {
	return fmt.Sprintf("ECN CE mark on %s PSN %d", bth.OpcodeName(), bth.PSN)
}

// MarkCE accounts an ECN CE mark the network added to a packet fed
// before unmarked. p is a later sighting of that packet, CE-marked,
// decoded by another Analyzer: a capture point downstream, which package
// points matched with the sighting fed (points.Matcher.AddedCE); at is
// its time on this Analyzer's clock, file the capture it is frame
// p.Frame of. The packet's flow counts the mark (Congestion.ECNCE) with
// an ecn_ce finding at that file and frame, as a marked packet fed
// would, and its NIC figures time the next CNP from it. A packet of no
// flow this Analyzer follows changes nothing.
func (a *Analyzer) MarkCE(p *Packet, file string, at time.Time) {
	if p == nil || p.BTH == nil || p.Err != nil || p.ECN != 3 {
		return
	}
	i, ok := a.flowOf(flowKey{src: p.Src, dst: p.Dst, qp: p.BTH.DestQP})
	if !ok || a.flowList[i] == nil {
		return
	}
	f := a.flowList[i]
	f.rare().congestion.ECNCE++
	if fd := a.findingAt(p.Frame, at, KindECNCE, SeverityInfo, f); fd != nil {
		fd.File = file
		fd.Detail = ceDetail(p.BTH) + ", added by the network after the points that saw it unmarked"
	}
	if p.BTH.Opcode.IsRequest() && (f.transport == layers.TransportRC || f.transport == layers.TransportUC) {
		a.nic.CE(&f.nic, at.UnixNano())
	}
}
