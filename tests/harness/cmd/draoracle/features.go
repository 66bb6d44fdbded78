package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// defaultGates are the DRA feature gates the scheduler reads, with their defaults in each Kubernetes
// minor version, taken from the versioned feature table of k8s.io/kubernetes v1.37.2
// (pkg/features/kube_features.go). Gates that are GA and locked in a version keep their value there.
//
// DRAFractionalCapacityRange is off in 1.37: its default-on spec needs --min-compatibility-version
// >= 1.37, and a 1.37 binary defaults to 1.36.
var defaultGates = map[string]map[string]bool{
	"1.34": {
		"DRAAdminAccess":               true,
		"DRAConsumableCapacity":        false,
		"DRADeviceBindingConditions":   false,
		"DRADeviceTaints":              false,
		"DRAExtendedResource":          false,
		"DRAPartitionableDevices":      false,
		"DRAPrioritizedList":           true,
		"DRAResourceClaimDeviceStatus": true,
	},
	"1.35": {
		"DRAAdminAccess":               true,
		"DRAConsumableCapacity":        false,
		"DRADeviceBindingConditions":   false,
		"DRADeviceTaintRules":          false,
		"DRADeviceTaints":              false,
		"DRAExtendedResource":          false,
		"DRAPartitionableDevices":      false,
		"DRAPrioritizedList":           true,
		"DRAResourceClaimDeviceStatus": true,
	},
	"1.36": {
		"DRAAdminAccess":               true,
		"DRAConsumableCapacity":        true,
		"DRADeviceBindingConditions":   true,
		"DRADeviceTaintRules":          false,
		"DRADeviceTaints":              true,
		"DRAExtendedResource":          true,
		"DRAListTypeAttributes":        false,
		"DRAPartitionableDevices":      true,
		"DRAPrioritizedList":           true,
		"DRAResourceClaimDeviceStatus": true,
	},
	"1.37": {
		"DRAAdminAccess":               true,
		"DRAConsumableCapacity":        true,
		"DRADerivedAttributes":         false,
		"DRADeviceBindingConditions":   true,
		"DRADeviceCompatibilityGroups": false,
		"DRADeviceTaintRules":          true,
		"DRADeviceTaints":              true,
		"DRAExtendedResource":          true,
		"DRAFractionalCapacityRange":   false,
		"DRAListTypeAttributes":        false,
		"DRAOptionalNodeOperations":    false,
		"DRAPartitionableDevices":      true,
		"DRAPrioritizedList":           true,
		"DRAResourceClaimDeviceStatus": true,
	},
}

// gatesFor returns the gates of a Kubernetes version with overrides applied. This binary only
// knows the version whose allocator it was built with (builtForVersion).
func gatesFor(version string, overrides map[string]bool) (map[string]bool, error) {
	version = strings.TrimPrefix(version, "v")
	if version == "" {
		version = builtForVersion
	}
	if version != builtForVersion {
		return nil, fmt.Errorf("this draoracle is built with the allocator of Kubernetes %s, not %s: use draoracle-%s", builtForVersion, version, version)
	}
	defaults := defaultGates[version]
	gates := make(map[string]bool, len(defaults))
	for name, enabled := range defaults {
		gates[name] = enabled
	}
	for name, enabled := range overrides {
		if _, known := defaults[name]; !known {
			return nil, fmt.Errorf("unknown feature gate %q for Kubernetes %s (known: %s)", name, version, strings.Join(sortedKeys(defaults), ", "))
		}
		gates[name] = enabled
	}
	return gates, nil
}

// parseFeatureGates parses "A=true,B=false" as kube-scheduler's --feature-gates does.
func parseFeatureGates(text string) (map[string]bool, error) {
	gates := map[string]bool{}
	for _, item := range strings.Split(text, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, found := strings.Cut(item, "=")
		if !found {
			return nil, fmt.Errorf("feature gate %q: expected NAME=true|false", item)
		}
		enabled, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("feature gate %q: %q is not a boolean", name, value)
		}
		gates[strings.TrimSpace(name)] = enabled
	}
	return gates, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
