package jsonindent

import (
	"reflect"
	"unsafe"
)

func appendPointer(e *Encoder, pl *plan, b []byte, p unsafe.Pointer, depth int) ([]byte, error) {
	elem := *(*unsafe.Pointer)(p)
	if elem == nil {
		return append(b, "null"...), nil
	}
	return pl.elem.encode(e, pl.elem, b, elem, depth)
}

// appendSlice appends a slice: null when nil, [] when empty, else an
// element a line.
func appendSlice(e *Encoder, pl *plan, b []byte, p unsafe.Pointer, depth int) ([]byte, error) {
	h := (*[]byte)(p) // a slice's header, whatever its elements
	if *h == nil {
		return append(b, "null"...), nil
	}
	return appendElements(e, pl, b, unsafe.Pointer(unsafe.SliceData(*h)), len(*h), depth)
}

func appendArray(e *Encoder, pl *plan, b []byte, p unsafe.Pointer, depth int) ([]byte, error) {
	return appendElements(e, pl, b, p, pl.t.Len(), depth)
}

// appendElements appends the n elements from p of a list of pl's type.
func appendElements(e *Encoder, pl *plan, b []byte, p unsafe.Pointer, n, depth int) ([]byte, error) {
	if n == 0 {
		return append(b, "[]"...), nil
	}
	size := pl.t.Elem().Size()
	elem := pl.elem
	b = append(b, '[')
	var err error
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.line(depth+1)...)
		if b, err = elem.encode(e, elem, b, unsafe.Add(p, uintptr(i)*size), depth+1); err != nil {
			return b, err
		}
	}
	b = append(b, e.line(depth)...)
	return append(b, ']'), nil
}

// appendMap appends a map keyed by strings: null when nil, {} when empty,
// else its keys sorted, as encoding/json writes them.
func appendMap(e *Encoder, pl *plan, b []byte, p unsafe.Pointer, depth int) ([]byte, error) {
	m := reflect.NewAt(pl.t, p).Elem()
	if m.IsNil() {
		return append(b, "null"...), nil
	}
	if m.Len() == 0 {
		return append(b, "{}"...), nil
	}
	keys := m.MapKeys()
	sortByString(keys)
	v := reflect.New(pl.t.Elem()).Elem() // each value, copied to point at
	b = append(b, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.line(depth+1)...)
		b = appendString(b, k.String())
		b = append(b, ": "...)
		v.Set(m.MapIndex(k))
		if b, err = pl.elem.encode(e, pl.elem, b, v.Addr().UnsafePointer(), depth+1); err != nil {
			return b, err
		}
	}
	b = append(b, e.line(depth)...)
	return append(b, '}'), nil
}

// appendStruct appends a struct's fields, those omitempty leaves out
// left out; {} when none is left. Scalar fields are written in place
// (appendInPlace), the others through their plans.
func appendStruct(e *Encoder, pl *plan, b []byte, p unsafe.Pointer, depth int) ([]byte, error) {
	open := false
	var err error
	keys := pl.keysAt(e, depth+1)
	for i := range pl.fields {
		f := &pl.fields[i]
		fp := unsafe.Add(p, f.offset)
		if f.omitEmpty && isEmpty(f.plan, fp) {
			continue
		}
		k := keys[i]
		if !open {
			b = append(b, '{')
			k = k[1:] // no comma
			open = true
		}
		b = append(b, k...)
		if f.kind != reflect.Invalid {
			b = appendInPlace(b, fp, f.kind)
			continue
		}
		if b, err = f.plan.encode(e, f.plan, b, fp, depth+1); err != nil {
			return b, err
		}
	}
	if !open {
		return append(b, "{}"...), nil
	}
	b = append(b, e.line(depth)...)
	return append(b, '}'), nil
}
