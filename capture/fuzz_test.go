package capture_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/capture"
)

// FuzzReader reads arbitrary bytes as a capture: it must not panic, every
// Next must either make progress or fail, every error must be an *Error
// wrapping one of the package's sentinels, and frames must respect the
// limits.
func FuzzReader(f *testing.F) {
	frames := testFrames(4, layers.LinkTypeEthernet)
	ib := testFrames(3, linkTypeInfiniBand)
	ib[1].ifIndex = 1
	pcap := writePcap(f, false, 65535, layers.LinkTypeEthernet, frames)
	ng := writeNg(f, []layers.LinkType{layers.LinkTypeEthernet, linkTypeInfiniBand}, ib)
	other := &ngBuilder{o: binary.BigEndian}
	other.shb().idb(linkTypeInfiniBand, 128, other.opt(9, []byte{0x86})).epb(ib[0], other.opt(1, []byte("x")))
	other.block(4, []byte{1, 0, 0, 5, 10, 0, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0}).spb(60, make([]byte, 60)).block(5, other.u32s(0, 0, 0))
	seeds := [][]byte{
		pcap,
		writePcap(f, true, 0, linkTypeERF, frames[:2]),
		rawPcap(binary.BigEndian, false, 96, linkTypeInfiniBand, recordsOf(ib, false)),
		ng,
		other.buf,
		gz(f, pcap),
		gz(f, ng),
		pcap[:len(pcap)-10],
		ng[:len(ng)-10],
		gz(f, pcap)[:40],
		nil,
		[]byte("not a capture at all"),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := capture.NewReader(bytes.NewReader(b))
		if err != nil {
			checkFuzzError(t, err)
			return
		}
		defer r.Close()
		last := r.Offset()
		for {
			ci, data, _, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				checkFuzzError(t, err)
				_, _, _, again := r.Next()
				if again != err {
					t.Fatalf("second Next returned %v after %v", again, err)
				}
				break
			}
			if len(data) != ci.CaptureLength || len(data) > capture.MaxCaptureLength {
				t.Fatalf("data of %d bytes, captured length %d", len(data), ci.CaptureLength)
			}
			off := r.Offset()
			if off <= last {
				t.Fatalf("no progress: offset %d after %d", off, last)
			}
			last = off
		}
	})
}

func checkFuzzError(t *testing.T, err error) {
	t.Helper()
	var ce *capture.Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %q (%T) is not a *capture.Error", err, err)
	}
	if ce.Offset < 0 {
		t.Fatalf("negative offset in %q", err)
	}
	if !errors.Is(err, capture.ErrNotCapture) && !errors.Is(err, capture.ErrTruncated) && !errors.Is(err, capture.ErrCorrupt) {
		t.Fatalf("error %q wraps no sentinel", err)
	}
}
