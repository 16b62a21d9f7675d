package conn

import "github.com/roce-dissect/roce-dissect/analyze/internal/decode"

// Endpoint is one side of a CM connection. The fields a header-only
// capture did not capture (the REQ or REP cut before them, or a REP not
// seen) are nil: null in JSON.
type Endpoint struct {
	// IP is the address the GID maps (IPv4-mapped GIDs give the IPv4
	// address), else the network address of that side as flows show it
	// (an IP address, a GID in IPv6 form, or "LID n" on native IB).
	IP  string  `json:"ip"`
	GID *string `json:"gid"`
	LID *uint16 `json:"lid"`
	// LIDPlaceholder is true for LID 0 or 0xFFFF, which carry no meaning
	// on RoCE.
	LIDPlaceholder *bool   `json:"lid_placeholder"`
	QPN            *uint32 `json:"qpn"`
	// StartingPSN is the StartingPSN field of this side's own CM message
	// (the REQ for the requester, the REP for the responder): the PSN at
	// which the requests it expects to receive start; null when not
	// captured.
	StartingPSN *uint32 `json:"starting_psn"`
	// SendPSN is the PSN at which this side's requests start: the other
	// side's StartingPSN field (the requester's is the REP's, the
	// responder's the REQ's); null when that field was not captured.
	SendPSN *uint32 `json:"send_psn"`
}

// ConnFrames holds the frame numbers of a connection's CM messages (0 when
// not seen).
type ConnFrames struct {
	REQ  uint64 `json:"req,omitempty"`
	REP  uint64 `json:"rep,omitempty"`
	RTU  uint64 `json:"rtu,omitempty"`
	REJ  uint64 `json:"rej,omitempty"`
	DREQ uint64 `json:"dreq,omitempty"`
	DREP uint64 `json:"drep,omitempty"`
	// Files names the file of each frame above when the capture is
	// several files read as one (Pieces); the frames are then numbered
	// in their files. Nil (absent) for one file.
	Files *ConnFrameFiles `json:"files,omitempty"`
}

// ConnFrameFiles names the file of each of a connection's CM message
// frames (ConnFrames.Files).
type ConnFrameFiles struct {
	REQ  string `json:"req,omitempty"`
	REP  string `json:"rep,omitempty"`
	RTU  string `json:"rtu,omitempty"`
	REJ  string `json:"rej,omitempty"`
	DREQ string `json:"dreq,omitempty"`
	DREP string `json:"drep,omitempty"`
}

// Connection is a CM handshake: REQ, then REP/REJ, RTU, DREQ, DREP; or an
// RC QP pair the packets showed without one (StateInferred).
type Connection struct {
	ID        int      `json:"id"`
	Requester Endpoint `json:"requester"`
	Responder Endpoint `json:"responder"`
	// ServiceID, Transport and PathMTU come from the REQ: nil (null) when
	// the capture cut the REQ before them.
	ServiceID *string `json:"service_id"`
	// RDMACMPortSpace and RDMACMPort decode an RDMA-CM service ID.
	RDMACMPortSpace string  `json:"rdma_cm_port_space,omitempty"`
	RDMACMPort      uint16  `json:"rdma_cm_port,omitempty"`
	Transport       *string `json:"transport"`
	// PathMTU is the negotiated path MTU in bytes (from the REQ).
	PathMTU *int `json:"path_mtu"`
	// State is requested, rejected, established or disconnected, or
	// StateInferred for an RC pair no CM handshake set up.
	State        string     `json:"state"`
	RejectReason string     `json:"reject_reason,omitempty"`
	Frames       ConnFrames `json:"frames"`
	LocalCommID  uint32     `json:"local_comm_id"`
	RemoteCommID uint32     `json:"remote_comm_id"`
	// Truncated is true when the capture cut the REQ or REP inside the
	// fields the report uses: those not captured are null.
	Truncated bool `json:"truncated,omitempty"`
	// CutMessages names the messages cut inside those fields ("REQ",
	// "REP").
	CutMessages []string `json:"cut_messages,omitempty"`
	// Tunnel is the tunnel the REQ arrived in that is part of the key of
	// the connection's flows (Flow.Tunnel); nil (absent) for none: two
	// tenants' connections of the same addresses and CommIDs are two.
	Tunnel *decode.FlowTunnel `json:"tunnel,omitempty"`

	ackTimeout      uint8 // the REQ's PrimaryLocalACKTimeout, for NIC timing
	ackTimeoutKnown bool
	// flow is an inferred connection's request flow, by its index in
	// the Analyzer's flows (the combiner orders them by it).
	flow int32
}

// Connection states.
const (
	StateRequested    = "requested"
	StateRejected     = "rejected"
	StateEstablished  = "established"
	StateDisconnected = "disconnected"
	// StateInferred is the State of a connection no CM handshake set up,
	// whose two flows the packets paired: an RC QP's requests one way and
	// the ACKs and responses that answered them (by PSN) the other.
	// NCCL, perftest and UCCL exchange their QPNs out of band and never
	// use CM.
	StateInferred = "inferred"
)

// ACKTimeout returns the PrimaryLocalACKTimeout of c's REQ, and whether
// it was captured (for NIC timing). A function, not a method: a method
// would be part of the public Connection.
func ACKTimeout(c *Connection) (uint8, bool) { return c.ackTimeout, c.ackTimeoutKnown }

// Flow is an inferred connection's request flow, by its index in the
// flows of the Analyzer that inferred it.
func Flow(c *Connection) int32 { return c.flow }

// SetFlow sets the request flow Flow returns.
func SetFlow(c *Connection, i int32) { c.flow = i }

// PathMTU is the negotiated path MTU of c in bytes, 0 when not captured.
func PathMTU(c *Connection) int {
	if c.PathMTU == nil {
		return 0
	}
	return *c.PathMTU
}

// Merge merges into a the same connection as another part of the
// capture saw it (b): the responder and its CommID when a has not seen
// the REP, b's state when it got past requested, the frames a has not
// seen.
func Merge(a, b *Connection) {
	if a.Responder.QPN == nil {
		a.Responder = b.Responder
		a.RemoteCommID = b.RemoteCommID
	}
	if b.State != StateRequested {
		a.State = b.State
		if b.RejectReason != "" {
			a.RejectReason = b.RejectReason
		}
	}
	fr := &a.Frames
	if fr.REP == 0 {
		fr.REP = b.Frames.REP
	}
	if fr.RTU == 0 {
		fr.RTU = b.Frames.RTU
	}
	if fr.REJ == 0 {
		fr.REJ = b.Frames.REJ
	}
	if fr.DREQ == 0 {
		fr.DREQ = b.Frames.DREQ
	}
	if fr.DREP == 0 {
		fr.DREP = b.Frames.DREP
	}
	a.setSendPSNs()
}

// apply records on a connection a CM message that follows its REQ: the
// same whether the message came in the same capture or, through
// ApplyOrphans, in the next part.
func (c *Connection) apply(o Orphan) {
	switch o.Kind {
	case REP:
		c.RemoteCommID = o.LocalComm
		if o.HasQPN {
			c.Responder.QPN = ptrTo(o.QPN)
		}
		if o.HasPSN {
			c.Responder.StartingPSN = ptrTo(o.PSN)
		}
		if c.Frames.REP == 0 {
			c.Frames.REP = o.Frame
		}
		c.setSendPSNs()
		if c.State == StateRequested {
			c.State = StateEstablished
		}
	case RTU:
		if c.Frames.RTU == 0 {
			c.Frames.RTU = o.Frame
		}
		if c.State == StateRequested {
			c.State = StateEstablished
		}
	case REJ:
		c.State, c.RejectReason = StateRejected, o.Reason
		if c.Frames.REJ == 0 {
			c.Frames.REJ = o.Frame
		}
	case DREQ:
		if c.Frames.DREQ == 0 {
			c.Frames.DREQ = o.Frame
		}
	case DREP:
		if c.Frames.DREP == 0 {
			c.Frames.DREP = o.Frame
		}
		if c.State != StateRejected {
			c.State = StateDisconnected
		}
	}
}

// setSendPSNs sets where each side's requests start: the StartingPSN
// field of the other side's CM message (Linux cm.c: the active side's
// sq_psn comes from the REP, the passive side's from the REQ).
func (c *Connection) setSendPSNs() {
	c.Requester.SendPSN, c.Responder.SendPSN = nil, nil
	if c.Frames.REP != 0 && c.Responder.StartingPSN != nil {
		c.Requester.SendPSN = ptrTo(*c.Responder.StartingPSN)
	}
	if c.Frames.REQ != 0 && c.Requester.StartingPSN != nil {
		c.Responder.SendPSN = ptrTo(*c.Requester.StartingPSN)
	}
}

// cut reports whether the message named was cut.
func (c *Connection) cut(msg string) bool {
	for _, m := range c.CutMessages {
		if m == msg {
			return true
		}
	}
	return false
}

func ptrTo[T any](v T) *T { return &v }
