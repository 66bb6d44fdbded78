//go:build dra134

package main

// isNodeLocalFailure: 1.34 has no node-local allocation failures (invalid pools are fatal there).
func isNodeLocalFailure(err error) bool {
	return false
}
