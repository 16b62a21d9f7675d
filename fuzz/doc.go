// Package fuzz holds the cross-package fuzz targets of roce-dissect: a
// whole frame of any link type decoded both by gopacket.NewPacket and by
// the analyzer's fast path (FuzzFrame), a whole capture file through the
// command (FuzzCapture), the analyzer fed a sequence of frames
// (FuzzAnalyzerSequence), the same frames fed to shards and combined
// (FuzzShardSequence), long sequences expanded from a program
// (FuzzAnalyzerProgram), and the outputs: copies of a capture matched as
// capture points (FuzzCapturePoints), the Parquet export read back
// (FuzzParquetExport) and the HTML page of hostile strings
// (FuzzHTMLReport). The per-package targets (layers, cm, analyze,
// capture, internal/wrap, internal/cli) fuzz one decoder or parser each;
// these fuzz the joints between them. The package has no API: everything
// is in its tests. README.md lists the targets and what each checks, and
// says how to run them.
package fuzz
