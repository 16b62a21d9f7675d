package jsonindent_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/jsonindent"
)

// edge holds the kinds of values the report's types hold.
type edge struct {
	S   string            `json:"s"`
	F   float64           `json:"f"`
	F32 float32           `json:"f32"`
	T   time.Time         `json:"t"`
	TP  *time.Time        `json:"tp"`
	P   *uint64           `json:"p"`
	PO  *uint64           `json:"po,omitempty"`
	L   []uint16          `json:"l"`
	LO  []uint16          `json:"lo,omitempty"`
	M   map[string]uint64 `json:"m"`
	MO  map[string]uint64 `json:"mo,omitempty"`
	SO  string            `json:"so,omitempty"`
	FO  float64           `json:"fo,omitempty"`
}

// severity holds a value with its own MarshalText.
type severity struct {
	Sev  analyze.Severity `json:"sev"`
	Kind analyze.Kind     `json:"kind"`
}

// edges nests edge values a level deeper.
type edges struct {
	Kids []edge `json:"kids"`
}

// edgeCases are values whose JSON the table of TestBytes holds.
func edgeCases() []struct {
	name string
	v    any
} {
	one := uint64(1)
	zone := time.Date(2026, 12, 2, 4, 5, 6, 7000, time.FixedZone("x", -(5*3600+30*60)))
	return []struct {
		name string
		v    any
	}{
		{"zero", &edge{}},
		{"html", &edge{S: "a<b>&c"}},
		{"escapes", &edge{S: "\"q\" \\ \b\f\n\r\t\x00\x01\x1f\x7f /"}},
		{"unicode", &edge{S: "µs ✓ \u2028\u2029 \U0001F600"}},
		{"invalid utf-8", &edge{S: "\xff\xfe a\xe2\x82 \xed\xa0\x80 \xc0\xaf"}},
		{"floats", []float64{0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e20, 1e21, 1e-6, 9.99e-7, 1e-7, 123456789e-15, math.MaxFloat64, math.SmallestNonzeroFloat64, 905793896.5059708}},
		{"float32", []float32{0.1, 1e-7, 3.4e38, 16777217, 1e21}},
		{"times", []time.Time{{}, time.Unix(0, 1).UTC(), time.Unix(1700000000, 120000000).UTC(), zone, time.Unix(5, 0).In(time.FixedZone("UTC", 0))}},
		{"full", &edge{S: "x", F: 2.5, F32: 0.25, T: time.Unix(1, 5).UTC(), TP: &zone, P: &one, PO: &one, L: []uint16{}, LO: []uint16{7},
			M: map[string]uint64{"z": 1, "a": 2, "<é>": 3}, MO: map[string]uint64{}, SO: "s", FO: -0.5}},
		{"text marshaler", &severity{Sev: analyze.SeverityInfo, Kind: "a<b"}},
		{"nested", &edges{Kids: []edge{{S: "kid", L: []uint16{1, 2}, M: map[string]uint64{}}, {}}}},
		{"empty nested", &edges{Kids: []edge{}}},
		{"finding", &analyze.Finding{Frame: 7, Time: time.Unix(2, 3).UTC(), Kind: analyze.KindMalformed, Severity: analyze.SeverityWarning,
			Flow: analyze.FlowID{Src: "10.0.0.1", Dst: "10.0.0.2", DestQP: 0x11}, Detail: "<&> \u2028 \xff", File: "a&b.pcap"}},
		{"nil", nil},
		{"nil pointer", (*edge)(nil)},
		{"nested lists", [][]int{{}, {1, 2}, nil}},
		{"NaN", &edge{F: math.NaN()}},
		{"infinity", []float32{float32(math.Inf(1))}},
		{"no severity", &severity{Sev: 9}},
		{"year 10000", &edge{T: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}
}

// oldBytes is the JSON of each of edgeCases (prefix "    ") as the encoder
// of commit abc5c29 (plans, and goccy/go-json for the types they left to
// it) wrote it; "" where it failed.
var oldBytes = map[string]string{
	"zero":           "{\n      \"s\": \"\",\n      \"f\": 0,\n      \"f32\": 0,\n      \"t\": \"0001-01-01T00:00:00Z\",\n      \"tp\": null,\n      \"p\": null,\n      \"l\": null,\n      \"m\": null\n    }",
	"html":           "{\n      \"s\": \"a\\u003cb\\u003e\\u0026c\",\n      \"f\": 0,\n      \"f32\": 0,\n      \"t\": \"0001-01-01T00:00:00Z\",\n      \"tp\": null,\n      \"p\": null,\n      \"l\": null,\n      \"m\": null\n    }",
	"escapes":        "{\n      \"s\": \"\\\"q\\\" \\\\ \\b\\f\\n\\r\\t\\u0000\\u0001\\u001f\x7f /\",\n      \"f\": 0,\n      \"f32\": 0,\n      \"t\": \"0001-01-01T00:00:00Z\",\n      \"tp\": null,\n      \"p\": null,\n      \"l\": null,\n      \"m\": null\n    }",
	"unicode":        "{\n      \"s\": \"µs ✓ \\u2028\\u2029 😀\",\n      \"f\": 0,\n      \"f32\": 0,\n      \"t\": \"0001-01-01T00:00:00Z\",\n      \"tp\": null,\n      \"p\": null,\n      \"l\": null,\n      \"m\": null\n    }",
	"invalid utf-8":  "{\n      \"s\": \"\\ufffd\\ufffd a\\ufffd\\ufffd \\ufffd\\ufffd\\ufffd \\ufffd\\ufffd\",\n      \"f\": 0,\n      \"f32\": 0,\n      \"t\": \"0001-01-01T00:00:00Z\",\n      \"tp\": null,\n      \"p\": null,\n      \"l\": null,\n      \"m\": null\n    }",
	"floats":         "[\n      0,\n      -0,\n      1,\n      -1.5,\n      0.1,\n      100000000000000000000,\n      1e+21,\n      0.000001,\n      9.99e-7,\n      1e-7,\n      1.23456789e-7,\n      1.7976931348623157e+308,\n      5e-324,\n      905793896.5059708\n    ]",
	"float32":        "[\n      0.1,\n      1e-7,\n      3.4e+38,\n      16777216,\n      1e+21\n    ]",
	"times":          "[\n      \"0001-01-01T00:00:00Z\",\n      \"1970-01-01T00:00:00.000000001Z\",\n      \"2023-11-14T22:13:20.12Z\",\n      \"2026-12-02T04:05:06.000007-05:30\",\n      \"1970-01-01T00:00:05Z\"\n    ]",
	"full":           "{\n      \"s\": \"x\",\n      \"f\": 2.5,\n      \"f32\": 0.25,\n      \"t\": \"1970-01-01T00:00:01.000000005Z\",\n      \"tp\": \"2026-12-02T04:05:06.000007-05:30\",\n      \"p\": 1,\n      \"po\": 1,\n      \"l\": [],\n      \"lo\": [\n        7\n      ],\n      \"m\": {\n        \"\\u003cé\\u003e\": 3,\n        \"a\": 2,\n        \"z\": 1\n      },\n      \"so\": \"s\",\n      \"fo\": -0.5\n    }",
	"text marshaler": "{\n      \"sev\": \"info\",\n      \"kind\": \"a\\u003cb\"\n    }",
	"nested":         "{\n      \"kids\": [\n        {\n          \"s\": \"kid\",\n          \"f\": 0,\n          \"f32\": 0,\n          \"t\": \"0001-01-01T00:00:00Z\",\n          \"tp\": null,\n          \"p\": null,\n          \"l\": [\n            1,\n            2\n          ],\n          \"m\": {}\n        },\n        {\n          \"s\": \"\",\n          \"f\": 0,\n          \"f32\": 0,\n          \"t\": \"0001-01-01T00:00:00Z\",\n          \"tp\": null,\n          \"p\": null,\n          \"l\": null,\n          \"m\": null\n        }\n      ]\n    }",
	"empty nested":   "{\n      \"kids\": []\n    }",
	"finding":        "{\n      \"frame\": 7,\n      \"time\": \"1970-01-01T00:00:02.000000003Z\",\n      \"kind\": \"malformed\",\n      \"severity\": \"warning\",\n      \"flow\": \"10.0.0.1 → 10.0.0.2 QP 0x000011\",\n      \"detail\": \"\\u003c\\u0026\\u003e \\u2028 \\ufffd\",\n      \"file\": \"a\\u0026b.pcap\"\n    }",
	"nil":            "null",
	"nil pointer":    "null",
	"nested lists":   "[\n      [],\n      [\n        1,\n        2\n      ],\n      null\n    ]",
	"NaN":            "", // an error
	"infinity":       "", // an error
	"no severity":    "", // an error
	"year 10000":     "", // an error
}

// TestBytes: every edge case is written as the encoder of abc5c29 wrote
// it (HTML characters, U+2028 and U+2029, control bytes and invalid UTF-8
// escaped; floats in exponent form below 1e-6 and from 1e21; times in
// RFC 3339 with their zone; nil lists null, empty ones []; map keys
// sorted; the findings' own MarshalJSON re-indented), and fails where it
// failed.
func TestBytes(t *testing.T) {
	cases := edgeCases()
	require.Len(t, oldBytes, len(cases))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, ok := oldBytes[c.name]
			require.True(t, ok)
			e := jsonindent.NewEncoder("    ")
			for range 2 { // the second with all the encoder builds once built
				got, err := e.Append([]byte("x"), c.v)
				if want == "" {
					require.Error(t, err)
					continue
				}
				require.NoError(t, err)
				require.Equal(t, "x"+want, string(got))
			}
		})
	}
}
