package layers

import (
	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// UDPZeroChecksum serializes a UDP header with checksum 0, as RoCE v2
// senders write it, even when the options ask for checksums (which the
// ICRC, the IP header and the layers above still get):
//
//	gopacket.SerializeLayers(buf, opts, eth, ip, layers.UDPZeroChecksum{UDP: udp}, bth, …, &layers.ICRC{})
//
// The ICRC does not cover the UDP checksum, so both forms verify.
type UDPZeroChecksum struct {
	*gplayers.UDP
}

var _ gopacket.SerializableLayer = UDPZeroChecksum{}

// SerializeTo writes the UDP header with ComputeChecksums off and the
// Checksum field 0.
func (u UDPZeroChecksum) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	opts.ComputeChecksums = false
	saved := u.Checksum
	u.Checksum = 0
	err := u.UDP.SerializeTo(b, opts)
	u.Checksum = saved
	return err
}
