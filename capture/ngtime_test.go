package capture_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
)

// TestNgFrameTimes: a simple packet block, which has no time, takes the
// time of the frame before it (one before any timed frame keeps the zero
// time), and an if_tsresol of 0 counts seconds (pcapgo takes 0 for "no
// option", microseconds): issue 23 found simple packet blocks dated year
// 1, stretching a capture to 9,223,372,036 s, and whole seconds read as
// microseconds.
func TestNgFrameTimes(t *testing.T) {
	frames := testFrames(3, linkTypeInfiniBand)
	t0, t2 := frames[0].ts, frames[2].ts
	for _, tc := range []struct {
		name  string
		build func(b *ngBuilder)
		want  []time.Time
	}{
		{"SPB between EPBs", func(b *ngBuilder) {
			b.shb().idb(linkTypeInfiniBand, 0).epb(frames[0]).spb(len(frames[1].data), frames[1].data).epb(frames[2])
		}, []time.Time{t0, t0, t2}},
		{"SPB first", func(b *ngBuilder) {
			b.shb().idb(linkTypeInfiniBand, 0).spb(len(frames[1].data), frames[1].data).epb(frames[2]).spb(len(frames[1].data), frames[1].data)
		}, []time.Time{{}, t2, t2}},
		{"if_tsresol 0: seconds", func(b *ngBuilder) {
			b.shb().idb(linkTypeInfiniBand, 0, b.opt(9, []byte{0}))
			body := b.epbBody(0, time.Time{}, uint32(len(frames[0].data)), frames[0].origLen, frames[0].data)
			binary.LittleEndian.PutUint32(body[4:8], 0)
			binary.LittleEndian.PutUint32(body[8:12], 1_700_000_000)
			b.block(6, body)
		}, []time.Time{time.Unix(1_700_000_000, 0)}},
		{"if_tsresol 6: microseconds", func(b *ngBuilder) {
			b.shb().idb(linkTypeInfiniBand, 0, b.opt(9, []byte{6})).epb(frames[0])
		}, []time.Time{t0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &ngBuilder{o: binary.LittleEndian}
			tc.build(b)
			r, err := capture.NewReader(bytes.NewReader(b.buf))
			require.NoError(t, err)
			var got []time.Time
			for {
				ci, _, _, err := r.Next()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				got = append(got, ci.Timestamp)
			}
			require.Len(t, got, len(tc.want))
			for i := range got {
				assert.True(t, tc.want[i].Equal(got[i]), "frame %d: want %s, got %s", i+1, tc.want[i], got[i])
			}
		})
	}
}
