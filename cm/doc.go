// Package cm decodes and encodes InfiniBand management datagrams (MADs)
// and every message of the Communication Manager, the handshake that sets
// up RC, UC and XRC connections on InfiniBand and RoCE.
//
// The handshake is what tells which queue pairs belong together, at which
// PSN each side starts and over which path MTU:
//
//	active side                               passive side
//	REQ  LocalQPN, StartingPSN, PathMTU  →
//	                                      ←   REP  LocalQPN, StartingPSN
//	RTU                                  →
//	              … traffic on the two QPs …
//	DREQ                                 →
//	                                      ←   DREP
//
// REJ refuses a REQ or REP, MRA asks for more time, SIDR_REQ/SIDR_REP
// resolve a service ID to a UD QP, and LAP/APR load an alternate path. All
// eleven are Go types implementing Message:
//
//	REQ       *ConnectRequest           REP       *ConnectReply
//	MRA       *MessageReceiptAck        RTU       *ReadyToUse
//	REJ       *ConnectReject            DREQ      *DisconnectRequest
//	SIDR_REQ  *SIDRRequest              DREP      *DisconnectReply
//	SIDR_REP  *SIDRReply                LAP       *LoadAlternatePath
//	                                    APR       *AlternatePathResponse
//
// Each decodes from and encodes to its exact 232-byte form (the MAD after
// its 24-byte common Header); fields carry the IBTA names (LocalQPN,
// StartingPSN, PrimaryLocalGID, …) and the doc comment of each type gives
// its byte layout.
//
// # Adding a message
//
// The package maps an attribute ID to a message in one place, the table
// messageTypes in message.go: attribute ID, short name, size of the fixed
// fields and constructor. Adding a CM message is one entry there, plus
// its Attr* constant (attribute.go) and its Go type implementing Message
// in a file of its own; decoding, reuse without allocation, NewMessage,
// DecodeMessage, truncation and AttributeName all follow from the entry.
//
// # RoCE
//
// On RoCE the CM runs unchanged over UD QP1 (BTH DestQP 1, DETH Q_Key
// 0x80010000), but the addresses change meaning: the LIDs are placeholders
// (LID.IsPlaceholder: 0 or 0xFFFF) and the GIDs of RoCE v2 over IPv4 are
// IPv4-mapped IPv6 addresses, which GID.String prints as the IPv4 address.
// With the RDMA CM (librdmacm), the ServiceID encodes a port space and port
// (ServiceID.IsRDMACM, PortSpace, Port) and the REQ's private data starts
// with the IP addresses and source port of the connection
// (ConnectRequest.IPPrivateData).
//
// # MADs
//
// MAD decodes the common header of every management class, naming the
// class (ManagementClass.String), method and attribute (AttributeName).
// Beyond the header it decodes the CM messages (class 0x07), the RMPP and
// SA headers of subnet administration (class 0x03) and the layout of
// performance management (class 0x04); other classes keep their 232 bytes
// as Data.
//
// # gopacket
//
// MAD is a gopacket layer (LayerTypeMAD). Package layers hands it the
// payload of every packet to or from QP0/QP1, so after importing this
// package
//
//	packet := gopacket.NewPacket(frame, gplayers.LayerTypeEthernet, gopacket.Default)
//	if mad, ok := packet.Layer(cm.LayerTypeMAD).(*cm.MAD); ok {
//		if req, ok := mad.CM().(*cm.ConnectRequest); ok { … }
//	}
//
// and a DecodingLayerParser can hold a MAD next to the layers of package
// layers (see layers.TransportLayers). A MAD reused that way decodes with
// no allocation. Package layers never imports this one, and the types of
// this package work on raw MAD bytes without gopacket: MAD.Decode,
// MAD.AppendBinary, DecodeMessage and each message's DecodeFromBytes and
// AppendBinary.
//
// # Errors
//
// Errors read "cm: truncated: REQ: 100 bytes, need 232" and wrap the
// sentinels ErrTruncated, ErrUnknownAttribute, ErrFieldRange and
// ErrBadHeader, for errors.Is. A MAD cut short by a capture's snap length
// still decodes its header and, when their bytes are present, the fixed
// fields of its CM message; only the missing tail is reported. No input
// makes a decoder panic (FuzzMAD).
package cm
