// Package report renders an analyze.Report the way the roce-dissect
// command prints it: the text report (capture summary, connections, flow
// table, NIC behaviour, findings worst first, capture points), its JSON
// (docs/json.md) and the CSV of its flows. The command writes every report
// through it.
//
// Where things are: report.go (WriteText and its options), text.go (the
// text report's sections), nic.go (its NIC section), topflows.go (which
// flows its table lists), points.go (its capture points section),
// hosts.go (its Hosts section and the JSON's hosts, a view over the
// flows), palette.go (colours and aligned tables), sniffer.go and
// uncaptured.go (notes and fields a capture did not have), json.go
// (WriteJSON), csv.go (the CSV flow table).
package report
