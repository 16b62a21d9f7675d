package synth

// The captures of testdata/ and their truth; TestGolden fails when they
// differ from what the generator writes now.
//go:generate go run ../../cmd/roce-synth golden -dir ../../testdata
