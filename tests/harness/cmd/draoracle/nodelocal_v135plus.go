//go:build !dra134

package main

import (
	"errors"

	"k8s.io/dynamic-resource-allocation/structured"
)

// isNodeLocalFailure reports the allocator's "unschedulable on this node only" errors.
func isNodeLocalFailure(err error) bool {
	return errors.Is(err, structured.ErrFailedAllocationOnNode)
}
