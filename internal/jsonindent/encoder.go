package jsonindent

import (
	"bytes"
	"encoding"
	stdjson "encoding/json"
	"errors"
	"reflect"
	"strings"
	"time"
	"unicode"
	"unsafe"

	json "github.com/goccy/go-json"
)

// Indent is the indentation of each level, as roce-dissect's JSON is
// indented.
const Indent = "  "

// Encoder appends values as encoding/json's MarshalIndent(v, prefix,
// Indent) writes them, byte for byte. It holds a plan per type, built on
// first use; a type the plans do not cover (one with its own MarshalJSON
// or MarshalText but time.Time, json.Number, an interface, a []byte, a map
// not keyed by strings, an embedded field, a tag option other than
// omitempty, a type that holds itself) is encoded by goccy/go-json, as
// encoding/json would. An Encoder is for one goroutine.
type Encoder struct {
	prefix   string
	lines    [][]byte // lines[d]: a new line, the prefix and d indents
	plans    map[reflect.Type]*plan
	fallback *json.Encoder
	fbuf     bytes.Buffer
}

// NewEncoder returns an Encoder for values written after prefix on the
// first line, and prefix and their indentation on the next ones.
func NewEncoder(prefix string) *Encoder {
	e := &Encoder{prefix: prefix, plans: map[reflect.Type]*plan{}}
	e.fallback = json.NewEncoder(&e.fbuf)
	e.fallback.SetIndent(prefix, Indent)
	return e
}

// Append appends v's JSON to b (without the new line Encoder.Encode of
// encoding/json ends with). On an error (a NaN, a time beyond year 9999:
// where encoding/json fails) what b holds beyond its length is undefined.
func (e *Encoder) Append(b []byte, v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return append(b, "null"...), nil
	}
	p, err := e.plan(rv.Type())
	if err != nil {
		return e.appendFallback(b, v)
	}
	if rv.Kind() != reflect.Pointer { // a copy to point at
		c := reflect.New(rv.Type())
		c.Elem().Set(rv)
		rv = c
	} else {
		p = p.elem
		if rv.IsNil() {
			return append(b, "null"...), nil
		}
	}
	return p.encode(e, p, b, rv.UnsafePointer(), 0)
}

// AppendElement appends v as an element of a list whose elements are
// written at the encoder's prefix: a comma unless it is the list's first,
// a new line and the prefix, then v as Append writes it (on an error, as
// Append).
func (e *Encoder) AppendElement(b []byte, v any, first bool) ([]byte, error) {
	if !first {
		b = append(b, ',')
	}
	return e.Append(append(b, e.line(0)...), v)
}

// Prepare builds, ahead of the first value, all that writing values of
// v's type at the top level needs: the plans of its parts, and their keys
// at each depth. An encoder that has prepared for a type writes its values
// with no allocation of its own, however many or whichever values it is
// given (a worker that is given none has made the same allocations as one
// given many).
func (e *Encoder) Prepare(v any) {
	t := reflect.TypeOf(v)
	if t == nil {
		return
	}
	p, err := e.plan(t)
	if err != nil {
		return
	}
	if t.Kind() == reflect.Pointer {
		p = p.elem
	}
	e.prepare(p, 0)
}

// prepare builds the keys of p's structs, and of its parts', at the
// depths a value of p at depth reaches (no type holds itself: the depths
// end).
func (e *Encoder) prepare(p *plan, depth int) {
	switch p.kind {
	case reflect.Pointer:
		e.prepare(p.elem, depth)
	case reflect.Slice, reflect.Array, reflect.Map:
		e.line(depth + 1)
		e.prepare(p.elem, depth+1)
	case reflect.Struct:
		p.keysAt(e, depth+1)
		for _, f := range p.fields {
			e.prepare(f.plan, depth+1)
		}
	}
	e.line(depth)
}

// appendFallback appends v as goccy/go-json encodes it.
func (e *Encoder) appendFallback(b []byte, v any) ([]byte, error) {
	e.fbuf.Reset()
	if err := e.fallback.Encode(v); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(e.fbuf.Bytes(), []byte("\n"))...), nil
}

// line is a new line, the prefix and depth indents.
func (e *Encoder) line(depth int) []byte {
	for len(e.lines) <= depth {
		e.lines = append(e.lines, []byte("\n"+e.prefix+strings.Repeat(Indent, len(e.lines))))
	}
	return e.lines[depth]
}

// plan is how values of one type are written.
type plan struct {
	t      reflect.Type
	kind   reflect.Kind
	encode encodeFunc
	elem   *plan      // of a pointer, a list or a map
	fields []field    // of a struct
	keys   [][][]byte // keys[d][i]: field i's key at depth d (keysAt)
}

// encodeFunc appends the value p points at, of pl's type, at nesting
// depth.
type encodeFunc func(e *Encoder, pl *plan, b []byte, p unsafe.Pointer, depth int) ([]byte, error)

// field is a struct field as a plan writes it.
type field struct {
	offset    uintptr
	name      string // quoted, and ": "
	omitEmpty bool
	plan      *plan
	kind      reflect.Kind // the field's kind, for the scalars written in place
}

var (
	marshalerType     = reflect.TypeFor[stdjson.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	timeType          = reflect.TypeFor[time.Time]()
	numberType        = reflect.TypeFor[stdjson.Number]()
)

// errNoPlan is the plans' answer for a type they leave to the fallback.
var errNoPlan = errors.New("jsonindent: no plan")

// plan returns the plan of t, built on first use, or errNoPlan when t is
// left to the fallback.
func (e *Encoder) plan(t reflect.Type) (*plan, error) {
	if p, ok := e.plans[t]; ok {
		if p == nil || p.encode == nil {
			// A type that holds itself is left to the fallback, which
			// finds its cycles and its depth as encoding/json does; a
			// plan never refers to one not yet built, so that none holds
			// a part that failed after it was handed out.
			return nil, errNoPlan
		}
		return p, nil
	}
	p := &plan{t: t, kind: t.Kind()}
	e.plans[t] = p // encode nil: being built
	if err := e.build(p); err != nil {
		e.plans[t] = nil
		return nil, err
	}
	return p, nil
}

// build fills in p's encode (last) and parts.
func (e *Encoder) build(p *plan) error {
	t := p.t
	switch {
	case t == timeType:
		p.encode = appendTime
		return nil
	case t.Kind() == reflect.Pointer && t.Elem() == timeType:
		// *time.Time's MarshalJSON is time.Time's, and null for nil
	case t == numberType:
		return errNoPlan // a number, checked
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType):
		return errNoPlan
	}
	var (
		enc encodeFunc
		err error
	)
	switch k := t.Kind(); k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		enc = scalarEncoder(k)
	case reflect.Pointer:
		p.elem, err = e.plan(t.Elem())
		enc = appendPointer
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return errNoPlan // base64
		}
		p.elem, err = e.plan(t.Elem())
		enc = appendSlice
	case reflect.Array:
		p.elem, err = e.plan(t.Elem())
		enc = appendArray
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return errNoPlan
		}
		p.elem, err = e.plan(t.Elem())
		enc = appendMap
	case reflect.Struct:
		err = e.buildStruct(p)
		enc = appendStruct
	default:
		return errNoPlan
	}
	if err != nil {
		return err
	}
	p.encode = enc
	return nil
}

// buildStruct lists the fields of p's struct as encoding/json writes
// them.
func (e *Encoder) buildStruct(p *plan) error {
	names := map[string]bool{}
	for i := range p.t.NumField() {
		sf := p.t.Field(i)
		if sf.Anonymous {
			return errNoPlan // embedded fields: encoding/json's rules of precedence
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts != "" && opts != "omitempty" {
			return errNoPlan
		}
		if !validTagName(name) {
			name = sf.Name
		}
		if names[name] {
			return errNoPlan // encoding/json drops both
		}
		names[name] = true
		fp, err := e.plan(sf.Type)
		if err != nil {
			return err
		}
		f := field{offset: sf.Offset, name: string(appendString(nil, name)) + ": ", omitEmpty: opts == "omitempty", plan: fp, kind: sf.Type.Kind()}
		if !inPlace(f.kind) || sf.Type == timeType {
			f.kind = reflect.Invalid
		}
		p.fields = append(p.fields, f)
	}
	return nil
}

// keysAt returns the keys of p's fields at depth, each after a comma and
// a new line (",\n" prefix indents "name": ), built on first use in one
// buffer. A struct takes them once, then one a field: the arithmetic of
// finding a field's key in the buffer, field by field, was 6 % of the JSON
// report of 200,000 flows.
func (p *plan) keysAt(e *Encoder, depth int) [][]byte {
	for len(p.keys) <= depth {
		line := e.line(len(p.keys))
		var all []byte
		for _, f := range p.fields {
			all = append(append(append(all, ','), line...), f.name...)
		}
		keys := make([][]byte, len(p.fields))
		at := 0
		for i, f := range p.fields {
			n := 1 + len(line) + len(f.name)
			keys[i] = all[at : at+n : at+n]
			at += n
		}
		p.keys = append(p.keys, keys)
	}
	return p.keys[depth]
}

// validTagName is encoding/json's test of a tag's name: other names are
// ignored for the field's own.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return false
		}
	}
	return true
}
