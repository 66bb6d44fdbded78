"""Reading a fleet: every member's Session loaded at once on a bounded pool of threads, each with
its own request timeout, so one cluster that is unreachable, forbidden or slow is recorded as
Unknown with its reason and never stops (or empties) the others.

Knows nothing of click or output formats, like the Session it multiplies."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import sys
from typing import TYPE_CHECKING, Callable, TypeVar, cast

from kubectl_dra.errors import CommandError
from kubectl_dra.session import Session
from kubectl_dra.sources.fleet import Member

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

READERS = 8
"""Clusters read at once (threads in load_fleet, worker processes in each_member_in_workers): a
live read is a handful of LISTs waiting on the network, which they overlap; more would only queue
behind the API servers' own limits."""

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


def read_member(member: Member) -> Loaded:
    """One member read; a failure of any kind is that member's (Unknown), never the fleet's."""
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
    except Exception as error:
        return Loaded(member, None, f"{type(error).__name__}: {' '.join(str(error).split())}")
    finally:
        if session is not None:
            session.release_warnings()
    return Loaded(member, session)


def load_fleet(members: list[Member]) -> list[Loaded]:
    """Every member read, in the members' order; warnings stay in each session (printed by the
    caller with the member's name)."""
    if len(members) == 1:
        return [read_member(members[0])]
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(READERS, len(members)),
                                               thread_name_prefix="fleet-read") as pool:
        return list(pool.map(read_member, members))


Result = TypeVar("Result")


def each_member_in_workers(members: list[Member], work: Callable[[Loaded, int], Result],
                           warm: Callable[[], None] = lambda: None) -> list[Result]:
    """`work(loaded, index)` for every member (index: its place in `members`), each read and worked
    on in a forked process of its own, at most READERS at once; only work's result (picklable, and
    small: a plan, rows) comes back, in the members' order. Reading a cluster is mostly Python
    (decoding, interning, checking, the model) and so is judging it: threads of one interpreter run
    them one at a time, processes run them on every core. A worker's exception is raised here.
    `warm` imports what `work` needs and the reading needs is imported here too, once, before the
    first fork: each worker importing them again cost as much as judging a cluster.
    Where fork is not the way to start a process (not Linux) or one member is asked for, the
    members are read on threads and worked on here, one after another."""
    if len(members) == 1 or not sys.platform.startswith("linux"):
        return [work(loaded, index) for index, loaded in enumerate(load_fleet(members))]
    import multiprocessing
    import multiprocessing.connection

    _warm_reading(members)
    warm()
    context = multiprocessing.get_context("fork")
    results: dict[int, Result] = {}
    running: dict = {}
    waiting = list(enumerate(members))
    for stream in (sys.stdout, sys.stderr):  # what is buffered here must not be written again by a child
        stream.flush()
    try:
        while waiting or running:
            while waiting and len(running) < READERS:
                index, member = waiting.pop(0)
                receiver, sender = context.Pipe(duplex=False)
                process = context.Process(target=_work_and_send, args=(member, index, work, sender),
                                          name=f"fleet-{member.name}", daemon=True)
                process.start()
                sender.close()
                running[receiver] = (index, member, process)
            for ready in multiprocessing.connection.wait(list(running)):
                index, member, process = running.pop(ready)
                receiver = cast("Connection", ready)
                try:
                    outcome, value = receiver.recv()
                except EOFError:
                    process.join()
                    raise RuntimeError(f"cluster {member.name}: its worker process ended "
                                       f"(exit status {process.exitcode}) without an answer") from None
                finally:
                    receiver.close()
                process.join()
                if outcome == "raised":
                    raise value
                results[index] = value
    finally:
        for _, _, process in running.values():
            process.kill()
            process.join()
    return [results[index] for index in range(len(members))]


def _warm_reading(members: list[Member]) -> None:
    # What Session.read imports on its way: the source of each kind of member, and for files the
    # allocator's validation (with the CEL engine) that checks them.
    from kubectl_dra.json_codec import prepare_decoders

    prepare_decoders()
    if any(member.config.offline for member in members):
        from allocator import CelCompileError, validate_object  # noqa: F401
        from kubectl_dra.sources import files  # noqa: F401
    if not all(member.config.offline for member in members):
        from kubectl_dra.sources import cluster  # noqa: F401
        from kubectl_dra.sources.apiserver import load_client_library

        load_client_library()
    from kubectl_dra import missing_nodes  # noqa: F401


def _work_and_send(member: Member, index: int, work: Callable[[Loaded, int], Result], sender) -> None:
    try:
        message: tuple = ("done", work(read_member(member), index))
    except BaseException as error:
        message = ("raised", error)
    try:
        sender.send(message)
    except Exception as error:  # an exception that does not pickle still says what it was
        sender.send(("raised", RuntimeError(f"cluster {member.name}: {type(error).__name__}: {error}")))
    sender.close()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(0)  # the child's heap is the parent's copy and a whole cluster: nothing to tear down
