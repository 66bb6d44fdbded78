"""What the API server refuses in a ResourceClaim, a ResourceClaimTemplate, a ResourceSlice, a
DeviceClass or a Pod's DRA fields.

`kubectl apply` decodes strictly (an unknown or misspelt field is an error, not ignored) and the
API server then validates. Both are mirrored here so that `explain -f` can call such an object an
input error instead of judging something that could never be created:

- strict decoding against the resource.k8s.io v1, v1beta2 and v1beta1 schemas
  (k8s.io/api resource/*/types.go): unknown fields, wrong JSON types, quantities that do not parse;
- k8s.io/kubernetes pkg/apis/resource/validation/validation.go: names (DNS labels and
  subdomains), request counts and limits, allocationMode, exactly/firstAvailable, tolerations,
  constraint and config references, opaque parameters, CEL selectors that do not compile;
- pkg/apis/core/validation for the Pod fields explain reads (spec.resourceClaims and the
  containers' resources), and the JSON types of every Pod field the scheduler reads
  (schemas.POD_TYPES, and a Node's: type_errors checks only those, for `--from` files);
- ResourceSlices and DeviceClasses (validateResourceSliceSpec, validateDevice, validateCounterSet,
  validateDeviceClassSpec) on the v1 shape objects.normalise gives them, so `--from` files and
  `explain -f` refuse what could never be created (a 1.35+ slice with both devices and counters).

Field paths follow the object's own version: a v1beta1 request is flat, so its class is
`spec.devices.requests[0].deviceClassName`, where v1 has `...requests[0].exactly.deviceClassName`.
Messages use the API server's words ("Invalid value", "Required value", "Unsupported value").
Objects of other kinds are checked only as far as the allocator reads them (objects.normalise).

The modules: ``validate`` (the entry point), per kind ``claims``, ``pods``, ``slices`` (with
``devices``) and ``classes``; ``decoding`` over ``schemas``, ``names``, ``limits``, ``problems``
(the errors collected) and ``compilers`` (CEL, loaded on first use).
"""

from .validate import type_errors, validate_object

__all__ = ["type_errors", "validate_object"]
