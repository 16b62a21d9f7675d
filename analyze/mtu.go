package analyze

import (
	"fmt"

	"github.com/roce-dissect/roce-dissect/analyze/internal/conn"
	"github.com/roce-dissect/roce-dissect/layers"
)

// pmtuFor returns the path MTU known for a flow: its own inferred one,
// the negotiated one of its connection, or one inferred between the same
// two hosts; 0 when unknown.
func (a *Analyzer) pmtuFor(f *flowState) int {
	if f.inferredMTU > 0 {
		return int(f.inferredMTU)
	}
	if f.cold != nil && f.cold.readMTU > 0 {
		return int(f.cold.readMTU)
	}
	if f.conn >= 0 {
		if m := conn.PathMTU(a.conns.List[f.conn]); m > 0 {
			return m
		}
	}
	return a.hostMTU[f.dir.pair()]
}

// checkMTU infers the path MTU from FIRST/MIDDLE packets and compares
// payloads with the negotiated one.
func (a *Analyzer) checkMTU(f *flowState, p *Packet, payload int) {
	pos := p.BTH.Opcode.Position()
	if (pos == layers.PositionFirst || pos == layers.PositionMiddle) && payload > 0 {
		if f.inferredMTU == 0 {
			f.inferredMTU = int32(payload)
			a.hostMTU[f.dir.pair()] = payload
		} else if payload != int(f.inferredMTU) {
			if fd := a.finding(p, KindMTUMismatch, SeverityWarning, f); fd != nil {
				fd.Detail = fmt.Sprintf("%s carries %d bytes, earlier FIRST/MIDDLE packets %d", p.BTH.OpcodeName(), payload, f.inferredMTU)
			}
		}
	}
	if f.conn < 0 {
		return
	}
	neg := conn.PathMTU(a.conns.List[f.conn])
	if neg <= 0 {
		return
	}
	if payload > neg {
		f.rare().aboveMTU++
		if fd := a.finding(p, KindMTUAbove, SeverityError, f); fd != nil {
			fd.Detail = fmt.Sprintf("payload %d bytes exceeds the negotiated path MTU %d", payload, neg)
		}
	}
	if f.inferredMTU > 0 && int(f.inferredMTU) != neg && !f.mtuReported {
		f.mtuReported = true
		if fd := a.finding(p, KindMTUMismatch, SeverityWarning, f); fd != nil {
			fd.Detail = fmt.Sprintf("inferred path MTU %d differs from the negotiated %d", f.inferredMTU, neg)
		}
	}
}
