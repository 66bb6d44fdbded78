//go:build dra134

package main

import "k8s.io/dynamic-resource-allocation/structured"

const builtForVersion = "1.34"

// allocatorFeatures maps feature gates to allocator features like the scheduler's
// dynamicresources.AllocatorFeatures in k8s.io/kubernetes v1.34.
func allocatorFeatures(gates map[string]bool) structured.Features {
	return structured.Features{
		AdminAccess:          gates["DRAAdminAccess"],
		ConsumableCapacity:   gates["DRAConsumableCapacity"],
		DeviceBinding:        gates["DRADeviceBindingConditions"],
		DeviceStatus:         gates["DRAResourceClaimDeviceStatus"],
		DeviceTaints:         gates["DRADeviceTaints"],
		PartitionableDevices: gates["DRAPartitionableDevices"],
		PrioritizedList:      gates["DRAPrioritizedList"],
	}
}
