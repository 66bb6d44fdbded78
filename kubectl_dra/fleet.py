"""Reading a fleet: every member's Session loaded at once on a bounded pool of threads, each with
its own request timeout, so one cluster that is unreachable, forbidden or slow is recorded as
Unknown with its reason and never stops (or empties) the others.

Knows nothing of click or output formats, like the Session it multiplies."""

from __future__ import annotations

import concurrent.futures
import dataclasses

from kubectl_dra.errors import CommandError
from kubectl_dra.session import Session
from kubectl_dra.sources.fleet import Member

READERS = 8
"""Clusters read at once: each read is a handful of LISTs waiting on the network, so threads
overlap them; more would only queue behind the API servers' own limits."""

MEMBER_REQUEST_TIMEOUT_S = 30.0
"""A fleet member's limit per API request when --request-timeout is not given: one cluster that
never answers must not hold the whole fleet's answer."""


@dataclasses.dataclass
class Loaded:
    """One member after reading: its session, or why it could not be read (the cluster is Unknown)."""

    member: Member
    session: Session | None
    failure: str | None = None

    @property
    def name(self) -> str:
        return self.member.name

    @property
    def known(self) -> bool:
        return self.session is not None

    def status(self) -> dict:
        """The member as JSON metadata names it: `status` Known or Unknown, and why."""
        status = {"name": self.name, "status": "Known" if self.known else "Unknown"}
        if self.session is not None and self.session.store is not None:
            status["kubernetesVersion"] = f"1.{self.session.store.kubernetes_minor()}"
        if self.failure:
            status["reason"] = self.failure
        return status


def load_fleet(members: list[Member]) -> list[Loaded]:
    """Every member read, in the members' order; warnings stay in each session (printed by the
    caller with the member's name)."""

    def read(member: Member) -> Loaded:
        config = member.config
        if not config.offline and config.request_timeout is None:
            config = dataclasses.replace(config, request_timeout=MEMBER_REQUEST_TIMEOUT_S)
        session = None
        try:
            session = Session(config)
            session.quiet = True
            session.read()
        except CommandError as error:
            return Loaded(member, None, str(error))
        except Exception as error:  # a member's failure of any kind is that member's, never the fleet's
            return Loaded(member, None, f"{type(error).__name__}: {' '.join(str(error).split())}")
        finally:
            if session is not None:
                session.release_warnings()
        return Loaded(member, session)

    if len(members) == 1:
        return [read(members[0])]
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(READERS, len(members)),
                                               thread_name_prefix="fleet-read") as pool:
        return list(pool.map(read, members))
