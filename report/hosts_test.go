package report_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/report"
)

// TestHostTally: the host a file was taken on is the one address in
// every flow (docs/analysis.md, "Hosts"); two such, or none, name no
// host; the addresses add up what they sent and received, in address
// order.
func TestHostTally(t *testing.T) {
	flow := func(src, dst string, msgs, bytes uint64) analyze.Flow {
		return analyze.Flow{Src: src, Dst: dst, PayloadBytes: bytes, Messages: analyze.Messages{Count: msgs}}
	}
	for _, tc := range []struct {
		name  string
		flows []analyze.Flow
		host  string // "" for none
		pair  []string
		addrs []report.HostAddress
	}{
		{name: "no flows"},
		{name: "a host and two peers", flows: []analyze.Flow{
			flow("10.0.0.10", "10.0.0.2", 3, 3000), flow("10.0.0.2", "10.0.0.10", 0, 0), flow("10.0.0.9", "10.0.0.10", 2, 128),
		}, host: "10.0.0.10", addrs: []report.HostAddress{
			{Addr: "10.0.0.2", SentMessages: 0, SentBytes: 0, ReceivedMessages: 3, ReceivedBytes: 3000},
			{Addr: "10.0.0.9", SentMessages: 2, SentBytes: 128},
			{Addr: "10.0.0.10", SentMessages: 3, SentBytes: 3000, ReceivedMessages: 2, ReceivedBytes: 128},
		}},
		{name: "one pair: either end", flows: []analyze.Flow{
			flow("10.0.0.2", "10.0.0.1", 1, 10), flow("10.0.0.1", "10.0.0.2", 0, 0),
		}, pair: []string{"10.0.0.1", "10.0.0.2"}, addrs: []report.HostAddress{
			{Addr: "10.0.0.1", ReceivedMessages: 1, ReceivedBytes: 10},
			{Addr: "10.0.0.2", SentMessages: 1, SentBytes: 10},
		}},
		{name: "a mirror of two pairs", flows: []analyze.Flow{
			flow("10.0.0.1", "10.0.0.2", 1, 1), flow("10.0.1.1", "10.0.1.2", 1, 1),
		}, addrs: []report.HostAddress{
			{Addr: "10.0.0.1", SentMessages: 1, SentBytes: 1}, {Addr: "10.0.0.2", ReceivedMessages: 1, ReceivedBytes: 1},
			{Addr: "10.0.1.1", SentMessages: 1, SentBytes: 1}, {Addr: "10.0.1.2", ReceivedMessages: 1, ReceivedBytes: 1},
		}},
		{name: "a star lost by its last flow", flows: []analyze.Flow{
			flow("10.0.0.1", "10.0.0.2", 1, 1), flow("10.0.0.3", "10.0.0.1", 1, 1), flow("10.0.0.2", "10.0.0.3", 1, 1),
		}, addrs: []report.HostAddress{
			{Addr: "10.0.0.1", SentMessages: 1, SentBytes: 1, ReceivedMessages: 1, ReceivedBytes: 1},
			{Addr: "10.0.0.2", SentMessages: 1, SentBytes: 1, ReceivedMessages: 1, ReceivedBytes: 1},
			{Addr: "10.0.0.3", SentMessages: 1, SentBytes: 1, ReceivedMessages: 1, ReceivedBytes: 1},
		}},
		{name: "InfiniBand LIDs after IP addresses, in number order", flows: []analyze.Flow{
			flow("LID 4", "LID 12", 1, 1), flow("fe80::1", "LID 4", 1, 1),
		}, host: "LID 4", addrs: []report.HostAddress{
			{Addr: "fe80::1", SentMessages: 1, SentBytes: 1},
			{Addr: "LID 4", SentMessages: 1, SentBytes: 1, ReceivedMessages: 1, ReceivedBytes: 1},
			{Addr: "LID 12", ReceivedMessages: 1, ReceivedBytes: 1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tally := report.TallyFlows(tc.flows)
			f := tally.File("a.pcap")
			assert.Equal(t, "a.pcap", f.File)
			if tc.host == "" {
				assert.Nil(t, f.Host)
			} else if assert.NotNil(t, f.Host) {
				assert.Equal(t, tc.host, *f.Host)
			}
			assert.Equal(t, tc.pair, f.Pair)
			if tc.addrs == nil {
				tc.addrs = []report.HostAddress{}
			}
			assert.Equal(t, tc.addrs, tally.Addresses())
		})
	}
}
