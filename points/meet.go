package points

import "fmt"

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
	// inA, inB count each file's sampled data transmissions within the
	// PSNs both saw of their flow (the shortest arc of the 24-bit PSN
	// circle that holds the flow's PSNs whose key both have: arcOf);
	// missA, missB those of them the
	// other file does not have.
	inA, inB, missA, missB int
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
// 1/MinSharedRatio of the shared ones, or when either misses more than
// 1/MaxMissRatio of the other's transmissions within the PSNs both saw
// of each flow (a file of every other packet of another).
// why says which rule of meets two files named a and b break (""
// when none).
func (c pairCounts) why(a, b string) string {
	switch {
	case c.shared < MinShared:
		return fmt.Sprintf("%s and %s share %d sampled transmissions, fewer than %d", a, b, c.shared, MinShared)
	case !c.sharesMost():
		return fmt.Sprintf("%s and %s share %d of the %d sampled transmissions of the smaller, fewer than 1 in %d", a, b, c.shared, min(c.na, c.nb), MinSharedRatio)
	case c.conflicts*MinSharedRatio > c.shared:
		return fmt.Sprintf("%s and %s disagree on %d sampled transmissions for %d they share, more than 1 in %d", a, b, c.conflicts, c.shared, MinSharedRatio)
	case c.missA*MaxMissRatio > c.inA:
		return fmt.Sprintf("%s lacks %d of the %d sampled transmissions of %s within the PSNs both saw of their flows, more than 1 in %d", b, c.missA, c.inA, a, MaxMissRatio)
	case c.missB*MaxMissRatio > c.inB:
		return fmt.Sprintf("%s lacks %d of the %d sampled transmissions of %s within the PSNs both saw of their flows, more than 1 in %d", a, c.missB, c.inB, b, MaxMissRatio)
	}
	return ""
}

// sharesMost says whether the shared transmissions are at least
// 1/MinSharedRatio of the smaller file's.
func (c pairCounts) sharesMost() bool { return c.shared*MinSharedRatio >= min(c.na, c.nb) }

func (c pairCounts) meets() bool { return c.why("", "") == "" }
