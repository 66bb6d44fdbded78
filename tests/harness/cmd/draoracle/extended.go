package main

// Extended resources backed by DRA (DRAExtendedResource): a pod asking for an extended resource
// that a DeviceClass backs gets a claim the scheduler builds in memory and allocates with the
// pod's own claims. This file re-implements what the scheduler does around the allocator for it,
// following k8s.io/kubernetes v1.37.2
// pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go
// (preFilterExtendedResources, filterExtendedResources, createRequestsAndMappings) and claims.go
// (the special claim comes after the pod's own claims). Those functions live in k8s.io/kubernetes,
// which the harness module does not depend on; the pod's requests are computed by the exported
// k8s.io/component-helpers/resource.PodRequests the scheduler calls.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	resourcehelper "k8s.io/component-helpers/resource"
)

const (
	// specialClaimInMemName: the name of the in-memory claim; deliberately not a valid object name.
	specialClaimInMemName = "<extended-resources>"
	// resourceDeviceClassPrefix and extendedResourceClaimAnnotation are resourceapi constants of
	// k8s.io/api v0.36+; spelled out so that the 1.34/1.35 builds compile too.
	resourceDeviceClassPrefix       = "deviceclass.resource.kubernetes.io/"
	extendedResourceClaimAnnotation = "resource.kubernetes.io/extended-resource-claim"

	messageStaleExtendedClaim = "cannot schedule extended resource claim"
	messageCannotFitResource  = "cannot fit resource"
)

// extendedState is what PreFilter keeps for the pod's extended resources.
type extendedState struct {
	claim       *resourceapi.ResourceClaim // the in-memory claim, or the one created in an earlier cycle
	podScalar   map[corev1.ResourceName]int64
	classes     map[corev1.ResourceName]*resourceapi.DeviceClass
	noUserClaim bool
}

// extendedResourceClasses maps extended resource names to DeviceClasses as the scheduler's
// ExtendedResourceCache does (k8s.io/dynamic-resource-allocation
// deviceclass/extendedresourcecache/extendedresourcecache.go updateResourceName2class), fed with
// the classes in name order, the order of the informer's initial list. Of two classes naming the same
// resource the newer wins, on equal creation times the lower name; a class that loses to one added
// before it is skipped whole, so its implicit deviceclass.resource.kubernetes.io/<class> name is not
// mapped either.
func extendedResourceClasses(classes map[string]*resourceapi.DeviceClass) map[corev1.ResourceName]*resourceapi.DeviceClass {
	names := make([]string, 0, len(classes))
	for name := range classes {
		names = append(names, name)
	}
	sort.Strings(names)
	mapping := map[corev1.ResourceName]*resourceapi.DeviceClass{}
	for _, name := range names {
		class := classes[name]
		explicit := class.Spec.ExtendedResourceName
		if explicit != nil {
			if current := mapping[corev1.ResourceName(*explicit)]; current != nil {
				newer, older := class.CreationTimestamp.UnixNano(), current.CreationTimestamp.UnixNano()
				if newer < older || (newer == older && class.Name >= current.Name) {
					continue
				}
			}
			mapping[corev1.ResourceName(*explicit)] = class
		}
		mapping[corev1.ResourceName(resourceDeviceClassPrefix+class.Name)] = class
	}
	return mapping
}

// isExtendedResourceName is k8s.io/kubernetes pkg/apis/core/v1/helper.IsExtendedResourceName.
func isExtendedResourceName(name corev1.ResourceName) bool {
	text := string(name)
	if !strings.Contains(text, "/") || strings.Contains(text, "kubernetes.io/") ||
		strings.HasPrefix(text, corev1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(corev1.DefaultResourceRequestsPrefix+text)) == 0
}

// isDRAExtendedResourceName is pkg/scheduler/util.IsDRAExtendedResourceName.
func isDRAExtendedResourceName(name corev1.ResourceName) bool {
	return isExtendedResourceName(name) || strings.HasPrefix(string(name), resourceDeviceClassPrefix)
}

// preFilterExtended is preFilterExtendedResources: nil when the gate is off or no request of the
// pod is backed by a class; otherwise the claim created in an earlier cycle (found by annotation and
// controlling owner among all claims) or a new in-memory one without requests.
func (s *snapshot) preFilterExtended(pod *corev1.Pod, gates map[string]bool, userClaims int) *extendedState {
	if !gates["DRAExtendedResource"] {
		return nil
	}
	classes := extendedResourceClasses(s.classes)
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	mapped := false
	for name, quantity := range requests {
		if !quantity.IsZero() && isDRAExtendedResourceName(name) && classes[name] != nil {
			mapped = true
		}
	}
	if !mapped {
		return nil
	}
	state := &extendedState{podScalar: map[corev1.ResourceName]int64{}, classes: classes, noUserClaim: userClaims == 0}
	for name, quantity := range requests {
		if isDRAExtendedResourceName(name) { // framework.NewResource keeps scalars; these are the ones read
			state.podScalar[name] = quantity.Value()
		}
	}
	keys := make([]string, 0, len(s.claims))
	for key := range s.claims {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		claim := s.claims[key]
		if claim.Annotations[extendedResourceClaimAnnotation] != "true" {
			continue
		}
		for _, owner := range claim.OwnerReferences {
			if owner.Name == pod.Name && owner.Controller != nil && *owner.Controller && owner.UID == pod.UID {
				state.claim = claim
				return state
			}
		}
	}
	controller := true
	state.claim = &resourceapi.ResourceClaim{}
	state.claim.Namespace, state.claim.Name, state.claim.UID = pod.Namespace, specialClaimInMemName, "extended-resources-in-memory"
	state.claim.Annotations = map[string]string{extendedResourceClaimAnnotation: "true"}
	state.claim.OwnerReferences = []metav1.OwnerReference{
		{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &controller}}
	return state
}

// filterExtended is filterExtendedResources for one node: the claim to allocate there (nil when the
// node's device plugins provide everything, or the claim is allocated already), or the
// Unschedulable message.
func (st *extendedState) filterExtended(pod *corev1.Pod, node *corev1.Node) (*resourceapi.ResourceClaim, string) {
	if st.claim.Spec.Devices.Requests != nil {
		return nil, messageStaleExtendedClaim // PostFilter deletes it; the next attempt starts anew
	}
	viaDRA := map[corev1.ResourceName]int64{}
	for name, amount := range st.podScalar {
		if amount == 0 {
			continue
		}
		allocatable, advertised := node.Status.Allocatable[name]
		if st.classes[name] != nil && allocatable.Value() == 0 {
			viaDRA[name] = amount
		} else if !advertised {
			return nil, messageCannotFitResource
		}
	}
	if len(viaDRA) == 0 && st.noUserClaim {
		return nil, ""
	}
	if st.claim.Status.Allocation != nil {
		return nil, ""
	}
	nodeClaim := st.claim.DeepCopy()
	nodeClaim.Spec.Devices.Requests = st.createRequests(pod, viaDRA)
	return nodeClaim, ""
}

// createRequests is createRequestsAndMappings without the mappings: per resource (sorted), one
// request per long-lived container (regular ones and sidecars) asking for it, and of the plain init
// containers' requests (each reusing the requests of long-lived containers after it) the largest;
// all sorted by name, container-<index>-request-<index of the resource in the container's sorted
// requests>.
func (st *extendedState) createRequests(pod *corev1.Pod, viaDRA map[corev1.ResourceName]int64) []resourceapi.DeviceRequest {
	containers := append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...)
	numInit := len(pod.Spec.InitContainers)
	var longLived, shortLived []int
	for i, c := range containers {
		if i < numInit && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
			shortLived = append(shortLived, i)
			continue
		}
		longLived = append(longLived, i)
	}
	names := make([]corev1.ResourceName, 0, len(viaDRA))
	for name := range viaDRA {
		names = append(names, name)
	}
	slices.Sort(names)
	var requests []resourceapi.DeviceRequest
	for _, name := range names {
		class := st.classes[name]
		if class == nil {
			continue
		}
		longRequests := make([]*resourceapi.DeviceRequest, len(containers))
		for _, i := range longLived {
			longRequests[i] = containerRequest(i, &containers[i], name, class.Name, nil)
		}
		var largest *resourceapi.DeviceRequest
		for _, i := range shortLived {
			request := containerRequest(i, &containers[i], name, class.Name, longRequests[i:])
			if request != nil && (largest == nil || largest.Exactly.Count < request.Exactly.Count) {
				largest = request
			}
		}
		if largest != nil {
			requests = append(requests, *largest)
		}
		for _, request := range longRequests {
			if request != nil {
				requests = append(requests, *request)
			}
		}
	}
	sort.Slice(requests, func(i, j int) bool { return requests[i].Name < requests[j].Name })
	return requests
}

// containerRequest is createResourceRequestAndMappings: nil when the container does not ask for the
// resource (as an integer) or the reusable requests cover it.
func containerRequest(index int, container *corev1.Container, name corev1.ResourceName, className string, reusable []*resourceapi.DeviceRequest) *resourceapi.DeviceRequest {
	quantity, ok := container.Resources.Requests[name]
	if !ok {
		return nil
	}
	wanted, ok := (&quantity).AsInt64()
	if !ok || wanted == 0 {
		return nil
	}
	sum := int64(0)
	for _, r := range reusable {
		if r != nil {
			sum += r.Exactly.Count
			if sum >= wanted {
				return nil
			}
		}
	}
	keys := make([]string, 0, len(container.Resources.Requests))
	for key := range container.Resources.Requests {
		keys = append(keys, string(key))
	}
	slices.Sort(keys)
	return &resourceapi.DeviceRequest{
		Name: fmt.Sprintf("container-%d-request-%d", index, max(0, slices.Index(keys, string(name)))),
		Exactly: &resourceapi.ExactDeviceRequest{
			DeviceClassName: className,
			AllocationMode:  resourceapi.DeviceAllocationModeExactCount,
			Count:           wanted - sum,
		},
	}
}
