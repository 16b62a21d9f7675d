package wrap

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// FuzzWrap wraps any bytes in any chain: Wrap never panics, fails only
// with ErrFrame, and a wrapped frame holds the frame's bytes intact (the
// whole frame behind the outer headers; behind its MAC header and tags
// for MPLS, which relabels its EtherType; behind its MAC addresses for
// QinQ), with the lengths of the chain's overhead.
func FuzzWrap(f *testing.F) {
	frames := readCapture(f, filepath.Join("..", "..", "testdata", "atomic_vlan.pcap"))
	for i, fr := range frames[:4] {
		f.Add(fr.data, []byte{byte(i), byte(i + 4)}, uint16(0), fr.ci.Timestamp.UnixNano())
	}
	v6 := readCapture(f, filepath.Join("..", "..", "testdata", "send_bw_ipv6.pcapng"))
	f.Add(v6[0].data[:80], []byte{8, 7, 6}, uint16(1000), int64(-1))
	v1 := readCapture(f, filepath.Join("..", "..", "testdata", "rocev1.pcap"))
	f.Add(v1[0].data, []byte{8}, uint16(0), int64(0))
	f.Add([]byte{}, []byte{}, uint16(0), int64(0))
	f.Fuzz(func(t *testing.T, frame, kinds []byte, extra uint16, ts int64) {
		var chain Chain
		for _, b := range kinds[:min(len(kinds), 4)] {
			chain = append(chain, Kind(b%byte(len(Kinds()))+1))
		}
		if len(chain) == 0 {
			chain = Chain{ERSPAN2}
		}
		w := &Wrapper{Chain: chain}
		orig := len(frame) + int(extra)
		prefix := []byte("dst")
		out, n, err := w.Wrap(prefix, frame, orig, time.Unix(0, ts))
		if err != nil {
			if !errors.Is(err, ErrFrame) {
				t.Fatalf("%s: error %v does not wrap ErrFrame", chain, err)
			}
			if !bytes.Equal(out, prefix) || n != 0 {
				t.Fatalf("%s: failed Wrap returned %d bytes, length %d", chain, len(out), n)
			}
			return
		}
		if !bytes.HasPrefix(out, prefix) {
			t.Fatalf("%s: dst not kept", chain)
		}
		out = out[len(prefix):]
		if len(out) != len(frame)+chain.Overhead() || n != orig+chain.Overhead() {
			t.Fatalf("%s: %d bytes of %d for a frame of %d of %d", chain, len(out), n, len(frame), orig)
		}
		intact := frame
		switch {
		case chain.Contains(MPLS):
			intact = frame[readFrame(frame).typeAt+2:]
		case chain.Contains(QinQ):
			intact = frame[12:]
		}
		if !bytes.HasSuffix(out, intact) {
			t.Fatalf("%s: the frame's bytes are not intact", chain)
		}
		if got := w.Truth().Chains[chain.String()]; got != 1 {
			t.Fatalf("%s: truth counts %d frames", chain, got)
		}
	})
}
