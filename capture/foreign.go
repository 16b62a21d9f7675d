package capture

import "bytes"

// foreignFormats are the file formats other than pcap and pcapng that a
// capture is often saved in, each told by the bytes it starts with (as
// Wireshark's wiretap tells them), with what to do about it. One entry
// per format; the first whose lead matches names the file.
var foreignFormats = []struct {
	lead []byte
	what string
}{
	{[]byte("TRSNIFF data    \x1a"), "a Sniffer (DOS) capture: convert it with editcap -F pcap FILE OUT.pcap"},
	{[]byte("XCP\x00"), "a NetXRay or Windows Sniffer capture: convert it with editcap -F pcap FILE OUT.pcap"},
	{[]byte("snoop\x00\x00\x00"), "a Solaris snoop capture: convert it with editcap -F pcap FILE OUT.pcap"},
	{[]byte("GMBU"), "a Microsoft Network Monitor 2.x capture: convert it with editcap -F pcap FILE OUT.pcap"},
	{[]byte("RTSS"), "a Microsoft Network Monitor 1.x capture: convert it with editcap -F pcap FILE OUT.pcap"},
	{[]byte{0xa1, 0xb2, 0xcd, 0x34}, "a pcap with Kuznetzov's modified record headers (big-endian): convert it with editcap -F pcap FILE OUT.pcap"},
	{[]byte{0x34, 0xcd, 0xb2, 0xa1}, "a pcap with Kuznetzov's modified record headers: convert it with editcap -F pcap FILE OUT.pcap"},
	{[]byte("BZh"), "bzip2-compressed (only gzip is read): decompress it first (bunzip2 -k FILE)"},
	{[]byte("\xfd7zXZ\x00"), "xz-compressed (only gzip is read): decompress it first (unxz -k FILE)"},
	{[]byte{0x28, 0xb5, 0x2f, 0xfd}, "zstd-compressed (only gzip is read): decompress it first (zstd -d FILE)"},
	{[]byte{0x04, 0x22, 0x4d, 0x18}, "lz4-compressed (only gzip is read): decompress it first (lz4 -d FILE)"},
	{[]byte("PK\x03\x04"), "a zip archive: extract the capture from it first (unzip FILE)"},
}

// maxForeignLead is the longest lead of foreignFormats.
const maxForeignLead = 17

// foreignFormat says what the file starting with lead is, when it is one
// of foreignFormats, and "" otherwise.
func foreignFormat(lead []byte) string {
	for _, f := range foreignFormats {
		if bytes.HasPrefix(lead, f.lead) {
			return f.what
		}
	}
	return ""
}
