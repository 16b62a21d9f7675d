// Package capture reads every capture file a user is likely to have: pcap
// with microsecond or nanosecond timestamps in either byte order, pcapng with
// any number of interfaces and link types, ERF records inside pcap
// (LINKTYPE_ERF, 197), and any of these gzip-compressed. The format is
// sniffed from the magic number, never from the file name:
//
//	a1b2c3d4  pcap, microseconds      a1b23c4d  pcap, nanoseconds
//	0a0d0d0a  pcapng                  1f8b      gzip around any of them
//
// A Reader yields (gopacket.CaptureInfo, data, link type) triples. Next
// reuses its buffers: data is valid until the next call, and reading costs
// no allocation per frame once the buffers have grown. A classic pcap file
// can instead be read into the caller's buffers (ReadChunks), whose frames
// stay valid as long as the caller keeps the buffer. Ahead shows, without
// reading them, the frames of a classic pcap file the buffer already holds
// after the last one returned, for a caller that prepares for them. Link
// types are passed on, not judged: which ones to decode is the caller's
// business.
//
// # Parsing
//
// pcap file headers and all of pcapng are parsed by gopacket's pcapgo. pcapgo
// trusts the lengths in a file, so for pcapng a framer between the stream and
// pcapgo checks each block (both lengths, captured lengths, interface ids,
// options) before pcapgo sees it. pcap record headers are read here: pcapgo
// rejects a captured length above the original length, which libpcap reads,
// and copies each frame where a slice of the read buffer does.
//
// # Limits and judgement calls
//
//   - A captured length above MaxCaptureLength (256 KiB, libpcap's maximum
//     snap length) or above the snap length of its file or interface is
//     corrupt (a snap length of 0 means none). No buffer is ever sized from
//     a length field without that bound.
//   - A captured length above the original length is returned as it is, as
//     libpcap does; only the bounds above make it corrupt.
//   - pcapng name resolution blocks, decryption secrets, statistics and
//     packet options are checked for shape and skipped. A simple packet
//     block's captured length is its original length cut to the first
//     interface's snap length, and must fit in the block.
//   - pcap versions other than 2.4 and pcapng versions other than 1.0 are
//     corrupt, as pcapgo has them.
//
// # Errors
//
// Every error about the data is an *Error naming the byte offset (in the
// decompressed stream) of the record or block at fault, and wrapping one of
// ErrNotCapture, ErrEmpty, ErrTruncated or ErrCorrupt:
//
//	capture: not a pcap or pcapng file (magic 0x7f454c46)
//	capture: not a pcap or pcapng file (magic 0x5452534e): a Sniffer (DOS) capture: convert it with editcap -F pcap FILE OUT.pcap
//	capture: truncated record at byte offset 4120: packet data has 60 of 1514 bytes
//	capture: corrupt record at byte offset 40: captured length 70000 exceeds the snap length 65535
//	capture: corrupt block at byte offset 212: enhanced packet block length 13 is not a multiple of 4
//	capture: truncated gzip stream at byte offset 8192: the compressed data is cut short
//
// Next returns every frame before the damage first, then the error, and then
// the same error again. The messages do not name the file: the caller does.
package capture
