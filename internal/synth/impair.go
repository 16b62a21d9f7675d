package synth

import (
	"fmt"

	"github.com/roce-dissect/roce-dissect/layers"
)

// In-flight requests when a NAK or an RNR NAK reaches the requester.
const (
	nakWindow = 2
	rnrWindow = 1
)

// applyImpairments rewrites the ideal packet sequence of a connection:
// go-back-N after NAKs and RNR NAKs, reordering, ECN marks with their
// CNPs, ICRC corruption, duplicates, then drops. Each impairment applies
// to the first occurrence of the request packet with its PSN; unknown
// PSNs are an error.
func applyImpairments(list []pkt, im *Impairments, start uint32, k *NICKnobs) ([]pkt, error) {
	for _, l := range im.lists() {
		for _, r := range *l.refs {
			if p := r.resolve(start); findReq(list, p, 0) < 0 {
				return nil, fmt.Errorf("synth: %w: --%s %s: the data connection has no request with PSN %d", ErrConfig, l.flag, r, p)
			}
		}
	}
	for _, r := range im.NAK {
		list = lossAfterTap(list, r.resolve(start), nakWindow, synNAKSeq, resendNAK, k)
	}
	for _, r := range im.RNR {
		list = lossAfterTap(list, r.resolve(start), rnrWindow, synRNR, resendRNR, k)
	}
	for _, r := range im.Dup {
		for _, d := range im.Drop {
			if r.resolve(start) == d.resolve(start) {
				return nil, fmt.Errorf("synth: %w: --dup %s and --drop %s: the drop would remove the first copy and leave one, so the capture would show neither: give the PSN to one of them", ErrConfig, r, d)
			}
		}
	}
	for _, r := range im.Reorder {
		i := findReq(list, r.resolve(start), 0)
		if i < 0 {
			continue
		}
		j := nextReq(list, i+1)
		if j < 0 {
			return nil, fmt.Errorf("synth: %w: --reorder %s: PSN %d is the connection's last request, with none after it to swap with", ErrConfig, r, r.resolve(start))
		}
		out := make([]pkt, 0, len(list))
		out = append(out, list[:i]...)
		out = append(out, list[j], list[i])
		out = append(out, list[i+1:j]...)
		list = append(out, list[j+1:]...)
	}
	for _, r := range im.ECN {
		i := findReq(list, r.resolve(start), 0)
		if i < 0 {
			continue
		}
		list[i].ce = true
		c := list[i].c
		cnp := pkt{c: c, fromB: true, op: layers.OpcodeRoCEv2CNP, destQP: c.qa, becn: true}
		list = insert(list, i+1, cnp)
	}
	list, err := applyNIC(list, k, start)
	if err != nil {
		return nil, err
	}
	for _, r := range im.CorruptICRC {
		if i := findReq(list, r.resolve(start), 0); i >= 0 {
			list[i].corrupt = true
		}
	}
	for _, r := range im.Dup {
		if i := findReq(list, r.resolve(start), 0); i >= 0 {
			list = insert(list, i+1, list[i])
		}
	}
	for _, r := range im.Drop {
		if i := findReq(list, r.resolve(start), 0); i >= 0 {
			list = append(list[:i], list[i+1:]...)
		}
	}
	return list, nil
}

// msnBefore returns the responder's MSN when request i arrives: that of
// the last response carrying an AETH before it.
func msnBefore(list []pkt, i int) uint32 {
	for j := i - 1; j >= 0; j-- {
		p := &list[j]
		if p.fromB && p.cm == cmNone && !p.op.IsCNP() && p.op.Operation() != layers.OperationRDMAReadResponseMiddle {
			return p.msn
		}
	}
	return 0
}

func findReq(list []pkt, psn uint32, from int) int {
	for i := from; i < len(list); i++ {
		if list[i].dataReq() && list[i].psn == psn {
			return i
		}
	}
	return -1
}

func nextReq(list []pkt, from int) int {
	for i := from; i < len(list); i++ {
		if list[i].dataReq() {
			return i
		}
	}
	return -1
}

func insert(list []pkt, i int, p pkt) []pkt {
	list = append(list, pkt{})
	copy(list[i+1:], list[i:])
	list[i] = p
	return list
}
