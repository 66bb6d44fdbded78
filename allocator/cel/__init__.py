"""DRA device selector CEL (k8s.io/dynamic-resource-allocation/cel) on cel-expr-python.

Two environments share one set of function names:

- the *check* environment declares everything with precise types: ``device`` is a
  protobuf message type and quantities and versions are ``kubernetes.Quantity`` /
  ``kubernetes.Semver``, so type errors and unknown functions or fields are compile
  errors as in Kubernetes. It has no implementations: cel-cpp refuses two Python
  overloads that differ only in message type.
- the *runtime* environment compiles without checking and declares the same functions
  over ``dyn`` with Python implementations that dispatch on their arguments.

At runtime quantities and versions are strings with a private-use prefix and a canonical
body, so CEL's ``==`` compares them by value like upstream's ``Equal``.

Upstream returns an empty map for an unknown domain in ``device.attributes`` and
``device.capacity``; cel-cpp maps cannot default, so direct lookups on those two maps are
rewritten before the runtime compile (see ``rewrites.rewrite_domain_lookups``).

Known differences from Kubernetes: quantities inside CEL are exact values without
upstream's int64/inf.Dec representation, so ``isInteger()``/``asInteger()`` accept every
integral value in int64 range (upstream refuses e.g. ``quantity("1.5Gi")`` and
``quantity("1000m")``); the Kubernetes lists, sets, URL, IP/CIDR, format and regex
``find`` libraries are not declared. A derived attribute comparing optional values hidden under
``dyn`` (``dyn(o) == ...``) or nested four deep evaluates without build metadata, so a version it
returns may lack its build (DerivedBuildMetadataWarning says so; see derived_equality.derived_renames).

The modules, from the outside in: ``selectors`` (SelectorCompiler, CompiledSelector) and
``derived`` (CompiledDerivedAttribute) compile and evaluate; ``environments`` declares the check
and runtime environments over ``descriptors`` (the checker's message types) and ``functions``
(the implementations, over the runtime ``values``); ``tokens`` lexes the source for ``rewrites``
and ``fingerprint``; ``messages`` words errors as cel-go does; ``literals``, ``binds`` and
``derived_equality`` read and rewrite the serialised AST through ``checked_types``, ``exprs`` and
``wire`` (the protobuf wire format); ``errors`` and ``device`` hold the shared types.
"""

from .derived import CompiledDerivedAttribute, DerivedBuildMetadataWarning
from .device import DeviceView, split_qualified_name
from .errors import CelCompileError, CelRuntimeError
from .selectors import CompiledSelector, SelectorCompiler

__all__ = [
    "CelCompileError", "CelRuntimeError", "CompiledDerivedAttribute", "CompiledSelector", "DerivedBuildMetadataWarning",
    "DeviceView", "SelectorCompiler", "split_qualified_name",
]
