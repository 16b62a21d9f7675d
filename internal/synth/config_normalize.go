package synth

import (
	"fmt"
	"slices"
	"strings"
)

// normalize fills in defaults and checks the configuration: it runs
// configSteps in order and returns the first error.
func (c *Config) normalize() error {
	for _, step := range configSteps {
		if err := step(c); err != nil {
			return err
		}
	}
	return nil
}

// configSteps are the steps of normalize, in order: a step fills in the
// defaults of some fields and checks them, or checks fields filled in
// before it.
var configSteps = [...]func(*Config) error{
	(*Config).normalizeScenario,
	(*Config).normalizeSizes,
	(*Config).normalizeCounts,
	(*Config).normalizeRate,
	(*Config).checkFields,
	(*Config).checkRules,
	(*Config).normalizeNIC,
	func(c *Config) error { return c.Pause.normalize(c) },
	(*Config).checkWrap,
	(*Config).checkArtefacts,
}

// normalizeScenario defaults the scenario to write-bw and checks it.
func (c *Config) normalizeScenario() error {
	if c.Scenario == "" {
		c.Scenario = ScenarioWriteBW
	}
	if !slices.Contains(Scenarios(), c.Scenario) {
		return fmt.Errorf("synth: %w: unknown scenario %q (want one of %s)", ErrConfig, c.Scenario, strings.Join(Scenarios(), ", "))
	}
	return nil
}

// normalizeSizes fills in and checks the path MTU and the message size
// (none for mix; a UD message fits in one packet).
func (c *Config) normalizeSizes() error {
	if c.MTU == 0 {
		c.MTU = DefaultMTU
	}
	if _, ok := mtuEnum(c.MTU); !ok {
		return fmt.Errorf("synth: %w: path MTU %d (want 256, 512, 1024, 2048 or 4096)", ErrConfig, c.MTU)
	}
	if c.MsgSize == 0 && c.Scenario != ScenarioMix {
		c.MsgSize = DefaultMsgSize
		if c.Scenario == ScenarioUD {
			c.MsgSize = min(512, c.MTU)
		}
	}
	if c.MsgSize < 0 || c.MsgSize > 1<<30 {
		return fmt.Errorf("synth: %w: message size %d", ErrConfig, c.MsgSize)
	}
	if c.Scenario == ScenarioUD && c.MsgSize > c.MTU {
		return fmt.Errorf("synth: %w: UD message size %d exceeds the path MTU %d", ErrConfig, c.MsgSize, c.MTU)
	}
	return nil
}

// normalizeCounts fills in and checks the number of messages, and of
// packets and QPs of mix.
func (c *Config) normalizeCounts() error {
	if c.Messages == 0 {
		c.Messages = DefaultMessages
	}
	if c.Messages < 0 {
		return fmt.Errorf("synth: %w: %d messages", ErrConfig, c.Messages)
	}
	if c.Packets == 0 {
		c.Packets = DefaultPackets
	}
	if c.QPs == 0 {
		c.QPs = DefaultQPs
	}
	if c.QPs < 0 || c.QPs > 1<<16 {
		return fmt.Errorf("synth: %w: %d QPs", ErrConfig, c.QPs)
	}
	if c.Scenario == ScenarioMix && c.Packets < 5*c.QPs {
		return fmt.Errorf("synth: %w: mix needs at least 5 packets per QP (CM exchange): %d packets for %d QPs", ErrConfig, c.Packets, c.QPs)
	}
	return nil
}

// normalizeRate fills in the seed and the link rate, and checks the rate.
func (c *Config) normalizeRate() error {
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.Gbps == 0 {
		c.Gbps = DefaultGbps
	}
	if c.Gbps < 0.001 || c.Gbps > 1e6 {
		return fmt.Errorf("synth: %w: rate %g Gbit/s", ErrConfig, c.Gbps)
	}
	return nil
}

// checkFields checks the snap length, the starting PSN, the
// encapsulation and the mix operation.
func (c *Config) checkFields() error {
	if c.SnapLen < 0 {
		return fmt.Errorf("synth: %w: snap length %d", ErrConfig, c.SnapLen)
	}
	if c.StartPSN != nil && *c.StartPSN > psnMask {
		return fmt.Errorf("synth: %w: starting PSN 0x%x exceeds 24 bits", ErrConfig, *c.StartPSN)
	}
	if int(c.Encap) >= len(encapNames) {
		return fmt.Errorf("synth: %w: encapsulation %d", ErrConfig, c.Encap)
	}
	switch c.MixOp {
	case "", "write", "send", "read":
	default:
		return fmt.Errorf("synth: %w: --mix-op %q: want write, send or read", ErrConfig, c.MixOp)
	}
	return nil
}

// configRules are the features that need a scenario or an encapsulation:
// checkRules returns the error of the first rule the configuration breaks.
var configRules = [...]struct {
	breaks func(*Config) bool
	err    func(*Config) error
}{
	{
		func(c *Config) bool { return len(c.ECN) > 0 && !c.Encap.RoCEv2() },
		func(c *Config) error {
			return fmt.Errorf("synth: %w: ECN marking needs RoCE v2 (IP ECN), not %s", ErrConfig, c.Encap)
		},
	},
	{
		func(c *Config) bool { return c.DC && !dcScenario(c.Scenario) },
		func(c *Config) error {
			return fmt.Errorf("synth: %w: DC traffic needs write-bw, read-bw or atomic, not %s", ErrConfig, c.Scenario)
		},
	},
	{
		func(c *Config) bool { return c.UDPPort != 0 && !c.Encap.RoCEv2() },
		func(c *Config) error {
			return fmt.Errorf("synth: %w: a UDP port needs RoCE v2 (UDP), not %s", ErrConfig, c.Encap)
		},
	},
	{
		func(c *Config) bool { return c.SnifferSrcPort && !c.Encap.RoCEv2() },
		func(c *Config) error {
			return fmt.Errorf("synth: %w: the sniffer source port rewrite needs RoCE v2 (UDP), not %s", ErrConfig, c.Encap)
		},
	},
}

// checkRules checks configRules.
func (c *Config) checkRules() error {
	for _, r := range configRules {
		if r.breaks(c) {
			return r.err(c)
		}
	}
	return nil
}

// normalizeNIC normalizes the NIC knobs and checks that the scenario
// takes them: none for mix, and no NAKs (nor timeouts) on UD.
func (c *Config) normalizeNIC() error {
	if err := c.NIC.normalize(); err != nil {
		return err
	}
	if c.Scenario == ScenarioMix && c.NIC.any() {
		return fmt.Errorf("synth: %w: NIC knobs do not apply to mix", ErrConfig)
	}
	if c.Scenario == ScenarioUD && len(c.NAK)+len(c.RNR)+len(c.NIC.Timeout) > 0 {
		return fmt.Errorf("synth: %w: UD has no NAKs", ErrConfig)
	}
	return nil
}
