package jsonindent

import (
	"cmp"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"
)

// inPlace reports whether appendInPlace writes values of kind k: a
// struct's fields of these kinds are written without a call through
// their plans.
func inPlace(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false // floats fail on NaN: through appendFloat
}

// appendInPlace appends the value p points at, of kind k (inPlace).
func appendInPlace(b []byte, p unsafe.Pointer, k reflect.Kind) []byte {
	switch k {
	case reflect.Bool:
		return strconv.AppendBool(b, *(*bool)(p))
	case reflect.String:
		return appendString(b, *(*string)(p))
	case reflect.Int:
		return strconv.AppendInt(b, int64(*(*int)(p)), 10)
	case reflect.Int8:
		return strconv.AppendInt(b, int64(*(*int8)(p)), 10)
	case reflect.Int16:
		return strconv.AppendInt(b, int64(*(*int16)(p)), 10)
	case reflect.Int32:
		return strconv.AppendInt(b, int64(*(*int32)(p)), 10)
	case reflect.Int64:
		return strconv.AppendInt(b, *(*int64)(p), 10)
	case reflect.Uint:
		return strconv.AppendUint(b, uint64(*(*uint)(p)), 10)
	case reflect.Uint8:
		return strconv.AppendUint(b, uint64(*(*uint8)(p)), 10)
	case reflect.Uint16:
		return strconv.AppendUint(b, uint64(*(*uint16)(p)), 10)
	case reflect.Uint32:
		return strconv.AppendUint(b, uint64(*(*uint32)(p)), 10)
	case reflect.Uint64:
		return strconv.AppendUint(b, *(*uint64)(p), 10)
	}
	return strconv.AppendUint(b, uint64(*(*uintptr)(p)), 10)
}

// scalarEncoder is the encodeFunc of a scalar of kind k.
func scalarEncoder(k reflect.Kind) encodeFunc {
	if k == reflect.Float32 || k == reflect.Float64 {
		return appendFloat
	}
	return func(_ *Encoder, _ *plan, b []byte, p unsafe.Pointer, _ int) ([]byte, error) {
		return appendInPlace(b, p, k), nil
	}
}

// appendFloat appends a float as encoding/json does: the shortest
// decimal that reads back the same, in exponent form below 1e-6 and from
// 1e21 (with at least two exponent digits, none of them a leading 0);
// NaN and the infinities are an error.
func appendFloat(_ *Encoder, pl *plan, b []byte, p unsafe.Pointer, _ int) ([]byte, error) {
	var f float64
	bits := 64
	if pl.kind == reflect.Float32 {
		f, bits = float64(*(*float32)(p)), 32
	} else {
		f = *(*float64)(p)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, &unsupportedValueError{strconv.FormatFloat(f, 'g', -1, bits)}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1] // e-07 is e-7
		b = b[:n-1]
	}
	return b, nil
}

// unsupportedValueError is the error of a value JSON cannot hold.
type unsupportedValueError struct{ value string }

func (e *unsupportedValueError) Error() string {
	return "json: unsupported value: " + e.value
}

// appendTime appends a time as time.Time's MarshalJSON does: RFC 3339
// with nanoseconds, its year within 0–9999 and its zone's offset within a
// day, or an error.
func appendTime(_ *Encoder, _ *plan, b []byte, p unsafe.Pointer, _ int) ([]byte, error) {
	t := (*time.Time)(p)
	if y := t.Year(); y < 0 || y > 9999 {
		return b, &unsupportedValueError{"Time.MarshalJSON: year outside of range [0,9999]"}
	}
	if _, off := t.Zone(); off <= -24*60*60 || off >= 24*60*60 {
		return b, &unsupportedValueError{"Time.MarshalJSON: timezone hour outside of range [0,23]"}
	}
	b = append(b, '"')
	if t.Location() != time.UTC {
		b = t.AppendFormat(b, time.RFC3339Nano)
		return append(b, '"'), nil
	}
	// UTC, as captures' times are: RFC3339Nano by hand, a fifth of the
	// time of AppendFormat (BenchmarkTime).
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	b = append(b, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+month/10), byte('0'+month%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10))
	if ns := t.Nanosecond(); ns != 0 {
		var frac [10]byte
		frac[0] = '.'
		for i := 9; i > 0; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 10
		for frac[n-1] == '0' {
			n--
		}
		b = append(b, frac[:n]...)
	}
	return append(b, 'Z', '"'), nil
}

// isEmpty is encoding/json's test for omitempty, of the value of pl's
// type p points at.
func isEmpty(pl *plan, p unsafe.Pointer) bool {
	switch pl.kind {
	case reflect.Pointer:
		return *(*unsafe.Pointer)(p) == nil
	case reflect.Slice:
		return len(*(*[]byte)(p)) == 0
	case reflect.String:
		return len(*(*string)(p)) == 0
	case reflect.Array:
		return pl.t.Len() == 0
	case reflect.Struct:
		return false
	}
	v := reflect.NewAt(pl.t, p).Elem()
	switch pl.kind {
	case reflect.Map:
		return v.Len() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0 // -0 too
	}
	return v.IsZero() // booleans and integers
}

// sortByString sorts a map's string keys as encoding/json writes them.
func sortByString(keys []reflect.Value) {
	slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.String(), b.String()) })
}

const hex = "0123456789abcdef"

// htmlSafe holds the ASCII bytes encoding/json writes as they are: the
// printable ones but the quote, the backslash and <, > and & (escaped for
// HTML).
var htmlSafe = func() (set [utf8.RuneSelf]bool) {
	for c := byte(' '); c < utf8.RuneSelf; c++ {
		set[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return set
}()

// appendString appends s quoted as encoding/json quotes strings, HTML
// escaping on: short escapes for \b, \f, \n, \r, \t, the quote and the
// backslash, \u00XX for the other control bytes and <, >, &, \ufffd for
// each byte that is not UTF-8, and \u2028 and \u2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
