package client

import (
	"slices"
	"testing"
)

// Register adds c to the registry for the rest of test t: a client that exists only in a test
// (fake_test.go) goes through every path a real one does.
func Register(t testing.TB, c Client) {
	before := clients
	clients = append(slices.Clip(clients), c)
	t.Cleanup(func() { clients = before })
}
