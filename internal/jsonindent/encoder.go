// Package jsonindent writes values as encoding/json's MarshalIndent does, in the time
// go-json-experiment/json (encoding/json/v2's library) takes for half the flows of a report.
// An Encoder plans its structs' fields, keys quoted, once per type, and leaves the rest (maps,
// arrays, interfaces, []byte, MarshalJSON or MarshalText but time.Time's, unusual tags, types
// that hold themselves) to the library with encoding/json's options; strings in them that are
// not UTF-8 it writes with U+FFFD, not \ufffd (the report's maps are keyed by names).
package jsonindent

import (
	"encoding"
	stdjson "encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Indent is the indentation of each level of roce-dissect's JSON.
const Indent = "  "

// Encoder appends values as MarshalIndent(v, prefix, Indent) writes them. It is for one goroutine.
type Encoder struct {
	prefix string
	lines  [][]byte // lines[d]: a new line, the prefix and d indents
	plans  map[reflect.Type]*plan
	libs   []json.Options // libs[d]: the library's options at depth d
}

// plan is how values of one type are written.
type plan struct {
	t      reflect.Type
	kind   reflect.Kind // of t; reflect.Invalid: written by the library
	size   uintptr      // of t
	elem   *plan        // of a pointer or a slice
	fields []*field     // of a struct
}

// field is a struct field as a plan writes it.
type field struct {
	offset    uintptr
	key       string // quoted, and ": "
	omitEmpty bool
	plan      *plan
}

// NewEncoder returns an Encoder of values whose lines but the first begin with prefix.
func NewEncoder(prefix string) *Encoder {
	return &Encoder{prefix: prefix, plans: map[reflect.Type]*plan{}}
}

// Append appends v's JSON to b, or fails where encoding/json fails (a
// NaN, a time beyond year 9999), b then holding a part of it.
func (e *Encoder) Append(b []byte, v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Kind() == reflect.Pointer && rv.IsNil() {
		return append(b, "null"...), nil
	} else if rv.Kind() != reflect.Pointer { // a copy to point at
		rv = reflect.New(rv.Type())
		rv.Elem().Set(reflect.ValueOf(v))
	}
	return e.appendValue(e.plan(rv.Type().Elem()), b, rv.UnsafePointer(), 0)
}

// AppendElement appends v as an element of a list: a comma unless it is
// the first, a new line and the prefix, then v as Append writes it.
func (e *Encoder) AppendElement(b []byte, v any, first bool) ([]byte, error) {
	if !first {
		b = append(b, ',')
	}
	return e.Append(append(b, e.line(0)...), v)
}

// Prepare plans the values v, a pointer, points at: an encoder given no values costs as much as one given some.
func (e *Encoder) Prepare(v any) { e.plan(reflect.TypeOf(v).Elem()) }

// line is a new line, the prefix and depth indents.
func (e *Encoder) line(depth int) []byte {
	for len(e.lines) <= depth {
		e.lines = append(e.lines, []byte("\n"+e.prefix+strings.Repeat(Indent, len(e.lines))))
	}
	return e.lines[depth]
}

// appendLib appends v as the library writes it at depth.
func (e *Encoder) appendLib(b []byte, v any, depth int) ([]byte, error) {
	for len(e.libs) <= depth {
		e.libs = append(e.libs, json.JoinOptions(jsonv1.DefaultOptionsV1(),
			jsontext.WithIndentPrefix(e.prefix+strings.Repeat(Indent, len(e.libs))), jsontext.WithIndent(Indent)))
	}
	js, err := json.Marshal(v, e.libs[depth])
	return append(b, js...), err
}

var marshalerType, textMarshalerType, timeType = reflect.TypeFor[stdjson.Marshaler](), reflect.TypeFor[encoding.TextMarshaler](), reflect.TypeFor[time.Time]()

const timeKind = reflect.UnsafePointer + 1 // of time.Time's plan: MarshalJSON's bytes, written in place

// plan returns the plan of t, built on first use, or nil while it is
// built: a type that holds itself is the library's, and no plan holds a half-built one.
func (e *Encoder) plan(t reflect.Type) *plan {
	if p, ok := e.plans[t]; ok {
		return p
	}
	e.plans[t] = nil
	p := &plan{t: t, kind: t.Kind(), size: t.Size()}
	if t == timeType {
		p.kind = timeKind
	} else if p.kind != reflect.Pointer && (t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)) || !e.build(p) {
		*p = plan{t: t, size: p.size}
	}
	e.plans[t] = p
	return p
}

// build fills in p's parts, or reports that the library writes its values.
func (e *Encoder) build(p *plan) bool {
	switch p.kind {
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float64:
		return true
	case reflect.Pointer, reflect.Slice:
		p.elem = e.plan(p.t.Elem())
		return p.elem != nil && (p.kind == reflect.Pointer || p.elem.kind != reflect.Uint8) // []byte: base64
	case reflect.Struct:
		names := map[string]bool{}
		for i := range p.t.NumField() {
			sf := p.t.Field(i)
			name, opts, comma := strings.Cut(sf.Tag.Get("json"), ",")
			if !sf.IsExported() && !sf.Anonymous || name == "-" && !comma {
				continue
			} else if name == "" {
				name = sf.Name
			}
			f := field{offset: sf.Offset, key: string(appendString(nil, name)) + ": ", omitEmpty: opts != "", plan: e.plan(sf.Type)}
			if f.plan == nil || sf.Anonymous || opts != "" && opts != "omitempty" || names[name] || strings.ContainsFunc(name, func(r rune) bool {
				return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", r)
			}) {
				return false // a cycle, and encoding/json's rules of embedding, options and names
			}
			names[name], p.fields = true, append(p.fields, &f)
		}
		return true
	}
	return false
}

// appendValue appends the value of pl's type p points at, at depth.
func (e *Encoder) appendValue(pl *plan, b []byte, p unsafe.Pointer, depth int) ([]byte, error) {
	switch pl.kind {
	case reflect.Bool:
		return strconv.AppendBool(b, *(*bool)(p)), nil
	case reflect.String:
		return appendString(b, *(*string)(p)), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(b, signed(p, pl.size), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.AppendUint(b, uint64(signed(p, pl.size))&(math.MaxUint64>>(64-8*pl.size)), 10), nil
	case reflect.Float64:
		if f := *(*float64)(p); !math.IsNaN(f) && !math.IsInf(f, 0) { // else the library's error
			return appendFloat(b, f), nil
		}
	case reflect.Pointer:
		if p = *(*unsafe.Pointer)(p); p == nil {
			return append(b, "null"...), nil
		}
		return e.appendValue(pl.elem, b, p, depth)
	case reflect.Slice:
		return e.appendSlice(pl, b, *(*[]byte)(p), depth) // a slice's header, whatever its elements
	case reflect.Struct:
		return e.appendStruct(pl, b, p, depth)
	case timeKind:
		b, err := (*time.Time)(p).AppendText(append(b, '"')) // MarshalJSON's RFC 3339, and its errors
		return append(b, '"'), err
	}
	return e.appendLib(b, reflect.NewAt(pl.t, p).Interface(), depth)
}

// signed is the integer of size bytes p points at.
func signed(p unsafe.Pointer, size uintptr) int64 {
	switch size {
	case 1:
		return int64(*(*int8)(p))
	case 2:
		return int64(*(*int16)(p))
	case 4:
		return int64(*(*int32)(p))
	}
	return *(*int64)(p)
}

// appendSlice appends a slice of pl's type, h its header: null, [] or an element a line.
func (e *Encoder) appendSlice(pl *plan, b, h []byte, depth int) (_ []byte, err error) {
	if h == nil {
		return append(b, "null"...), nil
	} else if len(h) == 0 {
		return append(b, "[]"...), nil
	}
	for i := range len(h) {
		b = append(append(b, "[,"[min(i, 1)]), e.line(depth+1)...)
		if b, err = e.appendValue(pl.elem, b, unsafe.Add(unsafe.Pointer(unsafe.SliceData(h)), uintptr(i)*pl.elem.size), depth+1); err != nil {
			return b, err
		}
	}
	return append(append(b, e.line(depth)...), ']'), nil
}

// appendStruct appends a struct's fields but those omitempty leaves out.
func (e *Encoder) appendStruct(pl *plan, b []byte, p unsafe.Pointer, depth int) (_ []byte, err error) {
	start, line := len(b), e.line(depth+1)
	for _, f := range pl.fields {
		if f.omitEmpty && isEmpty(f.plan, unsafe.Add(p, f.offset)) {
			continue
		}
		b = append(append(append(b, "{,"[min(len(b)-start, 1)]), line...), f.key...)
		if b, err = e.appendValue(f.plan, b, unsafe.Add(p, f.offset), depth+1); err != nil {
			return b, err
		}
	}
	if len(b) == start {
		return append(b, "{}"...), nil
	}
	return append(append(b, e.line(depth)...), '}'), nil
}

// isEmpty is encoding/json's omitempty test of the value of pl's type at p.
func isEmpty(pl *plan, p unsafe.Pointer) bool {
	t, k := pl.t, pl.t.Kind()
	switch {
	case k == reflect.Pointer:
		return *(*unsafe.Pointer)(p) == nil
	case k == reflect.Slice || k == reflect.String:
		return len(*(*string)(p)) == 0 // a slice's length where a string's is
	case k == reflect.Bool || reflect.Int <= k && k <= reflect.Uint64:
		return signed(p, pl.size) == 0
	case k == reflect.Map || k == reflect.Array:
		return reflect.NewAt(t, p).Elem().Len() == 0
	case k == reflect.Float32 || k == reflect.Float64:
		return reflect.NewAt(t, p).Elem().Float() == 0 // -0 too
	}
	return k != reflect.Struct && reflect.NewAt(t, p).Elem().IsZero()
}

// appendFloat appends f as encoding/json does: the shortest decimal that reads back the same,
// in exponent form below 1e-6 and from 1e21 (at least two exponent digits, without leading 0).
func appendFloat(b []byte, f float64) []byte {
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		b = strconv.AppendFloat(b, f, 'e', -1, 64)
		if n := len(b); b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1] // e-07 is e-7
			b = b[:n-1]
		}
		return b
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// escapes[c] is how encoding/json writes the ASCII byte c in a string: "" as it is.
var escapes = func() (esc [utf8.RuneSelf]string) {
	for _, c := range "\x00\x01\x02\x03\x04\x05\x06\x07\x0b\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f<>&" {
		esc[c] = `\u00` + strconv.FormatUint(uint64(c)>>4, 16) + strconv.FormatUint(uint64(c)&0xF, 16)
	}
	esc['"'], esc['\\'], esc['\n'], esc['\r'], esc['\t'], esc['\b'], esc['\f'] = `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`
	return esc
}()

// appendString appends s quoted as encoding/json quotes strings: escapes,
// \ufffd for each byte that is not UTF-8, and \u2028 and \u2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		esc, size := "", 1
		if c := s[i]; c < utf8.RuneSelf {
			esc = escapes[c]
		} else if r, n := utf8.DecodeRuneInString(s[i:]); r == utf8.RuneError && n == 1 {
			esc = `\ufffd`
		} else if size = n; r == '\u2028' || r == '\u2029' {
			esc = `\u202` + string(rune('8'+r-'\u2028'))
		}
		if esc != "" {
			b = append(append(b, s[start:i]...), esc...)
			start = i + size
		}
		i += size
	}
	return append(append(b, s[start:]...), '"')
}
