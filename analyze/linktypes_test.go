package analyze_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// generatedFrames runs the generator in memory and returns its frames,
// their link type and its truth JSON.
func generatedFrames(t *testing.T, cfg synth.Config) ([]gopacket.CaptureInfo, [][]byte, gplayers.LinkType, []byte) {
	t.Helper()
	var capBuf, truthBuf bytes.Buffer
	_, err := synth.Generate(cfg, &capBuf, &truthBuf)
	require.NoError(t, err)
	r, err := capture.NewReader(&capBuf)
	require.NoError(t, err)
	var cis []gopacket.CaptureInfo
	var frames [][]byte
	var lt gplayers.LinkType
	for {
		ci, data, l, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		cis, frames, lt = append(cis, ci), append(frames, bytes.Clone(data)), l
	}
	return cis, frames, lt, truthBuf.Bytes()
}

// The link-layer headers below are written from their definitions in the
// tcpdump.org list of link types (LINKTYPE_LINUX_SLL 113, LINKTYPE_LINUX_SLL2
// 276, LINKTYPE_RAW 101, LINKTYPE_IPV4 228, LINKTYPE_IPV6 229), replacing
// the 14-byte Ethernet header of a generated frame.

const ethHeaderLen = 14

// toSLL rewrites an Ethernet frame as a Linux "cooked" capture:
//
//	packet type(16) ARPHRD type(16) address length(16) address(64) protocol(16)
func toSLL(frame []byte) []byte {
	h := make([]byte, 16)
	binary.BigEndian.PutUint16(h[0:], 4) // sent by us
	binary.BigEndian.PutUint16(h[2:], 1) // ARPHRD_ETHER
	binary.BigEndian.PutUint16(h[4:], 6) // a MAC address
	copy(h[6:12], frame[6:12])           // the source MAC
	copy(h[14:16], frame[12:14])         // the EtherType
	return append(h, frame[ethHeaderLen:]...)
}

// toSLL2 rewrites an Ethernet frame as a Linux cooked capture v2:
//
//	protocol(16) reserved(16) interface index(32) ARPHRD type(16)
//	packet type(8) address length(8) address(64)
func toSLL2(frame []byte) []byte {
	h := make([]byte, 20)
	copy(h[0:2], frame[12:14])           // the EtherType
	binary.BigEndian.PutUint32(h[4:], 3) // interface 3
	binary.BigEndian.PutUint16(h[8:], 1) // ARPHRD_ETHER
	h[10] = 0                            // to us
	h[11] = 6
	copy(h[12:18], frame[6:12])
	return append(h, frame[ethHeaderLen:]...)
}

// toRawIP drops the Ethernet header: the frame starts at the IP header.
func toRawIP(frame []byte) []byte { return bytes.Clone(frame[ethHeaderLen:]) }

// TestLinkTypes: generated RoCE traffic (with loss, a NAK, a duplicate, a
// corrupted ICRC and, over IP, ECN marks) rewritten for each link type
// a Linux capture can have gives the report the generator's truth
// describes, as its Ethernet original does.
func TestLinkTypes(t *testing.T) {
	rel := func(vs ...uint32) []synth.PSNRef {
		var out []synth.PSNRef
		for _, v := range vs {
			out = append(out, synth.PSNRef{Value: v, Relative: true})
		}
		return out
	}
	im := synth.Impairments{Drop: rel(3), NAK: rel(6), Dup: rel(8), CorruptICRC: rel(1)}
	ecn := im
	ecn.ECN = rel(2, 4)
	identity := func(b []byte) []byte { return b }
	tests := []struct {
		name     string
		encap    synth.Encap
		im       synth.Impairments
		linkType gplayers.LinkType
		wrap     func([]byte) []byte
	}{
		{"ethernet/ipv4", synth.EncapIPv4, ecn, gplayers.LinkTypeEthernet, identity},
		{"sll/ipv4", synth.EncapIPv4, ecn, gplayers.LinkTypeLinuxSLL, toSLL},
		{"sll/ipv6", synth.EncapIPv6, ecn, gplayers.LinkTypeLinuxSLL, toSLL},
		{"sll/rocev1", synth.EncapRoCEv1, im, gplayers.LinkTypeLinuxSLL, toSLL},
		{"sll2/ipv4", synth.EncapIPv4, ecn, gplayers.LinkTypeLinuxSLL2, toSLL2},
		{"sll2/ipv6", synth.EncapIPv6, ecn, gplayers.LinkTypeLinuxSLL2, toSLL2},
		{"sll2/rocev1", synth.EncapRoCEv1, im, gplayers.LinkTypeLinuxSLL2, toSLL2},
		{"raw/ipv4", synth.EncapIPv4, ecn, gplayers.LinkTypeRaw, toRawIP},
		{"raw/ipv6", synth.EncapIPv6, ecn, gplayers.LinkTypeRaw, toRawIP},
		{"ipv4", synth.EncapIPv4, ecn, gplayers.LinkTypeIPv4, toRawIP},
		{"ipv6", synth.EncapIPv6, ecn, gplayers.LinkTypeIPv6, toRawIP},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Encap: tc.encap, Messages: 12, MsgSize: 2048, MTU: 1024, Impairments: tc.im}
			cis, frames, _, truth := generatedFrames(t, cfg)
			a := analyze.New(analyze.Options{})
			for i, f := range frames {
				data := tc.wrap(f)
				ci := cis[i]
				ci.CaptureLength, ci.Length = len(data), len(data)
				a.Feed(ci, tc.linkType, data)
			}
			r := a.Report()
			diffs := compareTruth(t, withoutWireRates(t, truth), r)
			assert.Empty(t, diffs, "report differs from the truth:\n%s", strings.Join(diffs, "\n"))
			assert.Equal(t, uint64(len(frames)), r.Capture.RoCEPackets, "every frame is RoCE")
			assert.Zero(t, r.Capture.Malformed, "%v", r.Capture.MalformedFrames)
			var bad uint64
			for _, f := range r.Flows {
				bad += uint64(f.ICRC.Bad)
			}
			assert.Equal(t, uint64(len(tc.im.CorruptICRC)), bad, "the corrupted ICRC, found through this link type")
		})
	}
}

// TestLinkTypeSLLOtherProtocol: a cooked capture of something else (ARP)
// is another protocol, not malformed RoCE.
func TestLinkTypeSLLOtherProtocol(t *testing.T) {
	arp := make([]byte, ethHeaderLen+28)
	binary.BigEndian.PutUint16(arp[12:], 0x0806)
	for _, tc := range []struct {
		linkType gplayers.LinkType
		wrap     func([]byte) []byte
	}{{gplayers.LinkTypeLinuxSLL, toSLL}, {gplayers.LinkTypeLinuxSLL2, toSLL2}} {
		t.Run(fmt.Sprint(tc.linkType), func(t *testing.T) {
			a := analyze.New(analyze.Options{})
			data := tc.wrap(arp)
			a.Feed(gopacket.CaptureInfo{CaptureLength: len(data), Length: len(data)}, tc.linkType, data)
			r := a.Report()
			assert.Equal(t, uint64(1), r.Capture.OtherPackets)
			assert.Zero(t, r.Capture.RoCEPackets)
			assert.Zero(t, r.Capture.Malformed)
		})
	}
}

// withoutWireRates drops from a truth the NIC figures computed from the
// frames' wire lengths (the sender's rate around CNPs), which the other
// link-layer header changes.
func withoutWireRates(t *testing.T, truth []byte) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(truth, &m))
	flows, _ := m["flows"].([]any)
	for _, f := range flows {
		if nic, ok := f.(map[string]any)["nic"].(map[string]any); ok {
			delete(nic, "rate_before_cnp_bps")
			delete(nic, "rate_after_cnp_bps")
		}
	}
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}
