//go:build dra134

package main

import (
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
)

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

// isForPod is resourceclaim.IsForPod as the scheduler calls it (no PodGroup owners).
func isForPod(pod *corev1.Pod, claim *resourceapi.ResourceClaim) error {
	return resourceclaim.IsForPod(pod, claim)
}

// celFeatures are the CEL environment options the scheduler compiles selectors with.
func celFeatures(gates map[string]bool) cel.Features {
	return cel.Features{
		EnableConsumableCapacity: gates["DRAConsumableCapacity"],
	}
}

// isNodeLocalFailure: 1.34 has no node-local allocation failures (invalid pools are fatal there).
func isNodeLocalFailure(err error) bool {
	return false
}
