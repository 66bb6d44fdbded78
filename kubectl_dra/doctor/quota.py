"""ResourceQuotas on device classes: how close each DRA limit of a namespace is to its hard value.

At its limit, the quota admission plugin refuses every new claim of that class in the namespace,
and the resourceclaim controller cannot create the claims of pods' templates: those pods stay
Pending with no claim. What a quota limits and what a claim is charged: kubectl_dra.scheduling.quota.
"""

from __future__ import annotations

from kubectl_dra.doctor.common import plural
from kubectl_dra.doctor.report import OK, PROBLEM, WARNING, Context, Finding
from kubectl_dra.scheduling.quota import quota_uses

NEAR_LIMIT = 0.8
"""A quota this used (or more) of its hard limit is close to it."""


def quotas_near_limit(ctx: Context) -> Finding:
    model = ctx.model
    uses = quota_uses(model.raw.get("ResourceQuota", ()), model.objects.device_classes)
    if not uses:
        return Finding(OK, "no ResourceQuota limits a device class")
    full = [u for u in uses if u.at_limit]
    near = [u for u in uses if not u.at_limit and u.fraction is not None and u.fraction >= NEAR_LIMIT]
    if not full and not near:
        return Finding(OK, f"{plural(len(uses), 'quota limit')} on device classes, "
                       f"each under {round(NEAR_LIMIT * 100)}% used")
    first = (full or near)[0]
    next_command = f"kubectl describe resourcequota {first.quota} -n {first.namespace}"
    objects = [u.words() for u in full + near]
    if full:
        namespaces = sorted({u.namespace for u in full})
        message = (f"{plural(len(full), 'quota limit')} on device classes reached "
                   f"(namespace {', '.join(namespaces)}): new claims of those classes there are refused, and pods "
                   f"whose claims come from templates stay Pending")
        if near:
            message += f"; {len(near)} more at {round(NEAR_LIMIT * 100)}% or more"
        return Finding(PROBLEM, message, objects, next_command)
    return Finding(WARNING, f"{plural(len(near), 'quota limit')} on device classes "
                   f"{round(NEAR_LIMIT * 100)}% or more used: the next claims of those classes may be refused",
                   objects, next_command)
