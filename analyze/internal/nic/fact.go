package nic

import "time"

// Kind is what a Fact tells.
type Kind uint8

// Kinds of facts. Those of a request (RNREarly, Restart, Skip) concern
// the request just fed; NoSlowdown and TooClose carry the CNP's frame
// and time.
const (
	// RNREarly: PSN resent Wait after the RNR NAK of frame Ref, which
	// asked for Limit (ns).
	RNREarly Kind = iota + 1
	// Restart: the resend after the NAK of frame Ref restarted at PSN,
	// not at the NAKed PSN From.
	Restart
	// Skip: the go-back-N after the NAK of frame Ref skipped PSNs
	// From–To, sent before the NAK.
	Skip
	// NoSlowdown: the sender's rate after the CNP (Rate, bps) is not
	// below 15/16 of its rate before it (Before).
	NoSlowdown
	// TooClose: the CNP came Wait after the CNP of frame Ref; the NIC's
	// CNPs are otherwise at least Limit (ns) apart.
	TooClose
)

// Fact is one finding of the stage, as plain numbers: the caller words
// it, and decides whether to keep it.
type Fact struct {
	Kind     Kind
	Frame    uint64    // NoSlowdown, TooClose: the CNP's frame
	Time     time.Time // and its time
	Ref      uint64    // the frame of the NAK, RNR NAK or previous CNP it follows
	PSN      uint32    // RNREarly, Restart: the PSN resent
	From, To uint32    // Restart: the NAKed PSN (From); Skip: the PSNs skipped
	Wait     int64     // RNREarly, TooClose: ns since the RNR NAK or previous CNP
	Limit    int64     // RNREarly: the RNR timer; TooClose: the NIC's minimum CNP interval; ns
	Rate     int64     // NoSlowdown: the rate after the CNP, bps
	Before   int64     // NoSlowdown: the rate before it, bps
}
