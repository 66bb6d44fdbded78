"""Will a whole workload fit? Its pods placed one after another as the scheduler places them, or
all together (`gang`) with a bounded backtracking search, optionally on a cluster with nodes
cloned from an existing one (`add_nodes`, as cluster-autoscaler builds a template node).

Every judgement is the explain judgement: kubectl_dra.scheduling.framework's filter chain with the
embedded allocator for DynamicResources. A placed pod is committed before the next is judged: its
claims (templates instantiated per pod, named claims shared) get the allocation the allocator chose,
reserved for the pod, and the pod is bound to the node (counted in the node's requested resources),
exactly like the snapshot of a cluster where the scheduler had placed it.

Each pod goes where the scheduler would bind it: the best-scored of the first
numFeasibleNodesToFind feasible nodes (kubectl_dra.scheduling.scoring), ties by name, the other
equally good nodes reported; the gang search tries nodes in name order.
The JSON form (`to_dict`) is documented in docs/FIT.md; `capacity` is in fit_capacity.py.

Modules: plan (results), placer (the cluster while pods are placed), workload (a workload's pods
as stored), sequential, gang, added_nodes (--add-node).
"""

from .added_nodes import clone_nodes, fit_with_nodes
from .gang import CutShort, greedy_first_failure, most_on_nodes, place_gang
from .placer import GROUP_CLAIMS_ANNOTATION, Placer, group_cycle_state, node_signature, used_devices
from .plan import API_VERSION, GANG, KIND, SEQUENTIAL, FitPlan, PodPlacement
from .sequential import explain_at, place_sequential
from .workload import prepare

__all__ = ["API_VERSION", "GANG", "GROUP_CLAIMS_ANNOTATION", "KIND", "SEQUENTIAL", "CutShort", "FitPlan", "Placer",
           "PodPlacement", "clone_nodes", "explain_at", "fit_with_nodes", "greedy_first_failure", "group_cycle_state",
           "most_on_nodes", "node_signature", "place_gang", "place_sequential", "prepare", "used_devices"]
