//go:build !dra136 && !dra135 && !dra134

package main

import "k8s.io/dynamic-resource-allocation/structured"

const builtForVersion = "1.37"

// allocatorFeatures maps feature gates to allocator features like the scheduler's
// dynamicresources.AllocatorFeatures in k8s.io/kubernetes v1.37.
func allocatorFeatures(gates map[string]bool) structured.Features {
	return structured.Features{
		AdminAccess:             gates["DRAAdminAccess"],
		PrioritizedList:         gates["DRAPrioritizedList"],
		PartitionableDevices:    gates["DRAPartitionableDevices"],
		DeviceTaints:            gates["DRADeviceTaints"],
		DeviceBindingAndStatus:  gates["DRADeviceBindingConditions"] && gates["DRAResourceClaimDeviceStatus"],
		ConsumableCapacity:      gates["DRAConsumableCapacity"],
		FractionalCapacityRange: gates["DRAFractionalCapacityRange"],
		ListTypeAttributes:      gates["DRAListTypeAttributes"],
		OptionalNodeOperations:  gates["DRAOptionalNodeOperations"],
		DerivedAttributes:       gates["DRADerivedAttributes"],
		CompatibilityGroups:     gates["DRADeviceCompatibilityGroups"],
	}
}
