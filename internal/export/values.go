package export

import (
	"github.com/parquet-go/parquet-go"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// addrTable numbers the addresses of a capture and holds their text
// (String allocates; a capture has few addresses). A small direct-mapped
// cache in front of the map saves hashing the address for most frames.
type addrTable struct {
	ids   map[analyze.Addr]int32
	text  [][]byte
	cache [256]struct {
		a  analyze.Addr
		id int32
		ok bool
	}
}

// index is the number of a's text in t.text.
func (t *addrTable) index(a analyze.Addr) int32 {
	b := a.IP.As16()
	slot := &t.cache[(b[15]^b[14]<<2^b[13]<<4)+uint8(a.LID)]
	if slot.ok && slot.a == a {
		return slot.id
	}
	id, ok := t.ids[a]
	if !ok {
		if t.ids == nil {
			t.ids = map[analyze.Addr]int32{}
		}
		id = int32(len(t.text))
		t.text = append(t.text, []byte(a.String()))
		t.ids[a] = id
	}
	slot.a, slot.id, slot.ok = a, id, true
	return id
}

// priorityValues are the priority column's values by priority + 1, null
// first: a packet's is copied, not made (optionalInt32 is not inlined,
// and would make one at every packet).
var priorityValues = func() (vs [9]parquet.Value) {
	for p := range 8 {
		vs[p+1] = optionalInt32(int32(p))
	}
	return vs
}()

// optionalInt32 is the value of an optional INT32 column: v, or null when
// negative (absent).
func optionalInt32(v int32) parquet.Value {
	if v < 0 {
		return parquet.Value{}
	}
	x := parquet.Int32Value(v)
	x.SetDefinitionLevel(1)
	return x
}
