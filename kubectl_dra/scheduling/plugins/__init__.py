"""One module per upstream filter plugin (pkg/scheduler/framework/plugins/<name>/), each with its
NAME, the reason strings the scheduler counts, and pre_filter/filter over plain API dicts.

A plugin's pre_filter(cycle) returns (node names it narrows to or None, Status); filter(cycle,
node_info) returns the Status for one node.
"""
