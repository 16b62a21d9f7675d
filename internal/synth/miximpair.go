package synth

import "fmt"

// mix with impairments (--drop, --nak, --rnr, --dup, --reorder, --ecn,
// --corrupt-icrc): each applies to every connection of the mix, its PSNs
// relative (+N) to each connection's first request PSN, or absolute for
// the connections that send that PSN; a connection that sends no such PSN
// is left alone. The connections and the random order of their data
// packets are drawn as without impairments; each connection's packets are
// then built whole, impaired as the one-connection scenarios are
// (applyImpairments), and written in that order: all setups, the data
// packets (a connection drawn writes its next one, resends and NAKs
// included), what the draws left of them, then all teardowns. Unlike the
// plain mix, the packets are held in memory.

// impairedMix returns the impairments of im that concern a connection
// whose requests are list and start at PSN start, and marks those in used
// (by impairment list, then index).
func impairedMix(im *Impairments, list []pkt, start uint32, used *[7][]bool) Impairments {
	var out Impairments
	dst := out.lists()
	for k, l := range im.lists() {
		if used[k] == nil {
			used[k] = make([]bool, len(*l.refs))
		}
		for i, r := range *l.refs {
			if findReq(list, r.resolve(start), 0) >= 0 {
				*dst[k].refs = append(*dst[k].refs, r)
				used[k][i] = true
			}
		}
	}
	return out
}

// checkUsed returns an error naming an impairment no connection took.
func checkUsed(im *Impairments, used *[7][]bool) error {
	for k, l := range im.lists() {
		for i, r := range *l.refs {
			if !used[k][i] {
				return fmt.Errorf("synth: %w: --%s %s: no connection of the mix sends a request with that PSN", ErrConfig, l.flag, r)
			}
		}
	}
	return nil
}

// runImpairedMix is runMix with Config.Impairments: gens are the
// connections' generators. It checks every impairment against the
// connections before it writes a frame.
func (g *generator) runImpairedMix(gens []*connGen) error {
	cfg := g.cfg
	setups := make([]pkt, 0, 3*len(gens))
	for _, gen := range gens { // REQ, REP, RTU
		var p pkt
		for range 3 {
			gen.next(&p)
			setups = append(setups, p)
		}
	}
	slots := max(0, cfg.Packets-5*cfg.QPs)
	order := make([]int32, slots)
	counts := make([]int, len(gens))
	for k := range order {
		i := g.rng.IntN(len(gens))
		order[k] = int32(i)
		counts[i]++
	}
	data := make([][]pkt, len(gens))    // each connection's data packets, impaired
	closing := make([][]pkt, len(gens)) // its teardown
	var used [7][]bool
	for i, gen := range gens {
		var list []pkt
		var p pkt
		for range counts[i] {
			gen.next(&p)
			list = append(list, p)
		}
		gen.teardown()
		for range 2 {
			gen.next(&p)
			list = append(list, p)
		}
		im := impairedMix(&cfg.Impairments, list, gen.c.psnA, &used)
		list, err := applyImpairments(list, &im, gen.c.psnA, &cfg.NIC)
		if err != nil {
			return err
		}
		data[i], closing[i] = list[:len(list)-2], list[len(list)-2:]
	}
	if err := checkUsed(&cfg.Impairments, &used); err != nil {
		return err
	}
	for i := range setups {
		if err := g.emit(&setups[i]); err != nil {
			return err
		}
	}
	for _, i := range order {
		if len(data[i]) == 0 {
			continue // a dropped packet's slot
		}
		if err := g.emit(&data[i][0]); err != nil {
			return err
		}
		data[i] = data[i][1:]
	}
	for i := range gens {
		for k := range data[i] {
			if err := g.emit(&data[i][k]); err != nil {
				return err
			}
		}
	}
	for i := range gens {
		for k := range closing[i] {
			if err := g.emit(&closing[i][k]); err != nil {
				return err
			}
		}
	}
	return nil
}
