package server

import (
	"errors"
	"fmt"
	"testing"
)

func TestIsConfigError(t *testing.T) {
	ce := &ConfigError{Message: "target t: myCnf sets max_connections = 100"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", errors.New("boom"), false},
		{"config error", ce, true},
		{"wrapped", fmt.Errorf("provision t: %w", ce), true},
	}
	for _, tc := range tests {
		if got := IsConfigError(tc.err); got != tc.want {
			t.Errorf("IsConfigError(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if ce.Error() != ce.Message {
		t.Errorf("Error() = %q, want the message", ce.Error())
	}
}
