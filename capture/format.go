package capture

import "strings"

// Container is a capture file layout, as told by its magic number.
type Container uint8

// The containers the Reader understands.
const (
	// FormatUnknown is the zero Container.
	FormatUnknown Container = iota
	// FormatPcap is libpcap's classic format with microsecond timestamps
	// (magic 0xa1b2c3d4).
	FormatPcap
	// FormatPcapNano is the classic format with nanosecond timestamps
	// (magic 0xa1b23c4d).
	FormatPcapNano
	// FormatPcapNG is pcapng (block type 0x0a0d0d0a first).
	FormatPcapNG
)

// String returns "pcap", "pcap-ns", "pcapng" or "unknown".
func (c Container) String() string {
	switch c {
	case FormatPcap:
		return "pcap"
	case FormatPcapNano:
		return "pcap-ns"
	case FormatPcapNG:
		return "pcapng"
	}
	return "unknown"
}

// Format describes a capture file as the Reader found it.
type Format struct {
	// Container is the file layout after decompression.
	Container Container
	// Gzip is set when the file was gzip-compressed.
	Gzip bool
	// BigEndian is set when the file (for pcapng: its first section) is
	// written most significant byte first.
	BigEndian bool
}

// String returns the container name followed by ", big-endian" and ", gzip"
// where they apply: "pcap", "pcap-ns, big-endian", "pcapng, gzip".
func (f Format) String() string {
	var b strings.Builder
	b.WriteString(f.Container.String())
	if f.BigEndian {
		b.WriteString(", big-endian")
	}
	if f.Gzip {
		b.WriteString(", gzip")
	}
	return b.String()
}
