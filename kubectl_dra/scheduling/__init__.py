"""Why a pod fits or does not fit, node by node, as the scheduler decides: its whole filter chain
(kubectl_dra.scheduling.framework), the embedded allocator for DynamicResources, the scheduler's
FailedScheduling message, and a short summary. Pure logic over plain API dicts."""

from .explain import ExplainError, explain_claim, explain_objects, explain_pod
from .explanation import Explanation, NodeExplanation, Summary

__all__ = ["ExplainError", "Explanation", "NodeExplanation", "Summary", "explain_claim", "explain_objects",
           "explain_pod"]
