package synth

import "fmt"

// Artefacts are things real capture tools and stacks do to a capture
// that the analyzer must see through (PROTOCOL.md, "What real capture
// tools do to packets").
type Artefacts struct {
	// CutFrames > 0 cuts every frame longer than CutFrames bytes to that
	// length and records it with original length = captured length, as
	// some sniffers do: only the frame's IP/UDP (GRH, LRH) lengths still
	// say how long it was.
	CutFrames int
	// V1Requester writes the requester's packets (its requests, and its
	// REQ, RTU and DREQ) as RoCE v1 with IPv4-mapped GIDs, while the
	// responder answers in RoCE v2 over IPv4 on the same QPs (Encap must
	// be ipv4): one host per address, whatever the encapsulation.
	V1Requester bool
	// ShortMAD > 0 writes the data connection's REQ MAD ShortMAD bytes
	// long (under 256), with IP and UDP lengths that agree with the frame:
	// a malformed frame, and no connection.
	ShortMAD int
	// Split > 0 makes WriteFiles write the capture in pieces of Split
	// frames, as a rotating capture (tcpdump -C, editcap -c) leaves it
	// (split.go); Generate writes one stream whatever it is.
	Split int
}

// minCut is the smallest --cut-frames: every header up to the CM MAD's
// LocalCommID stays whole in every encapsulation.
const minCut = 128

func (c *Config) checkArtefacts() error {
	a := &c.Artefacts
	if a.CutFrames != 0 && a.CutFrames < minCut {
		return fmt.Errorf("synth: %w: --cut-frames %d (want %d or more: the headers stay whole)", ErrConfig, a.CutFrames, minCut)
	}
	if a.CutFrames > 0 && c.SnapLen > 0 {
		return fmt.Errorf("synth: %w: --cut-frames and --snaplen are two ways to cut frames: use one", ErrConfig)
	}
	if a.V1Requester && c.Encap != EncapIPv4 {
		return fmt.Errorf("synth: %w: --v1-requester pairs RoCE v1 with RoCE v2 over IPv4 (--encap ipv4), not %s", ErrConfig, c.Encap)
	}
	if a.V1Requester && len(c.ECN) > 0 {
		return fmt.Errorf("synth: %w: --v1-requester: ECN marks need RoCE v2 requests", ErrConfig)
	}
	if a.Split < 0 {
		return fmt.Errorf("synth: %w: --split %d (want frames per piece, or 0 for one file)", ErrConfig, a.Split)
	}
	if a.ShortMAD < 0 || a.ShortMAD >= madLen {
		return fmt.Errorf("synth: %w: --short-mad %d (want 1…%d bytes)", ErrConfig, a.ShortMAD, madLen-1)
	}
	if a.ShortMAD > 0 && c.Scenario == ScenarioMix {
		return fmt.Errorf("synth: %w: --short-mad applies to the one-connection scenarios", ErrConfig)
	}
	return nil
}

// builderFor returns the builder of the packet's encapsulation.
func (g *generator) builderFor(p *pkt) *builder {
	if g.cfg.V1Requester && !p.fromB {
		if g.b1 == nil {
			g.b1 = newBuilder(EncapRoCEv1, g.cfg.Scenario == ScenarioMix)
		}
		return g.b1
	}
	return g.b
}

// mapGIDs gives the hosts IPv4-mapped GIDs (RoCE v1 over an IPv4 network,
// as the CM REQ names them).
func mapGIDs(hosts []*host) {
	for _, h := range hosts {
		h.gid = h.ip4.To16()
	}
}

// toolCut returns what a tool that cuts frames without saying so records
// of a frame: its first CutFrames bytes, with that as original length.
func (g *generator) toolCut(frame []byte) (data []byte, orig int, cut bool) {
	n := g.cfg.CutFrames
	if n <= 0 || len(frame) <= n {
		return frame, len(frame), false
	}
	return frame[:n], n, true
}

// shortMAD reports whether p is the REQ written short.
func (g *generator) shortMAD(p *pkt) bool {
	return g.cfg.ShortMAD > 0 && p.cm == cmREQ && p.c.idx == 0
}

// noteArtefact records in the truth what an artefact did to a frame.
func (t *tracker) noteArtefact(cut, malformed bool) {
	tr := &t.truth
	if cut {
		tr.CutFrames++
		if tr.CutFrames == 1 {
			t.finding("tool_cut_frames", "info", tr.Frames+1)
		}
	}
	if malformed {
		tr.Malformed++
		t.finding("malformed", "error", tr.Frames+1)
	}
}

// madOffsets returns where the MAD starts in the frames of the requester
// (REQ) and of the responder (REP), as captured: --wrap puts it the wrap's
// overhead further.
func (c *Config) madOffsets() (req, rep int) {
	w := c.Wrap.Overhead()
	if c.V1Requester {
		return madOffset(EncapRoCEv1) + w, madOffset(c.Encap) + w
	}
	return madOffset(c.Encap) + w, madOffset(c.Encap) + w
}

// cutAt is the length captured of each frame (0: whole).
func (c *Config) cutAt() int {
	if c.CutFrames > 0 {
		return c.CutFrames
	}
	return c.SnapLen
}

func ptrTo[T any](v T) *T { return &v }
