// Package fuzz holds the cross-package fuzz targets of roce-dissect: a
// whole frame of any link type decoded both by gopacket.NewPacket and by
// the analyzer's fast path (FuzzFrame), a whole capture file through the
// command (FuzzCapture), the analyzer fed a sequence of frames
// (FuzzAnalyzerSequence), and the same frames fed to shards and combined
// (FuzzShardSequence). The per-package targets (layers, cm, analyze,
// capture) fuzz one decoder each; these fuzz the joints between
// them. The package has no API: everything is in its tests. README.md says
// how to run them.
package fuzz
