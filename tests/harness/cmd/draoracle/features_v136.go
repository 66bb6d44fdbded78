//go:build dra136

package main

import "k8s.io/dynamic-resource-allocation/structured"

const builtForVersion = "1.36"

// allocatorFeatures maps feature gates to allocator features like the scheduler's
// dynamicresources.AllocatorFeatures in k8s.io/kubernetes v1.36.
func allocatorFeatures(gates map[string]bool) structured.Features {
	return structured.Features{
		AdminAccess:            gates["DRAAdminAccess"],
		PrioritizedList:        gates["DRAPrioritizedList"],
		PartitionableDevices:   gates["DRAPartitionableDevices"],
		DeviceTaints:           gates["DRADeviceTaints"],
		DeviceBindingAndStatus: gates["DRADeviceBindingConditions"] && gates["DRAResourceClaimDeviceStatus"],
		ConsumableCapacity:     gates["DRAConsumableCapacity"],
		ListTypeAttributes:     gates["DRAListTypeAttributes"],
	}
}
