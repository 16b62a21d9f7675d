package cli

import (
	"fmt"
	"io"
)

// writeHexDump writes data as tshark -x does: 16 bytes a line after a
// 4-digit hex offset, then three spaces and the bytes as ASCII ('.' for
// those not printable).
func writeHexDump(w io.Writer, data []byte) {
	var line [80]byte
	for off := 0; off < len(data); off += 16 {
		row := data[off:min(off+16, len(data))]
		b := fmt.Appendf(line[:0], "%04x ", off)
		for i := range 16 {
			if i < len(row) {
				b = fmt.Appendf(b, " %02x", row[i])
			} else {
				b = append(b, "   "...)
			}
		}
		b = append(b, "   "...)
		for _, c := range row {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			b = append(b, c)
		}
		b = append(b, '\n')
		_, _ = w.Write(b)
	}
}
