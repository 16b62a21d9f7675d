package analyze

import (
	"fmt"

	"github.com/roce-dissect/roce-dissect/cm"
)

// MADs whole in their frame are 256 bytes. A packet to or from QP0/QP1
// whose frame the capture did not cut (neither a header-only capture nor a
// tool's cut) and whose MAD is shorter is malformed: counted in
// capture.malformed, listed, a malformed finding, and it makes no
// connection (a 28-byte REQ made one with QPN 0 and MTU 0). That holds for
// any length from 0 (a datagram to QP1 with no payload at all used to
// vanish as an ordinary packet) to 255. Only datagrams (with a DETH: UD
// SEND to or from QP0/QP1) carry MADs: the payload of another packet to
// QP1 (an RC SEND, which no stack sends there) is not decoded as a CM
// message and makes no connection.

// checkEmptyMAD flags a datagram to or from QP0/QP1 that carries no MAD at
// all in a frame the capture did not cut.
func (a *Analyzer) checkEmptyMAD() {
	p := &a.pkt
	bth := p.BTH
	if bth == nil || p.Err != nil || p.MAD != nil || bth.Truncated || p.DETH == nil || !bth.IsMAD() {
		return
	}
	p.Err = fmt.Errorf("%s to QP%d: %w: 0-byte MAD, need %d", bth.Opcode, bth.DestQP, ErrShortMAD, cm.MADLen)
}
