package testenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMustHaveTshark(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"local run", nil, false},
		{"CI=true", map[string]string{"CI": "true"}, true},
		{"CI=1", map[string]string{"CI": "1"}, true},
		{"CI=false", map[string]string{"CI": "false"}, false},
		{"CI=0", map[string]string{"CI": "0"}, false},
		{"CI allowed to skip", map[string]string{"CI": "true", AllowNoTshark: "1"}, false},
		{"allow set to something else", map[string]string{"CI": "true", AllowNoTshark: "yes"}, true},
		{"allow outside CI", map[string]string{AllowNoTshark: "1"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, MustHaveTshark(func(k string) string { return tc.env[k] }))
		})
	}
}
