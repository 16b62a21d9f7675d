package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// writeSnifferNote says, once, that the capture tool overwrote the UDP
// source port of RoCE v2 packets (the NIC sniffer writes 4791) and that
// their ICRCs were verified against the ports recovered from them.
func writeSnifferNote(w io.Writer, c analyze.Capture) {
	if c.ICRCPortRewritten == 0 {
		return
	}
	fmt.Fprintf(w, "  UDP source port rewritten by the capture tool (NIC sniffer): the ICRCs of %d packets captured with source port 4791 verify with the original (ECMP entropy) port recovered from each (SRC PORT per flow)\n", c.ICRCPortRewritten)
}

// srcPortCell shows the source ports recovered from a flow's ICRCs ("-"
// for none): the ECMP path its packets took.
func srcPortCell(f *analyze.Flow) cell {
	if len(f.ICRC.OriginalSrcPorts) == 0 {
		return cell{text: "-", left: true}
	}
	return cell{text: srcPortList(f, ","), left: true}
}

// srcPortList is the source ports recovered from a flow's ICRCs, in
// decimal, separated by sep ("" for none).
func srcPortList(f *analyze.Flow, sep string) string {
	ports := make([]string, len(f.ICRC.OriginalSrcPorts))
	for i, p := range f.ICRC.OriginalSrcPorts {
		ports[i] = strconv.Itoa(int(p))
	}
	return strings.Join(ports, sep)
}
