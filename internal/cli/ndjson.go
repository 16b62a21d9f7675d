package cli

import (
	"fmt"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
)

// packetJSON is one line of `-P -o json`. Nested keys are nested objects;
// absent headers are omitted.
type packetJSON struct {
	Frame        uint64      `json:"frame"`
	Time         time.Time   `json:"time"`
	Src          string      `json:"src"`
	Dst          string      `json:"dst"`
	Encap        string      `json:"encap"`
	Length       int         `json:"length"`
	Error        string      `json:"error,omitempty"`
	BTH          *bthJSON    `json:"bth,omitempty"`
	RETH         *rethJSON   `json:"reth,omitempty"`
	AETH         *aethJSON   `json:"aeth,omitempty"`
	DETH         *dethJSON   `json:"deth,omitempty"`
	DCETH        *dcethJSON  `json:"dceth,omitempty"`
	AtomicETH    *atomicJSON `json:"atomiceth,omitempty"`
	AtomicAckETH *string     `json:"atomicacketh,omitempty"`
	ImmDt        *uint32     `json:"immdt,omitempty"`
	IETH         *uint32     `json:"ieth,omitempty"`
	PayloadLen   *int        `json:"payload_len,omitempty"`
	ICRC         *icrcJSON   `json:"icrc,omitempty"`
	MAD          *madJSON    `json:"mad,omitempty"`
	Findings     int         `json:"findings"`

	// Added keys (docs/json.md, "Per-packet NDJSON").
	File                string      `json:"file,omitempty"`
	TimeRelativeSeconds float64     `json:"time_relative_seconds"`
	ECN                 *ecnJSON    `json:"ecn,omitempty"`
	LRH                 *lrhJSON    `json:"lrh,omitempty"`
	GRH                 *grhJSON    `json:"grh,omitempty"`
	RDETH               *rdethJSON  `json:"rdeth,omitempty"`
	XRCETH              *xrcethJSON `json:"xrceth,omitempty"`
	FETH                *fethJSON   `json:"feth,omitempty"`
	CNP                 *cnpJSON    `json:"cnp,omitempty"`
	VCRC                *icrcJSON   `json:"vcrc,omitempty"`
	FindingKinds        []string    `json:"finding_kinds,omitempty"`
	// Wraps, Priority and MACControl: packets_wrap.go.
	Wraps      []wrapJSON      `json:"wraps,omitempty"`
	Priority   *int            `json:"priority,omitempty"`
	MACControl *macControlJSON `json:"mac_control,omitempty"`
}

type bthJSON struct {
	Opcode     uint8  `json:"opcode"`
	OpcodeName string `json:"opcode_name"`
	SE         bool   `json:"se"`
	M          bool   `json:"m"`
	PadCnt     uint8  `json:"pad_cnt"`
	TVer       uint8  `json:"tver"`
	PKey       uint16 `json:"pkey"`
	FECN       bool   `json:"fecn"`
	BECN       bool   `json:"becn"`
	DestQP     uint32 `json:"dest_qp"`
	AckReq     bool   `json:"ack_req"`
	PSN        uint32 `json:"psn"`
}

// dcethJSON is the DCETH of a DC packet: two words of unknown meaning.
type dcethJSON struct {
	Word0 uint32 `json:"word0"`
	Word1 uint32 `json:"word1"`
}

type rethJSON struct {
	VA        string `json:"va"`
	RKey      uint32 `json:"rkey"`
	DMALength uint32 `json:"dma_length"`
}

type aethJSON struct {
	Syndrome uint8  `json:"syndrome"`
	Type     string `json:"type"`
	MSN      uint32 `json:"msn"`
}

type dethJSON struct {
	QKey  uint32 `json:"qkey"`
	SrcQP uint32 `json:"src_qp"`
}

type atomicJSON struct {
	VA        string `json:"va"`
	RKey      uint32 `json:"rkey"`
	SwapOrAdd string `json:"swap_or_add"`
	Compare   string `json:"compare"`
}

type icrcJSON struct {
	Status   string `json:"status"`
	Value    string `json:"value,omitempty"`
	Expected string `json:"expected,omitempty"`
	// OriginalSrcPort is the UDP source port the ICRC verified with when
	// the capture shows 4791 in its place (NIC sniffer).
	OriginalSrcPort *uint16 `json:"original_src_port,omitempty"`
}

type madJSON struct {
	MgmtClass   uint8   `json:"mgmt_class"`
	ClassName   string  `json:"class_name"`
	Method      uint8   `json:"method"`
	AttributeID uint16  `json:"attribute_id"`
	Attribute   string  `json:"attribute"`
	TID         string  `json:"transaction_id"`
	CM          *cmJSON `json:"cm,omitempty"`
}

type cmJSON struct {
	Type             string  `json:"type"`
	LocalCommID      *uint32 `json:"local_comm_id,omitempty"`
	RemoteCommID     *uint32 `json:"remote_comm_id,omitempty"`
	LocalQPN         *uint32 `json:"local_qpn,omitempty"`
	StartingPSN      *uint32 `json:"starting_psn,omitempty"`
	ServiceID        string  `json:"service_id,omitempty"`
	PathMTU          *int    `json:"path_mtu,omitempty"`
	PrimaryLocalGID  string  `json:"primary_local_gid,omitempty"`
	PrimaryRemoteGID string  `json:"primary_remote_gid,omitempty"`
	PrimaryLocalLID  *uint16 `json:"primary_local_lid,omitempty"`
	PrimaryRemoteLID *uint16 `json:"primary_remote_lid,omitempty"`
	Reason           string  `json:"reason,omitempty"`
	// RDMACM is the RDMA CM IP header of a REQ's private data.
	RDMACM *rdmaCMJSON `json:"rdma_cm,omitempty"`
}

// icrcObject is the analyzer's verdict on the ICRC of p, a packet with a
// BTH, as -P -o json and -P -o csv show it: the status, the value as
// Wireshark shows it, the value expected when bad, and the source port
// it verified with when the capture tool rewrote the port.
func icrcObject(p *analyze.Packet) *icrcJSON {
	st := icrcJSON{Status: p.ICRC.Status.String()}
	if v, ok := p.BTH.ICRCValue(); ok {
		st.Value = layers.ICRCWire(v)
		if p.ICRC.Status == layers.ICRCBad {
			st.Expected = layers.ICRCWire(p.ICRC.Expected)
		}
	}
	if p.SrcPortRewritten {
		st.OriginalSrcPort = ptr(p.OriginalSrcPort)
	}
	return &st
}

func hex64(v uint64) string { return fmt.Sprintf("0x%016x", v) }

func ptr[T any](v T) *T { return &v }

func packetObject(p *analyze.Packet) *packetJSON {
	o := &packetJSON{Frame: p.Frame, Time: p.Time, Src: p.Src.String(), Dst: p.Dst.String(), Encap: p.Encap.String(), Length: p.Length, Findings: p.Findings}
	if p.Err != nil {
		o.Error = p.Err.Error()
	}
	if b := p.BTH; b != nil {
		o.BTH = &bthJSON{Opcode: uint8(b.Opcode), OpcodeName: b.OpcodeName(), SE: b.SolicitedEvent, M: b.MigReq, PadCnt: b.PadCnt, TVer: b.TVer, PKey: b.PKey, FECN: b.FECN, BECN: b.BECN, DestQP: b.DestQP, AckReq: b.AckReq, PSN: b.PSN}
		o.ICRC = icrcObject(p)
	}
	if h := p.RETH; h != nil {
		o.RETH = &rethJSON{VA: hex64(h.VA), RKey: h.RKey, DMALength: h.DMALength}
	}
	if h := p.AETH; h != nil {
		o.AETH = &aethJSON{Syndrome: h.Syndrome, Type: h.Type().String(), MSN: h.MSN}
	}
	if h := p.DETH; h != nil {
		o.DETH = &dethJSON{QKey: h.QKey, SrcQP: h.SrcQP}
	}
	if h := p.DCETH; h != nil {
		o.DCETH = &dcethJSON{Word0: h.Word0, Word1: h.Word1}
	}
	if h := p.AtomicETH; h != nil {
		o.AtomicETH = &atomicJSON{VA: hex64(h.VA), RKey: h.RKey, SwapOrAdd: hex64(h.SwapOrAdd), Compare: hex64(h.Compare)}
	}
	if h := p.AtomicAckETH; h != nil {
		o.AtomicAckETH = ptr(hex64(h.OrigRemoteData))
	}
	if h := p.ImmDt; h != nil {
		o.ImmDt = ptr(h.Immediate)
	}
	if h := p.IETH; h != nil {
		o.IETH = ptr(h.RKey)
	}
	if p.PayloadLen >= 0 {
		o.PayloadLen = ptr(p.PayloadLen)
	}
	if mad := p.MADLayer; mad != nil {
		h := mad.Header
		o.MAD = &madJSON{MgmtClass: uint8(h.MgmtClass), ClassName: h.MgmtClass.String(), Method: uint8(h.Method), AttributeID: uint16(h.AttributeID), Attribute: h.AttributeName(), TID: hex64(h.TransactionID)}
		if msg := mad.CM(); msg != nil {
			o.MAD.CM = cmObject(msg)
		}
	}
	return o
}

func cmObject(msg cm.Message) *cmJSON {
	c := &cmJSON{Type: msg.AttributeID().String()}
	switch m := msg.(type) {
	case *cm.ConnectRequest:
		c.Type = "REQ"
		c.LocalCommID, c.LocalQPN, c.StartingPSN = ptr(m.LocalCommID), ptr(m.LocalQPN), ptr(m.StartingPSN)
		c.ServiceID = m.ServiceID.String()
		c.PathMTU = ptr(m.PathMTU.Bytes())
		c.PrimaryLocalGID, c.PrimaryRemoteGID = m.PrimaryLocalGID.String(), m.PrimaryRemoteGID.String()
		c.PrimaryLocalLID, c.PrimaryRemoteLID = ptr(uint16(m.PrimaryLocalLID)), ptr(uint16(m.PrimaryRemoteLID))
		c.RDMACM = rdmaCMObject(m)
	case *cm.ConnectReply:
		c.Type = "REP"
		c.LocalCommID, c.RemoteCommID, c.LocalQPN, c.StartingPSN = ptr(m.LocalCommID), ptr(m.RemoteCommID), ptr(m.LocalQPN), ptr(m.StartingPSN)
	case *cm.ReadyToUse:
		c.Type = "RTU"
		c.LocalCommID, c.RemoteCommID = ptr(m.LocalCommID), ptr(m.RemoteCommID)
	case *cm.ConnectReject:
		c.Type = "REJ"
		c.LocalCommID, c.RemoteCommID = ptr(m.LocalCommID), ptr(m.RemoteCommID)
		c.Reason = m.Reason.String()
	case *cm.DisconnectRequest:
		c.Type = "DREQ"
		c.LocalCommID, c.RemoteCommID = ptr(m.LocalCommID), ptr(m.RemoteCommID)
	case *cm.DisconnectReply:
		c.Type = "DREP"
		c.LocalCommID, c.RemoteCommID = ptr(m.LocalCommID), ptr(m.RemoteCommID)
	case *cm.MessageReceiptAck:
		c.Type = "MRA"
		c.LocalCommID, c.RemoteCommID = ptr(m.LocalCommID), ptr(m.RemoteCommID)
	case *cm.LoadAlternatePath:
		c.Type = "LAP"
		c.LocalCommID, c.RemoteCommID = ptr(m.LocalCommID), ptr(m.RemoteCommID)
	case *cm.AlternatePathResponse:
		c.Type = "APR"
		c.LocalCommID, c.RemoteCommID = ptr(m.LocalCommID), ptr(m.RemoteCommID)
	case *cm.SIDRRequest:
		c.Type = "SIDR_REQ"
		c.ServiceID = m.ServiceID.String()
	case *cm.SIDRReply:
		c.Type = "SIDR_REP"
		c.LocalQPN = ptr(m.QPN)
		c.ServiceID = m.ServiceID.String()
	}
	return c
}
