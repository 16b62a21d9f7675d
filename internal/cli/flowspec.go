package cli

import (
	"fmt"
	"strings"
)

// parseFlowSpec reads --flow: SRC,DST,QP, or a flow as findings and the
// report name it ("10.0.0.1 → 10.0.0.2 QP 0x000011", "->" for the
// arrow), so that a finding's flow can be pasted as it is.
func parseFlowSpec(spec string) (*flowFilter, error) {
	var parts []string
	if arrow := strings.NewReplacer("→", ",", "->", ","); strings.Contains(spec, "→") || strings.Contains(spec, "->") {
		s := arrow.Replace(spec)
		src, rest, _ := strings.Cut(s, ",")
		dst, qp, ok := strings.Cut(strings.TrimSpace(rest), " QP ")
		if !ok {
			return nil, fmt.Errorf("--flow %q: want SRC,DST,QP or \"SRC → DST QP N\" as findings name flows", spec)
		}
		parts = []string{src, dst, qp}
	} else {
		parts = strings.Split(spec, ",")
	}
	if len(parts) != 3 {
		return nil, fmt.Errorf("--flow %q: want SRC,DST,QP (e.g. 10.0.0.1,10.0.0.2,0x11) or \"SRC → DST QP N\" as findings name flows", spec)
	}
	n, err := parseQP(strings.TrimSpace(parts[2]))
	if err != nil {
		return nil, fmt.Errorf("--flow: %v", err)
	}
	return &flowFilter{src: normAddr(parts[0]), dst: normAddr(parts[1]), qp: n}, nil
}
