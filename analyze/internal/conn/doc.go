// Package conn is the connections stage of the analyzer: it pairs the
// CM messages of a capture (REQ, REP, REJ, RTU, DREQ, DREP) into
// connections, keeps the messages whose REQ came before the capture for
// the part before it, and owns the CM flood check, which counts a
// capture's CM messages against what its connections explain, in frame
// order over every part of the capture.
//
// Use it with the MADs of a capture, decoded by package decode:
//
//	t := conn.NewTable()
//	t.MaxOrphans = 1024
//	for each packet p with a MAD {
//		if !t.Message(p) {
//			continue // not a CM message the table follows
//		}
//		admitted := t.NewREQ() && room for one more connection
//		switch f := t.Apply(p, admitted); f.Kind {
//		case conn.Answered: // t.List[f.Index]'s data flows are known
//		case conn.Rejected: // f.Reason
//		}
//	}
//	conn.ApplyOrphans(before, t.Orphans) // the part before's connections
//
// and with the CM messages of each part (shard) of a capture, in frame
// order, and the REQs among them that opened a new connection:
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
// The stage knows neither flows nor findings: package analyze links the
// connections to its flows, notes the messages for the flood, and turns
// a Rejected fact into a cm_reject finding and the flood into a cm_flood
// one.
package conn
