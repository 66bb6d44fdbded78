//go:build dra135 || dra134

package main

import (
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
)

// isForPod is resourceclaim.IsForPod of 1.34/1.35 (no PodGroups yet).
func isForPod(pod *corev1.Pod, claim *resourceapi.ResourceClaim) error {
	return resourceclaim.IsForPod(pod, claim)
}

// celFeatures are the CEL environment options the scheduler compiles selectors with
// (no list-type attributes before 1.36).
func celFeatures(gates map[string]bool) cel.Features {
	return cel.Features{EnableConsumableCapacity: gates["DRAConsumableCapacity"]}
}
