package jsonindent

import (
	"encoding/json"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/analyzetest"
	"github.com/roce-dissect/roce-dissect/points"
)

type inner struct {
	N  uint16  `json:"n"`
	F  float32 `json:"f"`
	On bool    `json:"on,omitempty"`
}

type kind string

type severityText int

func (s severityText) MarshalText() ([]byte, error) {
	return []byte("sev<" + string(rune('0'+s)) + ">"), nil
}

type withMarshaler struct {
	A int          `json:"a"`
	S severityText `json:"s"`
}

type embedded struct {
	inner
	X int `json:"x"`
}

type withIface struct {
	A     int `json:"a"`
	Iface any `json:"iface,omitempty"`
}

type cyclic struct {
	Next *cyclic `json:"next"`
}

// recursiveBytes holds itself and a []byte: planned after its pointer
// type, it must not leave the pointer's plan holding a half of it.
type recursiveBytes struct {
	Next *recursiveBytes
	Data []byte
}

type self struct {
	Name string  `json:"name"`
	Next *self   `json:"next,omitempty"`
	Kids []*self `json:"kids"`
}

type all struct {
	S     string            `json:"s"`
	K     kind              `json:"k"`
	I     int64             `json:"i"`
	I8    int8              `json:"i8"`
	U     uint64            `json:"u"`
	B     bool              `json:"b"`
	F     float64           `json:"f"`
	P     *int              `json:"p"`
	PO    *int              `json:"po,omitempty"`
	T     time.Time         `json:"t"`
	TP    *time.Time        `json:"tp"`
	L     []inner           `json:"l"`
	LO    []inner           `json:"lo,omitempty"`
	Arr   [2]uint8          `json:"arr"`
	M     map[string]uint64 `json:"m"`
	MO    map[string]uint64 `json:"mo,omitempty"`
	In    inner             `json:"in"`
	Empty struct{}          `json:"empty"`
	Skip  int               `json:"-"`
	//lint:ignore SA5008 the name "-", as encoding/json reads this tag: tested on purpose
	Dash  int `json:"-,"`
	NoTag int
	//lint:ignore U1000 encoding/json skips unexported fields: so must the plans
	unexport int
	FO       float64        `json:"fo,omitempty"`
	ME       map[string]int `json:"me,omitempty"`
	A0       [0]int         `json:"a0,omitempty"`
	BO       bool           `json:"bo,omitempty"`
	IO       int8           `json:"io,omitempty"`
	SO       string         `json:"so,omitempty"`
	PP       **inner        `json:"pp"`
}

// TestLikeEncodingJSON: every value is written as encoding/json's
// MarshalIndent writes it, or fails where it fails.
func TestLikeEncodingJSON(t *testing.T) {
	one := 1
	when := time.Date(2026, 12, 2, 4, 5, 6, 7000, time.UTC)
	zone := time.Date(2026, 12, 2, 4, 5, 6, 0, time.FixedZone("x", -(5*3600+30*60)))
	full := all{
		S: "a<b>&c \"q\" \\ \b\f\n\r\t\x01\x7f µs \xff\xfe \u2028\u2029 ✓", K: "rc", I: math.MinInt64, I8: -8, U: math.MaxUint64, B: true,
		F: 1e-7, P: &one, PO: &one, T: when, TP: &zone, L: []inner{{N: 1, F: 1.5}, {N: 2, F: float32(1e21), On: true}},
		LO: []inner{{}}, Arr: [2]uint8{1, 255}, M: map[string]uint64{"z": 1, "a": 2, "<é>": 3}, MO: map[string]uint64{"k": 0},
		In: inner{N: 7}, Dash: 5, NoTag: 6,
	}
	chain := &cyclic{}
	for range 10_001 { // beyond encoding/json's depth of 10,000
		chain = &cyclic{Next: chain}
	}
	loop := &cyclic{}
	loop.Next = loop
	cases := []struct {
		name    string
		v       any
		planned bool // at the top level, else written by the library
	}{
		{"zero", &all{}, true},
		{"full", &full, true},
		{"by value", full, true},
		{"empty list and map", &all{L: []inner{}, M: map[string]uint64{}, ME: map[string]int{}, FO: math.Copysign(0, -1)}, true},
		{"omitempty kept", &all{ME: map[string]int{"a": 1}, FO: 0.5, BO: true, IO: -1, SO: "s", PP: new(*inner)}, true},
		{"floats", []float64{0, math.Copysign(0, -1), 1, -1.5, 1e20, 1e21, 123456789e-15, 1e-6, 9.99e-7, math.MaxFloat64, math.SmallestNonzeroFloat64, 905793896.5059708}, true},
		{"float32", []float32{0.1, 1e-7, 3.4e38, 16777217}, true},
		{"NaN", []float64{math.NaN()}, true},
		{"infinity", map[string]float64{"x": math.Inf(-1)}, true},
		{"year 10000", &all{T: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, true},
		{"year -1", &all{T: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}, true},
		{"nil pointer", (*all)(nil), true},
		{"nested lists", [][]int{{}, {1, 2}, nil}, true},
		{"times", []time.Time{{}, time.Unix(0, 1).UTC(), time.Unix(1700000000, 120000000).UTC(), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
			time.Date(1, 2, 3, 4, 5, 6, 100, time.UTC), time.Unix(5, 0), time.Unix(5, 0).In(time.FixedZone("UTC", 0))}, true},
		{"time pointers", []*time.Time{nil, &when, &zone}, true},
		{"nil", nil, false},
		{"text marshaler", &withMarshaler{A: 1, S: 2}, true}, // its field S by the library
		{"embedded", &embedded{inner: inner{N: 1}, X: 2}, false},
		{"interface", &withIface{A: 1, Iface: []any{1, "x", nil}}, true}, // its field Iface by the library
		{"bytes", map[string][]byte{"b": []byte("hi")}, false},
		{"int keys", map[int]string{2: "b", 10: "a"}, false},
		{"itself", &self{Name: "a", Next: &self{Name: "b"}, Kids: []*self{{Name: "c"}, nil}}, true}, // its fields of its own type by the library
		{"a cycle", loop, true}, // its field Next by the library
		{"deeper than 10,000", chain, true},
	}
	for _, prefix := range []string{"", "    "} {
		for _, c := range cases {
			t.Run(c.name+"/"+prefix, func(t *testing.T) {
				want, werr := json.MarshalIndent(c.v, prefix, "  ")
				e := NewEncoder(prefix)
				for range 2 { // the second with the plans built
					got, err := e.Append([]byte("x"), c.v)
					if werr != nil {
						require.Error(t, err, "encoding/json fails: %v", werr)
						continue
					}
					require.NoError(t, err)
					require.Equal(t, "x"+string(want), string(got))
				}
				if rv := reflect.ValueOf(c.v); rv.Kind() == reflect.Pointer {
					assert.Equal(t, c.planned, e.plan(rv.Type().Elem()).kind != reflect.Invalid, "planned")
				}
			})
		}
	}
}

// TestHalfPlanNotKept: a type that fails after its pointer type asked
// for it leaves no plan behind that holds a part of it, whichever is
// written first.
func TestHalfPlanNotKept(t *testing.T) {
	v := recursiveBytes{Data: []byte("hi")}
	for _, order := range [][]any{{v, &v}, {&v, v}} {
		e := NewEncoder("")
		for _, x := range order {
			want, err := json.MarshalIndent(x, "", "  ")
			require.NoError(t, err)
			got, err := e.Append(nil, x)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
		}
	}
}

// TestReportTypesPlanned: the parts of -o json but the findings (their
// own MarshalJSON) are written by plans, not by the library.
func TestReportTypesPlanned(t *testing.T) {
	e := NewEncoder("")
	for _, v := range []any{analyze.Capture{}, analyze.Connection{}, analyze.Flow{}, analyze.Pause{}, points.Report{}} {
		assert.NotEqual(t, reflect.Invalid, e.plan(reflect.TypeOf(v)).kind, "%T", v)
	}
	assert.Equal(t, reflect.Invalid, e.plan(reflect.TypeFor[analyze.Finding]()).kind, "findings: their MarshalJSON")
}

// TestAppendElement: the elements of a list appended one by one, at the
// list's prefix and one indent, then the list's brackets, are
// encoding/json's MarshalIndent of the list: for no, one and several
// elements, at the top level and deeper.
func TestAppendElement(t *testing.T) {
	flows := analyzetest.Report(t, "../../testdata/mix_small.pcap", analyze.Options{}).Flows
	require.NotEmpty(t, flows)
	for _, tc := range []struct {
		name   string
		prefix string
		list   []any
	}{
		{"empty", "", nil},
		{"one number", "", []any{7}},
		{"mixed", "  ", []any{"a", nil, map[string]int{"k": 1}, []int{}, &inner{N: 2}}},
		{"flows", "  ", []any{&flows[0], &flows[len(flows)-1]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.MarshalIndent(tc.list, tc.prefix, Indent)
			require.NoError(t, err)
			e := NewEncoder(tc.prefix + Indent)
			got := []byte("[")
			for i, v := range tc.list {
				got, err = e.AppendElement(got, v, i == 0)
				require.NoError(t, err)
			}
			if len(tc.list) > 0 {
				got = append(got, "\n"+tc.prefix...)
			}
			got = append(got, ']')
			if tc.list == nil {
				want = []byte("[]") // MarshalIndent writes a nil list as null
			}
			assert.Equal(t, string(want), string(got))
		})
	}
}

// FuzzLikeEncodingJSON: strings, floats and times of any value are
// written as encoding/json writes them (a map's keys UTF-8: those that
// are not, the library writes with U+FFFD itself; see the package doc).
func FuzzLikeEncodingJSON(f *testing.F) {
	f.Add("a<b>&c", 905793896.5059708, int64(0), uint16(0))
	f.Add("\xff\xfe\u2028", 1e-7, int64(1<<62), uint16(3))
	f.Add("µs \"q\\ \x00\x1f\x7f", 1e21, int64(-1), uint16(65535))
	f.Fuzz(func(t *testing.T, s string, x float64, ns int64, n uint16) {
		v := &all{S: s, K: kind(s), F: x, T: time.Unix(0, ns).UTC(), M: map[string]uint64{strings.ToValidUTF8(s, "\ufffd"): uint64(n), "": 1},
			L: []inner{{N: n, F: float32(x)}}}
		want, werr := json.MarshalIndent(v, "  ", "  ")
		e := NewEncoder("  ")
		got, err := e.Append(nil, v)
		if werr != nil {
			require.Error(t, err, "encoding/json fails: %v", werr)
			return
		}
		require.NoError(t, err)
		require.Equal(t, string(want), string(got))
	})
}

// TestPrepared: an encoder prepared for flows has built their plans
// (what building costs, which a worker given no flows costs too), and
// writes the flows of a real capture without a garbage of their own: the
// second time through, not one allocation.
func TestPrepared(t *testing.T) {
	flows := analyzetest.Report(t, "../../testdata/mix_small.pcap", analyze.Options{}).Flows
	e := NewEncoder("    ")
	e.Prepare(&analyze.Flow{})
	assert.NotNil(t, e.plans[reflect.TypeFor[analyze.Flow]()])
	buf := make([]byte, 0, 1<<20)
	for pass := range 2 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range flows {
			var err error
			if buf, err = e.Append(buf[:0], &flows[i]); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		if pass == 1 {
			assert.Zero(t, after.Mallocs-before.Mallocs)
		}
	}
}
