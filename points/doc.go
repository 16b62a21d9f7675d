// Package points matches the packets of several captures of the same
// traffic (capture points: a tap at each host, switch mirrors) and says
// where packets were lost or corrupted and how long each hop took.
//
// It sits above package analyze and consumes the *analyze.Packet views an
// Analyzer returns from Feed; it changes nothing in them. Use it in two
// passes over the files:
//
//  1. Feed every packet of file i to a Sampler (one per file), then
//     EstimateOffsets from the samplers: each file's clock offset from the
//     first file's clock, from packets seen at both points in both
//     directions (NTP's bound: the minimum one-way delays of the two
//     directions bracket the offset). EstimateClocks also groups the
//     files that meet (MinShared, MinSharedRatio: shared data
//     transmissions and no disagreement on the PSNs both saw); files in
//     no group are consecutive (rotated files of one tap), and when no two
//     files meet there is nothing to match.
//  2. Read each group's files again merged in time order on the reference clock and
//     give every packet to a Matcher: Add says whether it is the first
//     sighting of its transmission (feed only those to a combined
//     analyzer, so that a packet seen at two points counts once). Finish
//     returns the Report: per file its offset, per flow and pair of
//     consecutive points the matched, lost, not captured, corrupted and
//     reordered transmissions and the one-way delay.
//
// A transmission is identified by its flow (source, destination,
// destination QP), PSN, opcode, IB payload length, IPv4 identification
// and, when captured, the ICRC on the wire (the ICRC covers every byte
// that does not change in flight, so routers and TTL decrements do not
// change it). Resends of one PSN with identical bytes are told apart by
// time: a sighting goes to the candidate whose delay best fits the
// flow's delay between the two points. Memory is bounded by the packets
// within the matching window (Options.Window) and the time per packet is
// constant, whatever the number of points: each flow's points are
// ordered along its path as its transmissions reveal it, and a
// transmission is accounted only to the pairs of points next to each
// other on that path or one apart (at most 2n−3 of the n(n−1)/2 pairs).
package points
