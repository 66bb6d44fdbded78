package main

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
)

const (
	verdictFits          = "Fits"
	verdictUnschedulable = "Unschedulable"
	verdictError         = "Error"

	// filterTimeout is the default of the scheduler's DynamicResourcesArgs.FilterTimeout.
	filterTimeout = 10 * time.Second
)

// target names what to allocate: the claims of a pod, or a single claim.
type target struct {
	Pod   string `json:"pod,omitempty"`   // namespace/name
	Claim string `json:"claim,omitempty"` // namespace/name
}

type claimReport struct {
	Claim string `json:"claim"`
	// Allocated is true for claims that were allocated before: they are checked against
	// their node selector, not allocated again.
	Allocated bool `json:"allocated"`
}

type nodeReport struct {
	Node    string `json:"node"`
	Verdict string `json:"verdict"`
	Error   string `json:"error"`
	// Results and NodeSelector have one entry per claim that needed allocation, in pod order.
	Results      [][]resourceapi.DeviceRequestAllocationResult `json:"results"`
	NodeSelector []*corev1.NodeSelector                        `json:"nodeSelector"`
}

type report struct {
	Allocator string        `json:"allocator"`
	Claims    []claimReport `json:"claims"`
	Nodes     []nodeReport  `json:"nodes"`
}

// targetClaims returns the claims of the target in pod order, or the scheduler's PreFilter message
// when the pod cannot be considered on any node.
func (s *snapshot) targetClaims(t target) ([]*resourceapi.ResourceClaim, string, error) {
	if t.Claim != "" {
		claim, ok := s.claims[t.Claim]
		if !ok {
			return nil, "", fmt.Errorf("ResourceClaim %s not found in the input", t.Claim)
		}
		return []*resourceapi.ResourceClaim{claim}, "", nil
	}
	pod, ok := s.pods[t.Pod]
	if !ok {
		return nil, "", fmt.Errorf("Pod %s not found in the input", t.Pod)
	}
	var claims []*resourceapi.ResourceClaim
	for i := range pod.Spec.ResourceClaims {
		name, mustCheckOwner, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err != nil {
			return nil, err.Error(), nil
		}
		if name == nil {
			continue
		}
		claim, ok := s.claims[pod.Namespace+"/"+*name]
		if !ok {
			return nil, apierrors.NewNotFound(resourceapi.Resource("resourceclaims"), *name).Error(), nil
		}
		if claim.DeletionTimestamp != nil {
			return nil, fmt.Sprintf("resourceclaim %q is being deleted", claim.Name), nil
		}
		if mustCheckOwner {
			if err := isForPod(pod, claim); err != nil {
				return nil, err.Error(), nil
			}
		}
		claims = append(claims, claim)
	}
	return claims, "", nil
}

// preFilterClassCheck mirrors the scheduler's PreFilter check of the requests' device classes,
// which makes a pod unschedulable on every node before the allocator runs.
func (s *snapshot) preFilterClassCheck(claim *resourceapi.ResourceClaim, gates map[string]bool) (message string, fatal error) {
	check := func(className, requestName string) (string, error) {
		if className == "" {
			return "", fmt.Errorf("request %s: unsupported request type", requestName)
		}
		if _, ok := s.classes[className]; !ok {
			return fmt.Sprintf("request %s: device class %s does not exist", requestName, className), nil
		}
		return "", nil
	}
	for _, request := range claim.Spec.Devices.Requests {
		switch {
		case request.Exactly != nil:
			if msg, err := check(request.Exactly.DeviceClassName, request.Name); msg != "" || err != nil {
				return msg, err
			}
		case len(request.FirstAvailable) > 0:
			if !gates["DRAPrioritizedList"] {
				return fmt.Sprintf("resource claim %s/%s, request %s: has subrequests, but the DRAPrioritizedList feature is disabled", claim.Namespace, claim.Name, request.Name), nil
			}
			for _, sub := range request.FirstAvailable {
				if msg, err := check(sub.DeviceClassName, request.Name+"/"+sub.Name); msg != "" || err != nil {
					return msg, err
				}
			}
		default:
			return fmt.Sprintf("resource claim %s/%s, request %s: unknown request type", claim.Namespace, claim.Name, request.Name), nil
		}
	}
	return "", nil
}

// allocatedState collects the devices of allocated claims the way the scheduler's claim tracker
// does: admin-access results are not counted; with consumable capacity, results with a share ID
// count as shared allocations with their consumed capacity.
func (s *snapshot) allocatedState(consumableCapacity bool) structured.AllocatedState {
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, claim := range s.claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, result := range claim.Status.Allocation.Devices.Results {
			if result.AdminAccess != nil && *result.AdminAccess {
				continue
			}
			deviceID := structured.MakeDeviceID(result.Driver, result.Pool, result.Device)
			if consumableCapacity && result.ShareID != nil {
				state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(deviceID, result.ShareID))
				if result.ConsumedCapacity != nil {
					state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(deviceID, result.ConsumedCapacity))
				}
				continue
			}
			state.AllocatedDevices.Insert(deviceID)
		}
	}
	return state
}

// evaluate runs the allocator for the target's claims on every node (or only onlyNode), mapping
// the outcome to a verdict like the scheduler's DynamicResources Filter does.
func evaluate(ctx context.Context, snap *snapshot, t target, gates map[string]bool, onlyNode string) (*report, error) {
	claims, preFilterMessage, err := snap.targetClaims(t)
	if err != nil {
		return nil, err
	}
	nodes := snap.nodes
	if onlyNode != "" {
		nodes = nil
		for _, node := range snap.nodes {
			if node.Name == onlyNode {
				nodes = append(nodes, node)
			}
		}
		if len(nodes) == 0 {
			return nil, fmt.Errorf("Node %s not found in the input", onlyNode)
		}
	}

	// DRAExtendedResource: the scheduler's claim for the pod's extended resources comes after the
	// pod's own claims (extended.go).
	var ext *extendedState
	var pod *corev1.Pod
	if t.Pod != "" && preFilterMessage == "" {
		pod = snap.pods[t.Pod]
		if ext = snap.preFilterExtended(pod, gates, len(claims)); ext != nil {
			claims = append(claims, ext.claim)
		}
	}

	rep := &report{Claims: []claimReport{}, Nodes: make([]nodeReport, 0, len(nodes))}
	var toAllocate []*resourceapi.ResourceClaim
	var availableOn []*nodeaffinity.NodeSelector
	for _, claim := range claims {
		allocated := claim.Status.Allocation != nil
		rep.Claims = append(rep.Claims, claimReport{Claim: claim.Namespace + "/" + claim.Name, Allocated: allocated})
		if !allocated {
			toAllocate = append(toAllocate, claim)
			continue
		}
		if claim.Status.Allocation.NodeSelector != nil {
			selector, err := nodeaffinity.NewNodeSelector(claim.Status.Allocation.NodeSelector)
			if err != nil {
				return nil, fmt.Errorf("ResourceClaim %s/%s: status.allocation.nodeSelector: %w", claim.Namespace, claim.Name, err)
			}
			availableOn = append(availableOn, selector)
		}
	}
	for _, claim := range toAllocate {
		if preFilterMessage != "" {
			break
		}
		if ext != nil && claim == ext.claim {
			continue // validated per node by filterExtended
		}
		message, fatal := snap.preFilterClassCheck(claim, gates)
		if fatal != nil {
			return everyNode(rep, nodes, verdictError, fatal.Error()), nil
		}
		preFilterMessage = message
	}
	if preFilterMessage != "" {
		return everyNode(rep, nodes, verdictUnschedulable, preFilterMessage), nil
	}

	var allocator structured.Allocator
	if len(toAllocate) > 0 {
		features := allocatorFeatures(gates)
		celCache := cel.NewCache(10, celFeatures(gates))
		slices := snap.slices
		if gates["DRADeviceTaintRules"] {
			slices = snap.slicesWithTaintRules()
		}
		allocator, err = structured.NewAllocator(ctx, features, snap.allocatedState(gates["DRAConsumableCapacity"]), classLister(snap.classes), slices, celCache)
		if err != nil {
			return everyNode(rep, nodes, verdictError, err.Error()), nil
		}
		rep.Allocator = allocatorChannel(allocator)
	}

	for _, node := range nodes {
		nr := nodeReport{Node: node.Name, Verdict: verdictFits, Results: [][]resourceapi.DeviceRequestAllocationResult{}, NodeSelector: []*corev1.NodeSelector{}}
		nodeToAllocate := toAllocate
		if ext != nil {
			nodeClaim, message := ext.filterExtended(pod, node)
			if message != "" {
				nr.Verdict, nr.Error = verdictUnschedulable, message
				rep.Nodes = append(rep.Nodes, nr)
				continue
			}
			if nodeClaim == nil && ext.noUserClaim {
				rep.Nodes = append(rep.Nodes, nr) // device plugins provide everything here
				continue
			}
			if nodeClaim != nil {
				nodeToAllocate = make([]*resourceapi.ResourceClaim, len(toAllocate))
				for i, claim := range toAllocate {
					if claim == ext.claim {
						claim = nodeClaim
					}
					nodeToAllocate[i] = claim
				}
			}
		}
		if allocator != nil {
			allocCtx, cancel := context.WithTimeout(ctx, filterTimeout)
			results, err := allocator.Allocate(allocCtx, node, nodeToAllocate)
			cancel()
			switch {
			case errors.Is(err, context.DeadlineExceeded):
				nr.Verdict, nr.Error = verdictError, fmt.Sprintf("node %s: timed out trying to allocate devices", node.Name)
			case isNodeLocalFailure(err):
				nr.Verdict, nr.Error = verdictUnschedulable, err.Error()
			case err != nil:
				nr.Verdict, nr.Error = verdictError, err.Error()
			case len(results) != len(nodeToAllocate):
				nr.Verdict, nr.Error = verdictUnschedulable, "cannot allocate all claims"
			default:
				for _, result := range results {
					devices := result.Devices.Results
					if devices == nil {
						devices = []resourceapi.DeviceRequestAllocationResult{}
					}
					nr.Results = append(nr.Results, devices)
					nr.NodeSelector = append(nr.NodeSelector, result.NodeSelector)
				}
			}
		}
		if nr.Verdict == verdictFits {
			for _, selector := range availableOn {
				if !selector.Match(node) {
					nr.Verdict, nr.Error = verdictUnschedulable, "resourceclaim not available on the node"
					nr.Results, nr.NodeSelector = [][]resourceapi.DeviceRequestAllocationResult{}, []*corev1.NodeSelector{}
					break
				}
			}
		}
		rep.Nodes = append(rep.Nodes, nr)
	}
	return rep, nil
}

func everyNode(rep *report, nodes []*corev1.Node, verdict, message string) *report {
	for _, node := range nodes {
		rep.Nodes = append(rep.Nodes, nodeReport{Node: node.Name, Verdict: verdict, Error: message,
			Results: [][]resourceapi.DeviceRequestAllocationResult{}, NodeSelector: []*corev1.NodeSelector{}})
	}
	return rep
}

// allocatorChannel names the implementation NewAllocator picked ("stable", "incubating",
// "experimental"). The method's result type is internal to the upstream module, hence reflection.
func allocatorChannel(allocator structured.Allocator) string {
	method := reflect.ValueOf(allocator).MethodByName("Channel")
	if !method.IsValid() {
		return "unknown"
	}
	return strings.TrimSpace(method.Call(nil)[0].String())
}
