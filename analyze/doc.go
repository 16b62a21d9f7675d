// Package analyze is the streaming analyzer of roce-dissect: frames go in
// one by one (gopacket.CaptureInfo, link type, bytes), a Report comes out.
//
// Use it with any source of frames (package capture reads files):
//
//	a := analyze.New(analyze.Options{})
//	for each frame {
//		a.Feed(ci, linkType, data) // the decoded *Packet, for per-packet views
//	}
//	rep := a.Finish() // connections, flows, findings (worst first), pause
//
// Options holds what a user chooses: the throughput interval, the caps,
// the ports, the link speed; its zero value is the command's defaults.
// For a capture too large to hold its report, FinishStream hands the
// flows out one at a time (ReportStream). NewSharded analyzes one capture
// on several cores with the same report as one core's (Sharded.Finish,
// which reads the capture again with one Analyzer, given Reread, when
// the shards cannot be combined exactly). Reports of files analyzed
// separately combine with Report.Merge; a Budget caps their flows and
// connections together. The package's Example shows a PSN the capture
// missed.
//
// The report answers what a capture of RDMA traffic cannot show packet by
// packet: which queue pairs talked and what the CM handshake set up
// (Connections), and for every flow — network source, network
// destination, destination QP — its packets and bytes, the requester's PSN
// stream (missing PSNs as ranges, retransmissions, duplicates, reordering),
// the responder's ACKs, NAKs and RNR NAKs with the request→ACK round trip,
// reassembled messages, the path MTU inferred and negotiated, congestion
// signals (ECN CE, FECN, BECN, CNPs), ICRC results and throughput, overall
// and per interval. Every anomaly is also a Finding with the frame number
// to open in Wireshark. docs/analysis.md defines each number; docs/json.md
// the JSON form.
//
// Memory grows with the number of flows (and gaps), never with the number
// of packets, and a packet of an existing flow is analyzed without
// allocating. Reports of parts analyzed separately combine with
// Report.Merge (reports as Analyzers return them: see ErrNotMergeable).
//
// The stages. A frame goes through stages, each a type with its own
// state in a package of its own under analyze/internal, which the
// Analyzer composes and which never import analyze:
//
//	frame ─► decode ─► flow table ─► per-QP state ─► connections ─► report part
//	         (decode)  (flow.go …)   (request.go …)  (conn.go,        │
//	            │                        │            inferconn.go)   │
//	            ├─► pause frames (pfc)   └─► NIC behaviour (nic)      │
//	            ├─► tool-cut frames (toolcut)                         │
//	            └─► observers (Options.Observer: nccl) ◄────────────────┘
//
// decode turns bytes into a Packet; pfc keeps the PFC and PAUSE state
// per sender and priority; toolcut tells a capture tool's cut from a
// frame that lies about its length, and combines the shards' verdicts
// itself; nic times how the NICs answered and recovered (with hist, the
// histogram it shares with the RTT). Each
// stage hands out facts, never Findings: the Analyzer words them. The
// flow table, the per-QP state, the connections and the findings are
// still files of this package, and sharding still combines their parts
// with replays (combine.go, shard*.go): the CM flood, the flows' creation
// order and the findings' listing. To add a stage: a package under
// analyze/internal with a type fed the Packet (or the facts it needs),
// its report part, and its own combine of two parts; the Analyzer feeds
// it in feed and builds its part in build.go.
//
// Where things are, file by file:
//
//   - Feeding: analyzer.go (Options, Analyzer, Feed); the decode stage,
//     package analyze/internal/decode (a frame's headers, through its
//     encapsulations, into the Packet: packet.go names it here);
//     origlen.go (original lengths beyond MaxOriginalLength), cut.go
//     (frames shorter than their length fields, a tool's cut or a lie,
//     judged by the stage of package internal/toolcut, which combines
//     the shards' judgements itself),
//     portrewrite.go (a NIC sniffer's rewritten UDP source port),
//     framefindings.go (the findings of the last frame fed), wrap.go (the
//     encapsulations a frame arrived in, and the tunnel that keys its
//     flow), wrapcount.go (their counts in the capture summary) and
//     othercount.go (the frames that are not RDMA, by protocol and port).
//   - Flows: flow.go (the flow table and its keys), flowindex.go (flows
//     found by key in one probe), prefetch.go (the state of the flows of
//     the next frames read into the caches), flowaddr.go (addresses),
//     flowbound.go (bounded per-flow state), flowtime.go (flow times),
//     opmix.go (what a flow carried: packets by operation, messages by size),
//     budget.go (Budget: the run's flow and connection caps), sketch.go (the
//     dropped flows' distinct count), transport.go (a flow's transport
//     name).
//   - Requests and responses: request.go, psn.go and psnbound.go (the PSN
//     stream), reassembly.go (messages), onmessage.go (the messages
//     completed, for Options.OnMessage), response.go (ACK, NAK, READ
//     responses), rtt.go and pendingring.go (request → ACK time), mtu.go
//     (path MTU), series.go (throughput over time).
//   - Connections: conn.go (pairing CM messages into connections), cmcap.go (the
//     connection table's bounds and the CM flood), inferconn.go (RC pairs
//     without CM, from the flows' pairing by PSN).
//   - Pause frames: package internal/pfc (the stage of PFC and 802.3x
//     PAUSE: per sender and priority, storms, when each priority was
//     paused), pause.go (the frames fed to it, its storms as findings,
//     its parts combined), pausetime.go (the flows' priorities and paused
//     time).
//   - Loss and the NIC: loss.go (where a missing PSN was lost),
//     lossclass.go (its classification), gaploss.go (that of each gap
//     and jump, for the views that draw them), nic.go (how the NICs
//     recovered, and the capture side: the stage of package
//     internal/nic, fed here),
//     markce.go (an ECN CE mark a later sighting of a packet showed: a
//     capture point downstream, package points).
//   - Findings: findings.go (the kinds, one table), findinglist.go (the
//     severity-aware cap).
//   - Reports: report.go (the Report and its JSON contract), build.go
//     (Finish, Report: the Analyzer's part of the report, which the
//     combiner makes the report, alone or with other shards' parts),
//     stream.go (a report written flow by flow), release.go (when a
//     report calls Options.OnRelease), pieces.go (frame references of a
//     capture read from several files).
//   - Combining: merge.go, mergecm.go and mergepsn.go (Report.Merge of
//     separately analyzed files); sharded.go (Sharded: a capture on several
//     cores), shardbatch.go (the batches of frames it hands its shards),
//     placer.go (which shard a host pair goes to), hostpair.go
//     (HostPairKey, the shards' key) and hostpairwrap.go (its walk into
//     tunnels), shard.go (Options.shard, feedShard,
//     what a shard records), combine.go (combineShards: every report,
//     of one shard or several), shardcm.go
//     (CommIDs, connection numbers and the CM flood across shards),
//     shardcmlog.go (a shard's CM messages, compactly, for the flood),
//     shardcap.go (the caps when shards share a budget).
//
// Adding a finding kind: a Kind constant and one entry in Kinds
// (findings.go), and the same row in docs/analysis.md's table of
// findings (a test compares them); report it with Analyzer.finding, which
// checks the cap before the detail is formatted. Adding a CM message: see
// package cm.
package analyze
