// Package trace writes the analysis as a timeline in the Chrome
// trace-event JSON format (its "JSON Object Format": {"traceEvents": […],
// "displayTimeUnit": "ns"}), which ui.perfetto.dev and chrome://tracing
// open.
//
// Each capture file is a process and each of its QP flows a thread (a
// track), named as the reports name flows ("10.0.0.1 → 10.0.0.2 QP
// 0x005669"). A message is a complete slice ("X") on its flow's track,
// named by its operation (names.go), from its first packet to the packet
// that completed it; a finding is an instant ("i") on its flow's track
// (or on the file's "capture" track), named by its kind, with its detail
// and frame; a flow's throughput
// series and its CNPs are counters ("C"). Times are microseconds from
// the capture's first frame, whose time otherData.capture_start gives.
//
// A Collector gathers the messages and CNPs while the analyzer runs (fed
// by analyze.Options.OnMessage and the packets Feed returns); Write adds
// the report's findings and series. The events are capped (Limits); a
// note event says so when the cap is reached.
package trace
