package analyze

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ParseAddr reads an address as Addr.String writes it: an IP address
// (IPv4-mapped ones as IPv4) or "LID n".
func ParseAddr(s string) (Addr, error) {
	if v, ok := strings.CutPrefix(s, "LID "); ok {
		n, err := strconv.ParseUint(v, 10, 16)
		if err != nil {
			return Addr{}, fmt.Errorf("analyze: bad LID %q", s)
		}
		return Addr{LID: uint16(n), IsLID: true}, nil
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return Addr{}, fmt.Errorf("analyze: bad address %q", s)
	}
	return Addr{IP: ip.Unmap()}, nil
}

// SrcAddr returns Src as an Addr (Src stays a string in JSON).
func (f *Flow) SrcAddr() (Addr, error) { return ParseAddr(f.Src) }

// DstAddr returns Dst as an Addr.
func (f *Flow) DstAddr() (Addr, error) { return ParseAddr(f.Dst) }

// Name is the flow as findings name it (Finding.Flow): "SRC → DST QP
// 0x%06x", which roce-dissect --flow accepts as it is.
func (f *Flow) Name() string { return fmt.Sprintf("%s → %s QP 0x%06x", f.Src, f.Dst, f.DestQP) }
