//go:build dra136

package main

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
)

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

// isForPod is resourceclaim.IsForPod as the scheduler calls it (no PodGroup owners).
func isForPod(pod *corev1.Pod, claim *resourceapi.ResourceClaim) error {
	return resourceclaim.IsForPod(pod, claim, false)
}

// celFeatures are the CEL environment options the scheduler compiles selectors with.
func celFeatures(gates map[string]bool) cel.Features {
	return cel.Features{
		EnableConsumableCapacity: gates["DRAConsumableCapacity"],
		EnableListTypeAttributes: gates["DRAListTypeAttributes"],
	}
}

// isNodeLocalFailure reports the allocator's "unschedulable on this node only" errors.
func isNodeLocalFailure(err error) bool {
	return errors.Is(err, structured.ErrFailedAllocationOnNode)
}
