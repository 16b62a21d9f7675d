package cli

import (
	"fmt"
	"strconv"
	"strings"
)

// dscpPriorityFlag parses --dscp-priority DSCP=PRIORITY[,…] (repeatable):
// the 802.1p priority of untagged packets of each DSCP named, the others
// keeping DSCP>>3.
type dscpPriorityFlag struct{ m *[]uint8 }

func (d dscpPriorityFlag) String() string { return "" }

func (d dscpPriorityFlag) Set(v string) error {
	if *d.m == nil {
		*d.m = make([]uint8, 64)
		for i := range *d.m {
			(*d.m)[i] = uint8(i >> 3)
		}
	}
	for item := range strings.SplitSeq(v, ",") {
		k, p, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("want DSCP=PRIORITY, got %q", item)
		}
		dscp, err := strconv.ParseUint(strings.TrimSpace(k), 10, 8)
		if err != nil || dscp > 63 {
			return fmt.Errorf("DSCP %q: want 0…63", k)
		}
		prio, err := strconv.ParseUint(strings.TrimSpace(p), 10, 8)
		if err != nil || prio > 7 {
			return fmt.Errorf("priority %q: want 0…7", p)
		}
		(*d.m)[dscp] = uint8(prio)
	}
	return nil
}
