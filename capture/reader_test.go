package capture_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
)

func TestReaderFormats(t *testing.T) {
	eth := testFrames(20, layers.LinkTypeEthernet)
	ethNano := nanoFrames(20, layers.LinkTypeEthernet)
	ib := testFrames(20, linkTypeInfiniBand)
	erf := testFrames(5, linkTypeERF)
	tests := []struct {
		name   string
		file   []byte
		format capture.Format
		want   []testFrame
	}{
		{"pcap µs little-endian", writePcap(t, false, 65535, layers.LinkTypeEthernet, eth),
			capture.Format{Container: capture.FormatPcap}, eth},
		{"pcap ns little-endian", writePcap(t, true, 65535, layers.LinkTypeEthernet, ethNano),
			capture.Format{Container: capture.FormatPcapNano}, ethNano},
		{"pcap µs big-endian", rawPcap(binary.BigEndian, false, 65535, layers.LinkTypeEthernet, recordsOf(eth, false)),
			capture.Format{Container: capture.FormatPcap, BigEndian: true}, eth},
		{"pcap ns big-endian", rawPcap(binary.BigEndian, true, 65535, layers.LinkTypeEthernet, recordsOf(ethNano, true)),
			capture.Format{Container: capture.FormatPcapNano, BigEndian: true}, ethNano},
		{"pcap InfiniBand, snap length 0", writePcap(t, false, 0, linkTypeInfiniBand, ib),
			capture.Format{Container: capture.FormatPcap}, ib},
		{"pcap ERF", writePcap(t, false, 65535, linkTypeERF, erf),
			capture.Format{Container: capture.FormatPcap}, erf},
		{"pcapng NgWriter", writeNg(t, []layers.LinkType{layers.LinkTypeEthernet}, ethNano),
			capture.Format{Container: capture.FormatPcapNG}, ethNano},
		{"pcapng little-endian", ngFile(binary.LittleEndian, linkTypeInfiniBand, ib).buf,
			capture.Format{Container: capture.FormatPcapNG}, ib},
		{"pcapng big-endian", ngFile(binary.BigEndian, linkTypeInfiniBand, ib).buf,
			capture.Format{Container: capture.FormatPcapNG, BigEndian: true}, ib},
		{"pcap header only", writePcap(t, false, 65535, layers.LinkTypeEthernet, nil),
			capture.Format{Container: capture.FormatPcap}, nil},
		{"pcapng headers only", ngFile(binary.LittleEndian, layers.LinkTypeEthernet, nil).buf,
			capture.Format{Container: capture.FormatPcapNG}, nil},
	}
	for _, tc := range tests {
		for _, gzipped := range []bool{false, true} {
			name, file, format := tc.name, tc.file, tc.format
			if gzipped {
				name, file, format.Gzip = name+", gzip", gz(t, file), true
			}
			t.Run(name, func(t *testing.T) {
				for _, short := range []bool{false, true} {
					var src io.Reader = bytes.NewReader(file)
					if short {
						src = oneByteReader{src}
					}
					r, err := capture.NewReader(src)
					require.NoError(t, err)
					assert.Equal(t, format, r.Format())
					got, err := readAll(t, r)
					require.ErrorIs(t, err, io.EOF)
					require.Len(t, got, len(tc.want))
					requireFrames(t, tc.want, got)
					assert.Equal(t, int64(len(tc.file)), r.Offset(), "offset at the end")
					_, data, _, err := r.Next()
					assert.Nil(t, data)
					assert.Equal(t, io.EOF, err, "EOF again")
					require.NoError(t, r.Close())
				}
			})
		}
	}
}

func TestReaderOffset(t *testing.T) {
	frames := testFrames(10, layers.LinkTypeEthernet)
	t.Run("pcap", func(t *testing.T) {
		r := mustReader(t, writePcap(t, false, 65535, layers.LinkTypeEthernet, frames))
		offs := pcapOffsets(frames)
		assert.Equal(t, offs[0], r.Offset(), "after the file header")
		for i := range frames {
			_, _, _, err := r.Next()
			require.NoError(t, err)
			assert.Equal(t, offs[i+1], r.Offset(), "after frame %d", i)
		}
	})
	t.Run("pcapng", func(t *testing.T) {
		b := ngFile(binary.LittleEndian, layers.LinkTypeEthernet, frames)
		r := mustReader(t, b.buf)
		for i := range frames {
			_, _, _, err := r.Next()
			require.NoError(t, err)
			end := int64(len(b.buf))
			if i+3 < len(b.offs) {
				end = b.offs[i+3] // SHB, IDB, then one EPB per frame
			}
			assert.Equal(t, end, r.Offset(), "after frame %d", i)
		}
	})
}

func TestPcapNGTwoInterfaces(t *testing.T) {
	frames := testFrames(12, layers.LinkTypeEthernet)
	for i := range frames {
		if i%3 == 1 {
			frames[i].ifIndex, frames[i].linkType = 1, linkTypeInfiniBand
		}
	}
	file := writeNg(t, []layers.LinkType{layers.LinkTypeEthernet, linkTypeInfiniBand}, frames)
	for _, f := range [][]byte{file, gz(t, file)} {
		r := mustReader(t, f)
		got, err := readAll(t, r)
		require.ErrorIs(t, err, io.EOF)
		require.Len(t, got, len(frames))
		requireFrames(t, frames, got)
	}
}

func TestPcapNGSections(t *testing.T) {
	// Two files back to back: a little-endian Ethernet section, then a
	// big-endian InfiniBand one with two interfaces.
	eth := testFrames(3, layers.LinkTypeEthernet)
	ib := testFrames(4, linkTypeInfiniBand)
	ib[1].ifIndex, ib[1].linkType = 1, layers.LinkTypeRaw
	second := &ngBuilder{o: binary.BigEndian}
	second.shb().idb(linkTypeInfiniBand, 0).idb(layers.LinkTypeRaw, 0)
	for _, f := range ib {
		second.epb(f)
	}
	file := append(writeNg(t, []layers.LinkType{layers.LinkTypeEthernet}, eth), second.buf...)
	r := mustReader(t, file)
	assert.Equal(t, capture.Format{Container: capture.FormatPcapNG}, r.Format())
	got, err := readAll(t, r)
	require.ErrorIs(t, err, io.EOF)
	want := append(append([]testFrame{}, eth...), ib...)
	require.Len(t, got, len(want))
	requireFrames(t, want, got)
}

func TestPcapNGOtherBlocks(t *testing.T) {
	// Blocks that carry no frames are skipped, frames with options read, a
	// simple packet block read, whatever the byte order.
	for _, o := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		t.Run(o.String(), func(t *testing.T) {
			frames := testFrames(4, linkTypeInfiniBand)
			b := &ngBuilder{o: o}
			// The snap length cuts the simple packet block's frame.
			snap := uint32(len(frames[3].data))
			b.shb().idb(linkTypeInfiniBand, snap, b.opt(9, []byte{6}), b.opt(2, []byte("mlx5_0")))
			flags := o.AppendUint32(nil, 1)
			b.epb(frames[0], b.opt(1, []byte("a comment")), b.opt(2, flags), b.opt(4, bytes.Repeat([]byte{9}, 8)))
			// name resolution block: an IPv4 record and the end record
			nrb := o.AppendUint16(nil, 1)
			nrb = o.AppendUint16(nrb, 4+9)
			nrb = append(nrb, 192, 0, 2, 1)
			nrb = append(nrb, "host.test"...)
			nrb = append(nrb, 0, 0, 0)
			nrb = append(nrb, 0, 0, 0, 0)
			b.block(4, nrb)
			b.epb(frames[1])
			b.block(5, append(b.u32s(0, 0, 0), b.options([][]byte{b.opt(4, b.u32s(0, 10))})...)) // statistics
			b.block(10, append(b.u32s(0x544c534b, 4), 1, 2, 3, 4))                               // decryption secrets
			b.block(0x00000bad, append(b.u32s(32473), "custom"...))                              // custom block
			b.block(0x12345678, make([]byte, 100))                                               // unknown block
			b.epb(frames[2])
			frames[3].origLen = 2 * len(frames[3].data)
			b.spb(frames[3].origLen, frames[3].data) // no timestamp, interface 0
			b.idb(layers.LinkTypeEthernet, 0)        // a second interface, late
			eth := testFrames(1, layers.LinkTypeEthernet)[0]
			eth.ifIndex = 1
			b.epb(eth)
			want := append(frames[:3:3], testFrame{}, eth)

			r := mustReader(t, b.buf)
			got, err := readAll(t, r)
			require.ErrorIs(t, err, io.EOF)
			require.Len(t, got, 5)
			requireFrames(t, want[:3], got[:3])
			spb := got[3]
			assert.Equal(t, frames[3].data, spb.data)
			assert.Equal(t, frames[3].origLen, spb.origLen)
			assert.Equal(t, linkTypeInfiniBand, spb.linkType)
			requireFrames(t, want[4:], got[4:])
			assert.Equal(t, int64(len(b.buf)), r.Offset())
		})
	}
}

func TestPcapCapLenAboveLength(t *testing.T) {
	// libpcap reads a captured length above the original length; so do we.
	frames := testFrames(3, layers.LinkTypeEthernet)
	recs := recordsOf(frames, false)
	recs[1].origLen = 10
	frames[1].origLen = 10
	for _, o := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		r := mustReader(t, rawPcap(o, false, 65535, layers.LinkTypeEthernet, recs))
		got, err := readAll(t, r)
		require.ErrorIs(t, err, io.EOF)
		require.Len(t, got, 3)
		requireFrames(t, frames, got)
	}
}

func TestLargestFrame(t *testing.T) {
	// A frame of exactly MaxCaptureLength bytes is read, with or without a
	// snap length, in pcap and pcapng.
	big := testFrame{ts: time.Unix(1, 0).UTC(), data: frameData(1, capture.MaxCaptureLength), origLen: capture.MaxCaptureLength}
	frames := append(testFrames(2, layers.LinkTypeEthernet), big)
	frames[2].linkType = layers.LinkTypeEthernet
	frames = append(frames, testFrames(1, layers.LinkTypeEthernet)...)
	files := map[string][]byte{
		"pcap snap 0":      writePcap(t, false, 0, layers.LinkTypeEthernet, frames),
		"pcap snap 256KiB": writePcap(t, false, capture.MaxCaptureLength, layers.LinkTypeEthernet, frames),
		"pcap snap 1GiB":   writePcap(t, false, 1<<30, layers.LinkTypeEthernet, frames),
		"pcapng":           writeNg(t, []layers.LinkType{layers.LinkTypeEthernet}, frames),
	}
	for name, file := range files {
		t.Run(name, func(t *testing.T) {
			got, err := readAll(t, mustReader(t, file))
			require.ErrorIs(t, err, io.EOF)
			require.Len(t, got, len(frames))
			requireFrames(t, frames, got)
		})
	}
}

func TestNextAllocs(t *testing.T) {
	frames := testFrames(400, layers.LinkTypeEthernet)
	flagged := &ngBuilder{o: binary.LittleEndian}
	flagged.shb().idb(layers.LinkTypeEthernet, 0)
	for _, f := range frames {
		flagged.epb(f, flagged.opt(2, flagged.u32s(1)), flagged.opt(1, []byte("comment")))
	}
	pcap := writePcap(t, false, 65535, layers.LinkTypeEthernet, frames)
	files := map[string][]byte{
		"pcap":                 pcap,
		"pcap big-endian":      rawPcap(binary.BigEndian, true, 65535, layers.LinkTypeEthernet, recordsOf(frames, true)),
		"pcapng":               writeNg(t, []layers.LinkType{layers.LinkTypeEthernet, linkTypeInfiniBand}, frames),
		"pcapng with options":  flagged.buf,
		"pcap gzip":            gz(t, pcap),
		"pcapng with opts gz":  gz(t, flagged.buf),
		"pcap ERF link type":   writePcap(t, false, 65535, linkTypeERF, frames),
		"pcapng one interface": ngFile(binary.BigEndian, linkTypeInfiniBand, frames).buf,
	}
	for name, file := range files {
		t.Run(name, func(t *testing.T) {
			r := mustReader(t, file)
			for range 50 { // let the buffers grow
				_, _, _, err := r.Next()
				require.NoError(t, err)
			}
			allocs := testing.AllocsPerRun(300, func() {
				if _, _, _, err := r.Next(); err != nil {
					t.Fatal(err)
				}
			})
			assert.Zero(t, allocs, "allocations per frame")
		})
	}
}

func TestOpen(t *testing.T) {
	frames := testFrames(5, layers.LinkTypeEthernet)
	file := writePcap(t, false, 65535, layers.LinkTypeEthernet, frames)
	dir := t.TempDir()

	t.Run("file", func(t *testing.T) {
		// A gzip'd file with a misleading name: the magic decides.
		name := filepath.Join(dir, "capture.pcapng")
		require.NoError(t, os.WriteFile(name, gz(t, file), 0o600))
		r, err := capture.Open(name)
		require.NoError(t, err)
		assert.Equal(t, "pcap, gzip", r.Format().String())
		got, err := readAll(t, r)
		require.ErrorIs(t, err, io.EOF)
		requireFrames(t, frames, got)
		require.Len(t, got, len(frames))
		require.NoError(t, r.Close())
		require.NoError(t, r.Close(), "second Close")
		_, _, _, err = r.Next()
		require.ErrorIs(t, err, os.ErrClosed)
	})
	t.Run("missing", func(t *testing.T) {
		_, err := capture.Open(filepath.Join(dir, "nope.pcap"))
		require.ErrorIs(t, err, fs.ErrNotExist)
		assert.Contains(t, err.Error(), "capture: open ")
	})
	t.Run("not a capture", func(t *testing.T) {
		name := filepath.Join(dir, "text.pcap")
		require.NoError(t, os.WriteFile(name, []byte("hello, world\n"), 0o600))
		_, err := capture.Open(name)
		require.ErrorIs(t, err, capture.ErrNotCapture)
		assert.EqualError(t, err, "capture: not a pcap or pcapng file (magic 0x68656c6c)")
	})
	t.Run("stdin", func(t *testing.T) {
		pr, pw, err := os.Pipe()
		require.NoError(t, err)
		stdin := os.Stdin
		os.Stdin = pr
		t.Cleanup(func() { os.Stdin = stdin; pr.Close() })
		go func() {
			pw.Write(file)
			pw.Close()
		}()
		r, err := capture.Open("-")
		require.NoError(t, err)
		got, err := readAll(t, r)
		require.ErrorIs(t, err, io.EOF)
		requireFrames(t, frames, got)
		require.Len(t, got, len(frames))
		require.NoError(t, r.Close())
		// Close leaves standard input open.
		_, err = pr.Read(make([]byte, 1))
		assert.ErrorIs(t, err, io.EOF)
	})
}

func TestFormatString(t *testing.T) {
	tests := []struct {
		f    capture.Format
		want string
	}{
		{capture.Format{}, "unknown"},
		{capture.Format{Container: capture.FormatPcap}, "pcap"},
		{capture.Format{Container: capture.FormatPcapNano, BigEndian: true}, "pcap-ns, big-endian"},
		{capture.Format{Container: capture.FormatPcapNG, Gzip: true}, "pcapng, gzip"},
		{capture.Format{Container: capture.FormatPcap, BigEndian: true, Gzip: true}, "pcap, big-endian, gzip"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.f.String())
	}
}

// realCaptures is where the shared captures live, relative to this package.
const realCaptures = "../../../shared/captures"

func TestRealCaptures(t *testing.T) {
	if _, err := os.Stat(realCaptures); err != nil {
		t.Skipf("no shared captures: %v", err)
	}
	tests := []struct {
		file     string
		frames   int
		linkType layers.LinkType
	}{
		{"softroce/rdma_cm.pcap", 96, layers.LinkTypeEthernet},
		{"softroce/rping.pcap", 65, layers.LinkTypeEthernet},
		{"softroce/rdma_write_bw.pcap", 60, layers.LinkTypeEthernet},
		{"softroce/rdma_read_bw.pcap", 60, layers.LinkTypeEthernet},
		{"softroce/rdma_send_bw.pcap", 50, layers.LinkTypeEthernet},
		{"softroce/rdma_write_lat.pcap", 45, layers.LinkTypeEthernet},
		{"softroce/rdma_read_lat.pcap", 38, layers.LinkTypeEthernet},
		{"softroce/rdma_atomic_bw.pcap", 48, layers.LinkTypeEthernet},
		{"softroce/pingpong_rc.pcap", 31, layers.LinkTypeEthernet},
		{"softroce/pingpong_uc.pcap", 21, layers.LinkTypeEthernet},
		{"softroce/pingpong_ud.pcap", 21, layers.LinkTypeEthernet},
		{"ib-erf/infiniband.pcap", 43, linkTypeERF},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			name := filepath.Join(realCaptures, filepath.FromSlash(tc.file))
			st, err := os.Stat(name)
			if errors.Is(err, fs.ErrNotExist) {
				t.Skipf("%s absent", name)
			}
			require.NoError(t, err)
			r, err := capture.Open(name)
			require.NoError(t, err)
			defer r.Close()
			assert.Equal(t, capture.Format{Container: capture.FormatPcap}, r.Format())
			n := 0
			var last time.Time
			for {
				ci, data, lt, err := r.Next()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				n++
				assert.Equal(t, tc.linkType, lt)
				assert.Len(t, data, ci.CaptureLength)
				assert.LessOrEqual(t, ci.CaptureLength, ci.Length)
				assert.False(t, ci.Timestamp.Before(last), "frame %d goes back in time", n)
				last = ci.Timestamp
			}
			assert.Equal(t, tc.frames, n)
			assert.Equal(t, st.Size(), r.Offset())

			// The same file gzip-compressed reads the same.
			raw, err := os.ReadFile(name)
			require.NoError(t, err)
			want, err := readAll(t, mustReader(t, raw))
			require.ErrorIs(t, err, io.EOF)
			got, err := readAll(t, mustReader(t, gz(t, raw)))
			require.ErrorIs(t, err, io.EOF)
			require.Equal(t, want, got)
		})
	}
}

// TestPcapgoRoundTrip checks that what the Reader returns is what pcapgo's
// own reader returns, on files pcapgo handles.
func TestPcapgoRoundTrip(t *testing.T) {
	frames := testFrames(30, layers.LinkTypeEthernet)
	file := writePcap(t, true, 65535, layers.LinkTypeEthernet, frames)
	pr, err := pcapgo.NewReader(bytes.NewReader(file))
	require.NoError(t, err)
	r := mustReader(t, file)
	for {
		wantData, wantCI, wantErr := pr.ReadPacketData()
		ci, data, lt, err := r.Next()
		if wantErr == io.EOF {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		require.NoError(t, wantErr)
		require.NoError(t, err)
		assert.Equal(t, wantData, data)
		assert.Equal(t, gopacket.CaptureInfo{Timestamp: wantCI.Timestamp, CaptureLength: wantCI.CaptureLength, Length: wantCI.Length}, ci)
		assert.Equal(t, pr.LinkType(), lt)
	}
}
