package ncclsynth

// Tree is a channel's tree of the Tree algorithm: NCCL's double binary
// tree (src/graph/trees.cc), one rank per node.
type Tree struct {
	Root int
	// Parent of each rank, -1 for the root; Children in NCCL's order
	// (down[0], down[1]).
	Parent   []int
	Children [][]int
}

// btree is ncclGetBtree: rank's parent and children in the binary tree
// of n ranks rooted at 0 (the root has one child).
func btree(n, rank int) (up, down0, down1 int) {
	bit := 1
	for ; bit < n; bit <<= 1 {
		if bit&rank != 0 {
			break
		}
	}
	if rank == 0 {
		if n > 1 {
			return -1, -1, bit >> 1
		}
		return -1, -1, -1
	}
	up = (rank ^ bit) | bit<<1
	if up >= n {
		up = rank ^ bit
	}
	lowbit := bit >> 1
	down0, down1 = -1, -1
	if lowbit != 0 {
		down0, down1 = rank-lowbit, rank+lowbit
	}
	for down1 >= n {
		down1 = -1
		if lowbit != 0 {
			down1 = rank + lowbit
		}
		lowbit >>= 1
	}
	return up, down0, down1
}

// Trees returns the tree of channel ch of n ranks: ncclGetDtree's first
// tree on the even channels, its second (the first shifted by one rank
// for odd n, mirrored for even n) on the odd ones.
func Trees(n, ch int) Tree {
	t := Tree{Parent: make([]int, n), Children: make([][]int, n)}
	for r := range n {
		var up, d0, d1 int
		switch {
		case ch%2 == 0:
			up, d0, d1 = btree(n, r)
		case n%2 == 1:
			up, d0, d1 = btree(n, (r-1+n)%n)
			up, d0, d1 = shift(up, n, 1), shift(d0, n, 1), shift(d1, n, 1)
		default:
			up, d0, d1 = btree(n, n-1-r)
			up, d0, d1 = mirror(up, n), mirror(d0, n), mirror(d1, n)
		}
		t.Parent[r] = up
		if up < 0 {
			t.Root = r
		}
		for _, d := range []int{d0, d1} {
			if d >= 0 {
				t.Children[r] = append(t.Children[r], d)
			}
		}
	}
	return t
}

func shift(r, n, by int) int {
	if r < 0 {
		return -1
	}
	return (r + by) % n
}

func mirror(r, n int) int {
	if r < 0 {
		return -1
	}
	return n - 1 - r
}

// planTree appends the messages of tree AllReduce collective ci on
// channel ch (e elements of esize bytes) to the tree's connections: for
// each chunk of one step, each rank sends it up to its parent once it
// has its children's (a leaf at once), and the root, then each rank
// from its parent, sends the reduced chunk down to its children. The
// Simple protocol posts one slice per chunk on the tree.
func (j *job) planTree(ci int, t Tree, e, esize int64, ch int) {
	chunk := int64(stepBytes) / esize
	up := func(r int) *connection { return j.byKey[[3]int{ch, r, t.Parent[r]}] }
	down := func(p, r int) *connection { return j.byKey[[3]int{ch, p, r}] }
	base := map[*connection]int{}
	for r, p := range t.Parent {
		if p >= 0 {
			base[up(r)], base[down(p, r)] = len(up(r).msgs), len(down(p, r).msgs)
		}
	}
	step := 0
	for off := int64(0); off < e; off += chunk {
		bytes := min(chunk, e-off) * esize
		g := step
		fromChildren := func(r int) []ref {
			var deps []ref
			for _, c := range t.Children[r] {
				deps = append(deps, ref{up(c), base[up(c)] + g})
			}
			return deps
		}
		for r, p := range t.Parent {
			if p >= 0 {
				j.add(up(r), message{coll: ci, bytes: bytes, step: step, deps: fromChildren(r), slice: 1})
			}
		}
		for r, p := range t.Parent {
			deps := fromChildren(r) // the root reduces, then sends down
			if p >= 0 {
				deps = []ref{{down(p, r), base[down(p, r)] + g}}
			}
			for _, c := range t.Children[r] {
				j.add(down(r, c), message{coll: ci, bytes: bytes, step: step, deps: deps, slice: 1})
			}
		}
		step++
	}
}
