package points

// pairCounts are what two files' samples say of each other, management
// datagrams (QP0, QP1) aside.
type pairCounts struct {
	// na, nb are the sampled data transmissions of each file.
	na, nb int
	// shared counts those seen in both, unambiguously (one transmission
	// with the key in each file, same ICRC when both have one).
	shared int
	// conflicts counts the sampled transmissions of one file whose flow
	// and PSN the other file has, but never with these bytes (another
	// opcode, length, IPv4 identification or ICRC): the two files
	// disagree on what that PSN of that flow was.
	conflicts int
}

// meets says whether the two files are capture points of the same
// traffic. Two points see the same transmissions while both capture, so
// they share a good part of the smaller file's traffic, and a PSN both
// see is the same packet at both (a tap drop of an original whose resend
// has another IPv4 identification is the rare exception). Captures of
// different runs between the same hosts (the same software, the same
// seed) can share their first packets byte for byte and then diverge:
// the same flow and PSN, other bytes. They do not meet when the shared
// transmissions are fewer than MinShared, fewer than 1/MinSharedRatio of
// the smaller file's, or when the conflicts are more than
// 1/MinSharedRatio of the shared ones.
func (c pairCounts) meets() bool {
	return c.shared >= MinShared &&
		c.shared*MinSharedRatio >= min(c.na, c.nb) &&
		c.conflicts*MinSharedRatio <= c.shared
}
