package export

import (
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go/format"
)

// fastSnappy is the SNAPPY codec with the Snappy-compatible block
// encoder of github.com/klauspost/compress/s2 at its fast level:
// parquet-go's own SNAPPY codec uses the slower "better" level, for a
// packets file only slightly smaller (the flows table, which it shrinks
// more and which is written once, keeps it). Any Snappy decoder reads
// the blocks.
type fastSnappy struct{}

// String names the codec.
func (fastSnappy) String() string { return "SNAPPY" }

// CompressionCodec is the codec's code in the Parquet format.
func (fastSnappy) CompressionCodec() format.CompressionCodec { return format.Snappy }

// Encode compresses src into dst (reallocated when too small).
func (fastSnappy) Encode(dst, src []byte) ([]byte, error) { return s2.EncodeSnappy(dst, src), nil }

// Decode decompresses src into dst (reallocated when too small).
func (fastSnappy) Decode(dst, src []byte) ([]byte, error) { return snappy.Decode(dst, src) }
