// Package pfc is the pause-frame stage of the analyzer: it follows the
// IEEE 802.1Qbb Priority Flow Control and 802.3x PAUSE frames (MAC
// Control, EtherType 0x8808) of a capture, the back-pressure of a
// lossless RoCE fabric.
//
// Use it with the MAC Control frames of a capture, decoded by package
// layers:
//
//	t := pfc.New(pfc.Config{LinkSpeed: 100e9, Storm: 200 * time.Millisecond})
//	for each MAC Control frame {
//		t.Frame(number, timestamp, sourceMAC, &macControl)
//	}
//	s := t.Snapshot() // the track as a report sees it; t may be fed on
//	s.Stats()         // per sender and priority: frames, quanta, paused time
//	s.Storms()        // the priorities paused too long without a break
//	s.Timeline().Overlap(3, from, to) // how long priority 3 was paused in [from, to]
//
// Snapshots of parts of a capture (shards, or files analyzed separately)
// combine with Add: the figures of a sender's priority add up, its
// longest stretch is the longer one, its first storm the earlier one.
//
// Each sender (source MAC) and priority (802.3x: every priority at once)
// is paused from the arrival of an XOFF (quanta > 0) until quanta × 512
// bit times later at the link speed (Config.LinkSpeed); a later frame of
// the same sender and priority replaces that deadline (shorter or
// longer), and an XON (quanta 0) ends the pause at once. The frames of a
// sender and priority arriving while it is paused make one stretch; a
// stretch still open at the end of the capture ends at its deadline. The
// paused time is the sum of the stretches (the union of the pause
// intervals), and a stretch longer than Config.Storm is a storm. A
// stretch that ends before it began (the capture's clock went back
// between its XOFF and its end) measures nothing, like a NIC time
// measured across it: it adds no paused time and no stretch, never a
// negative one.
//
// The stage knows neither flows nor findings: package analyze gives each
// flow the time its priority was paused while it was active (Timeline)
// and turns each Storm into a pause_storm finding. Memory is bounded
// (MaxKeys, MaxStretches) whatever the capture holds.
package pfc
