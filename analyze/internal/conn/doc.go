// Package conn is the connections stage of the analyzer, beginning with
// its capture-wide order: the CM flood check, which counts a capture's
// CM messages against what its connections explain, in frame order
// over every part of the capture.
//
// Use it with the CM messages of each part (shard) of a capture, in
// frame order, and the REQs among them that opened a new connection:
//
//	var l conn.Log
//	for each CM message {
//		l.Add(frame, timestamp)
//		if it was a REQ with a new CommID {
//			l.MarkGrew()
//		}
//	}
//	e, ok := conn.FirstFlood(conn.Counts{}, []*conn.Log{&l, &other})
//	// ok: e is the message at which the messages first outnumber
//	// what the connections explain (Flooded)
//
// A Log keeps each message in a few bytes (a flood of a million REQs is
// a million messages); FirstFlood merges the parts' logs in frame order
// without a list of them all. Flooded is the rule itself, the same for
// one Analyzer counting as it goes and for the parts combined.
//
// The stage knows neither packets nor findings: package analyze notes
// the messages, and turns the flood into a cm_flood finding.
package conn
