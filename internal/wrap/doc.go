// Package wrap wraps Ethernet frames the way switch mirrors and overlay
// networks deliver them to a capture: in ERSPAN types I, II and III
// sessions (GRE), VXLAN, Geneve and NVGRE tunnels, an 802.1ad S-tag
// (QinQ) or an MPLS label stack, and in nestings of these.
//
// It serves the tests that re-wrap real captures and compare what the
// analyzer finds in them with what it finds in the unwrapped capture,
// and roce-synth's --wrap flag.
//
// A Chain names the nesting outermost first, as the headers follow each
// other on the wire: Parse("erspan2,vxlan") is a switch mirroring, in
// ERSPAN II, the underlay of a VXLAN overlay. A Wrapper applies the
// chain innermost first (VXLAN, then ERSPAN II around the VXLAN frame).
// Each Kind adds a fixed number of bytes (Kind.Overhead; its constant's
// documentation gives it).
//
// Captures are often cut to a snap length. Wrap takes the captured bytes
// and the wire length of a frame: the outer headers declare the wire
// length, the captured bytes stay as they are and the wrapped frame's
// wire length is the frame's plus the chain's overhead. A collector
// capturing a mirror session with a snap length cuts the outer frame;
// cutting the wrapped frame to N bytes is cutting the frame to N minus
// the overhead inside its headers.
//
// The Wrapper's Truth counts the frames per chain and the tunnels they
// went through (outer addresses, ERSPAN session ID, VNI, VSID, S-VLAN
// ID, MPLS label): the generator's truth of a capture's encapsulations.
package wrap
