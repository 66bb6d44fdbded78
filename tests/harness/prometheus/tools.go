//go:build tools

// Pins the commands built by tests/harness/build.sh (target "prometheus") in this module's go.mod.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
