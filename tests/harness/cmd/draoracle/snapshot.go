package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	drav1beta1 "k8s.io/dynamic-resource-allocation/api/v1beta1"
	drav1beta2 "k8s.io/dynamic-resource-allocation/api/v1beta2"
)

// taintRule is the part of a DeviceTaintRule the scheduler's slice tracker uses. It is decoded
// independently of the served version (v1alpha3 from 1.35 on, v1beta2, v1): the fields are the same.
type taintRule struct {
	Name     string
	Driver   *string
	Pool     *string
	Device   *string
	Selector bool
	Taint    resourceapi.DeviceTaint
}

type taintRuleJSON struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		DeviceSelector *struct {
			Driver *string `json:"driver"`
			Pool   *string `json:"pool"`
			Device *string `json:"device"`
		} `json:"deviceSelector"`
		Taint resourceapi.DeviceTaint `json:"taint"`
	} `json:"spec"`
}

// snapshot holds the objects of one input, converted to the types the allocator takes.
type snapshot struct {
	nodes   []*corev1.Node
	classes map[string]*resourceapi.DeviceClass
	slices  []*resourceapi.ResourceSlice
	claims  map[string]*resourceapi.ResourceClaim // key: namespace/name
	pods    map[string]*corev1.Pod                // key: namespace/name
	rules   []taintRule
}

type typeHeader struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

var conversionScheme = newConversionScheme()

func newConversionScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{resourceapi.AddToScheme, drav1beta1.AddToScheme, drav1beta2.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	return scheme
}

func newSnapshot() *snapshot {
	return &snapshot{
		classes: map[string]*resourceapi.DeviceClass{},
		claims:  map[string]*resourceapi.ResourceClaim{},
		pods:    map[string]*corev1.Pod{},
	}
}

// readDocuments splits multi-document YAML or a JSON stream into JSON documents.
func readDocuments(r io.Reader) ([]json.RawMessage, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bufio.NewReader(r), 64*1024)
	var docs []json.RawMessage
	for {
		var doc json.RawMessage
		err := decoder.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", len(docs)+1, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 || string(bytes.TrimSpace(doc)) == "null" {
			continue
		}
		docs = append(docs, doc)
	}
}

func loadSnapshot(docs []json.RawMessage) (*snapshot, error) {
	snap := newSnapshot()
	for _, doc := range docs {
		if err := snap.add(doc); err != nil {
			return nil, err
		}
	}
	sort.Slice(snap.nodes, func(i, j int) bool { return snap.nodes[i].Name < snap.nodes[j].Name })
	return snap, nil
}

func (s *snapshot) add(doc json.RawMessage) error {
	var header typeHeader
	if err := json.Unmarshal(doc, &header); err != nil {
		return fmt.Errorf("decoding object: %w", err)
	}
	if strings.HasSuffix(header.Kind, "List") {
		for _, item := range header.Items {
			if err := s.add(item); err != nil {
				return err
			}
		}
		return nil
	}
	group, version := splitAPIVersion(header.APIVersion)
	switch {
	case group == "" && header.Kind == "Node":
		node := &corev1.Node{}
		if err := unmarshalObject(doc, node, header); err != nil {
			return err
		}
		s.nodes = append(s.nodes, node)
	case group == "" && header.Kind == "Pod":
		pod := &corev1.Pod{}
		if err := unmarshalObject(doc, pod, header); err != nil {
			return err
		}
		s.pods[pod.Namespace+"/"+pod.Name] = pod
	case group == "resource.k8s.io" && header.Kind == "DeviceTaintRule":
		var raw taintRuleJSON
		if err := json.Unmarshal(doc, &raw); err != nil {
			return fmt.Errorf("DeviceTaintRule: %w", err)
		}
		rule := taintRule{Name: raw.Metadata.Name, Taint: raw.Spec.Taint}
		if sel := raw.Spec.DeviceSelector; sel != nil {
			rule.Selector, rule.Driver, rule.Pool, rule.Device = true, sel.Driver, sel.Pool, sel.Device
		}
		s.rules = append(s.rules, rule)
	case group == "resource.k8s.io" && header.Kind == "DeviceClass":
		class := &resourceapi.DeviceClass{}
		if err := decodeResource(doc, header, version, class, &resourcev1beta1.DeviceClass{}, &resourcev1beta2.DeviceClass{}); err != nil {
			return err
		}
		s.classes[class.Name] = class
	case group == "resource.k8s.io" && header.Kind == "ResourceSlice":
		slice := &resourceapi.ResourceSlice{}
		if err := decodeResource(doc, header, version, slice, &resourcev1beta1.ResourceSlice{}, &resourcev1beta2.ResourceSlice{}); err != nil {
			return err
		}
		s.slices = append(s.slices, slice)
	case group == "resource.k8s.io" && header.Kind == "ResourceClaim":
		claim := &resourceapi.ResourceClaim{}
		if err := decodeResource(doc, header, version, claim, &resourcev1beta1.ResourceClaim{}, &resourcev1beta2.ResourceClaim{}); err != nil {
			return err
		}
		applyClaimDefaults(claim)
		s.claims[claim.Namespace+"/"+claim.Name] = claim
	}
	// Everything else (namespaces, claim templates, ...) plays no part in allocation.
	return nil
}

func splitAPIVersion(apiVersion string) (group, version string) {
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i], apiVersion[i+1:]
	}
	return "", apiVersion
}

func unmarshalObject(doc json.RawMessage, into any, header typeHeader) error {
	if err := json.Unmarshal(doc, into); err != nil {
		return fmt.Errorf("%s %s: %w", header.APIVersion, header.Kind, err)
	}
	return nil
}

// decodeResource decodes a resource.k8s.io object of any served version into its v1 form, using the
// upstream conversion functions for the beta versions.
func decodeResource(doc json.RawMessage, header typeHeader, version string, out, beta1, beta2 runtime.Object) error {
	var in runtime.Object
	switch version {
	case "v1":
		return unmarshalObject(doc, out, header)
	case "v1beta1":
		in = beta1
	case "v1beta2":
		in = beta2
	default:
		return fmt.Errorf("%s %s: unsupported version", header.APIVersion, header.Kind)
	}
	if err := unmarshalObject(doc, in, header); err != nil {
		return err
	}
	if err := conversionScheme.Convert(in, out, nil); err != nil {
		return fmt.Errorf("%s %s: converting to v1: %w", header.APIVersion, header.Kind, err)
	}
	return nil
}

// slicesWithTaintRules returns the slices with the taints of matching DeviceTaintRules appended
// to their devices, as the scheduler's ResourceSlice tracker does: an unset driver, pool or device
// matches anything, a rule without a selector matches no device.
func (s *snapshot) slicesWithTaintRules() []*resourceapi.ResourceSlice {
	if len(s.rules) == 0 {
		return s.slices
	}
	patched := make([]*resourceapi.ResourceSlice, 0, len(s.slices))
	for _, slice := range s.slices {
		copied := slice
		for _, rule := range s.rules {
			if !rule.Selector ||
				(rule.Driver != nil && *rule.Driver != slice.Spec.Driver) ||
				(rule.Pool != nil && *rule.Pool != slice.Spec.Pool.Name) {
				continue
			}
			for i := range slice.Spec.Devices {
				if rule.Device != nil && *rule.Device != slice.Spec.Devices[i].Name {
					continue
				}
				if copied == slice {
					copied = slice.DeepCopy()
				}
				copied.Spec.Devices[i].Taints = append(copied.Spec.Devices[i].Taints, rule.Taint)
			}
		}
		patched = append(patched, copied)
	}
	return patched
}

// classLister serves DeviceClasses from the snapshot, like the scheduler's informer-backed lister.
type classLister map[string]*resourceapi.DeviceClass

func (l classLister) List() ([]*resourceapi.DeviceClass, error) {
	classes := make([]*resourceapi.DeviceClass, 0, len(l))
	for _, class := range l {
		classes = append(classes, class)
	}
	return classes, nil
}

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	class, ok := l[name]
	if !ok {
		return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclasses"), name)
	}
	return class, nil
}

// applyClaimDefaults sets what API defaulting sets on create (pkg/apis/resource/v1 defaults), so
// that hand-written claims are seen as the scheduler would see them once created: the allocation
// mode ExactCount with count 1, and the toleration operator Equal.
func applyClaimDefaults(claim *resourceapi.ResourceClaim) {
	defaultMode := func(mode *resourceapi.DeviceAllocationMode, count *int64) {
		if *mode == "" {
			*mode = resourceapi.DeviceAllocationModeExactCount
		}
		if *mode == resourceapi.DeviceAllocationModeExactCount && *count == 0 {
			*count = 1
		}
	}
	defaultOperators := func(tolerations []resourceapi.DeviceToleration) {
		for i := range tolerations {
			if tolerations[i].Operator == "" {
				tolerations[i].Operator = resourceapi.DeviceTolerationOpEqual
			}
		}
	}
	for i := range claim.Spec.Devices.Requests {
		request := &claim.Spec.Devices.Requests[i]
		if request.Exactly != nil {
			defaultMode(&request.Exactly.AllocationMode, &request.Exactly.Count)
			defaultOperators(request.Exactly.Tolerations)
		}
		for j := range request.FirstAvailable {
			defaultMode(&request.FirstAvailable[j].AllocationMode, &request.FirstAvailable[j].Count)
			defaultOperators(request.FirstAvailable[j].Tolerations)
		}
	}
}
