// Package jsonindent writes Go values as encoding/json's MarshalIndent
// writes them, byte for byte, straight into indented form and several
// times faster: the flows of a report of 200,000 flows are most of its
// JSON (issue 24).
//
// encoding/json encodes a value and then indents the whole again;
// goccy/go-json indents as it goes, but writes each key's indentation
// byte by byte. An Encoder builds, once per type, a plan of the type's
// fields with each key already quoted, and each level's new line and
// indentation once per depth, so that a field costs a copy of its key and
// its value. Types the plans do not cover (their own MarshalJSON or
// MarshalText, interfaces, []byte, maps not keyed by strings, embedded
// fields) are written by goccy/go-json, which writes them as
// encoding/json does.
//
// Files:
//   - encoder.go: the Encoder and the plans of pointers, lists, maps and
//     structs;
//   - values.go: scalars, times and strings as encoding/json writes them.
package jsonindent
