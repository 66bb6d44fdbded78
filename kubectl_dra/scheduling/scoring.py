"""The Score half of a scheduling cycle: which of the feasible nodes the scheduler prefers.

Mirrors pkg/scheduler/schedule_one.go (schedulePod, prioritizeNodes, numFeasibleNodesToFind) and
framework/runtime/framework.go (RunPreScorePlugins, RunScorePlugins, normalizeScores):

- one feasible node is taken as it is: nothing is scored (`score` returns {});
- PreScore runs once per plugin over the feasible nodes; a plugin whose PreScore says Skip is not
  scored at all (it is absent from every NodeScore.by_plugin); a PreScore error aborts the attempt;
- Score runs per plugin and node, then the plugin's NormalizeScore (if it has one) over all the
  nodes' raw scores; every score must then be in 0..100, and is multiplied by the plugin's weight
  (the default profile's, pkg/scheduler/apis/config/v1/default_plugins.go); the total is the sum;
- the node with the highest total is picked. Ties: 1.34's selectHost picks one of the top nodes
  uniformly at random (reservoir sampling); from 1.35 a max-heap pops one, ordered only by the
  total (its Randomizer is set only when extenders score), so the winner is the one the heap
  happens to surface from the order the parallel filters found the nodes in. Neither can be
  predicted from outside; `best` names the whole tie set, by name.

Which nodes are feasible at all when the cluster is large depends on numFeasibleNodesToFind: the
scheduler stops filtering once it has that many feasible nodes (`num_feasible_nodes_to_find`),
starting where the previous cycle stopped (sched.nextStartNodeIndex, which rotates with every
pod the scheduler has handled). We cannot know that index, so past that count we cannot know
which feasible nodes it scores: callers that cut the list must say so.

A plugin participates when its module has `score` and a WEIGHT; `pre_score(cycle, nodes) ->
Status` and `normalize_score(cycle, {node: raw}) -> {node: score}` are optional. A plugin that
fails raises ScoringError, which is what the scheduler's attempt ends with (the pod is retried
with backoff; no node is picked and no FitError is written).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .cycle import Cycle
from .resources import NodeInfo
from .status import Code, Status

MAX_NODE_SCORE = 100   # framework.MaxNodeScore (= MaxScore)
MIN_NODE_SCORE = 0     # framework.MinScore
# schedule_one.go: below this many nodes every node is filtered; never fewer are looked for.
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
# In cycle.state after `score`: the names of the plugins whose PreScore said Skip.
SKIPPED = "scoring/skipped-plugins"


class ScorePlugin(Protocol):
    """What scoring calls of a plugin that scores (one module of plugins/; PreScore and NormalizeScore,
    where it has them, are looked up as pre_score and normalize_score)."""

    NAME: str
    WEIGHT: int

    def score(self, cycle: Cycle, info: NodeInfo) -> int: ...


class ScoringError(Exception):
    """A PreScore, Score or NormalizeScore failure: upstream schedulePod returns it as the
    attempt's error. `str()` is the scheduler's wording."""

    def __init__(self, plugin: str, message: str, stage: str = "Score") -> None:
        super().__init__(message)
        self.plugin, self.message, self.stage = plugin, message, stage

    def __str__(self) -> str:
        if self.stage == "PreScore":
            return f'running PreScore plugin "{self.plugin}": {self.message}'
        if self.stage == "Weight":
            return f"applying score defaultWeights on Score plugins: {self.message}"
        if self.stage == "NormalizeScore":
            return f'running Normalize on Score plugins: plugin "{self.plugin}" failed with: {self.message}'
        return f'running Score plugins: plugin "{self.plugin}" failed with: {self.message}'


@dataclass(frozen=True)
class NodeScore:
    """One node's result of prioritizeNodes: the total and each scored plugin's weighted score."""

    total: int
    by_plugin: dict[str, int]


def go_div(numerator: int, denominator: int) -> int:
    """Go's integer division: the quotient truncated toward zero (Python's // floors)."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient


def default_normalize(scores: dict[str, int], reverse: bool = False,
                      max_priority: int = MAX_NODE_SCORE) -> dict[str, int]:
    """plugins/helper/normalize_score.go DefaultNormalizeScore: scores scaled from [0, max] to
    [0, max_priority]; `reverse` turns them into max_priority - score. All zero: all stay 0, or
    all become max_priority when reversed."""
    highest = max(scores.values(), default=0)
    if highest <= 0:
        return {name: max_priority if reverse else value for name, value in scores.items()}
    scaled = {name: go_div(max_priority * value, highest) for name, value in scores.items()}
    return {name: max_priority - value for name, value in scaled.items()} if reverse else scaled


def num_feasible_nodes_to_find(total_nodes: int, percentage: int | None = None) -> int:
    """schedule_one.go numFeasibleNodesToFind: how many feasible nodes the scheduler looks for
    before it stops filtering. `percentage`: percentageOfNodesToScore (the profile's or the
    global one); None or 0 is the default, adaptive: 50 - nodes/125 percent, at least 5 percent.
    Fewer than 100 nodes are all looked at; otherwise never fewer than 100."""
    if total_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return total_nodes
    if not percentage:
        percentage = max(50 - total_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(total_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass
class ScoreMemo:
    """What scoring one pod leaves for the next pod alike (fit scores many pods of one kind over
    mostly the same nodes): the PreScore status of the plugins in `statuses_for`, and each node's
    raw score for those in `raw_for` (a subset). The caller vouches that for pods alike such a
    status depends on nothing that changes between them, that such a raw score depends only on
    its node (the caller drops a node's entries when something changes there: `forget`), and that
    their NormalizeScore reads no PreScore state: PreScore is not run for a plugin that skips, or
    whose raw scores are all known."""

    statuses_for: frozenset[str] = frozenset()
    raw_for: frozenset[str] = frozenset()
    statuses: dict[str, Status | None] = field(default_factory=dict)
    raw: dict[str, dict[str, int]] = field(default_factory=dict)

    def forget(self, nodes: Iterable[str], plugins: Iterable[str]) -> None:
        """Drop the raw scores of `plugins` on `nodes` (something on those nodes changed)."""
        for name in plugins:
            known = self.raw.get(name)
            if known:
                for node in nodes:
                    known.pop(node, None)

    def pre_score(self, plugin: ScorePlugin, cycle: Cycle, feasible: list[NodeInfo],
                  names: frozenset[str]) -> Status | None:
        """The plugin's PreScore status: remembered where it may be, else run (and remembered).
        `names`: the feasible nodes' names."""
        name = plugin.NAME
        run = getattr(plugin, "pre_score", None)
        if name not in self.statuses_for:
            return run(cycle, feasible) if run is not None else None
        if name in self.statuses:
            status = self.statuses[name]
            if status is None or status.code == Code.SKIP:
                return status
            if name in self.raw_for and self.raw.get(name, {}).keys() >= names:
                return status
        status = run(cycle, feasible) if run is not None else None
        if status is None or status.code in (Code.SUCCESS, Code.SKIP):
            self.statuses[name] = status
        return status

    def raw_scores(self, plugin: ScorePlugin, cycle: Cycle, feasible: list[NodeInfo], names: list[str]) -> dict[str, int]:
        """The plugin's raw score of each feasible node (`names`: theirs, in order): remembered
        where it may be, else run (in the nodes' order, as without a memo)."""
        if plugin.NAME not in self.raw_for:
            return {name: plugin.score(cycle, info) for name, info in zip(names, feasible)}
        known = self.raw.setdefault(plugin.NAME, {})
        for name, info in zip(names, feasible):
            if name not in known:
                known[name] = plugin.score(cycle, info)
        return {name: known[name] for name in names}


def score(cycle: Cycle, feasible: list[NodeInfo], plugins: Sequence[ScorePlugin],
          memo: ScoreMemo | None = None) -> dict[str, NodeScore]:
    """{node name: NodeScore} for the feasible NodeInfos, as prioritizeNodes gives them; {} when
    fewer than two nodes are feasible (schedulePod takes a single feasible node unscored).
    `plugins`: the score plugins in profile order. Raises ScoringError as the scheduler fails.
    `memo`: what scoring earlier pods alike left (ScoreMemo), used and brought up to date."""
    if len(feasible) < 2:
        return {}
    memo = memo or ScoreMemo()   # remembering nothing: every PreScore and Score is run
    names = [info.name for info in feasible]
    name_set = frozenset(names)
    active = []
    skipped: set[str] = set()
    for plugin in plugins:
        status = memo.pre_score(plugin, cycle, feasible, name_set)
        if status is not None and status.code == Code.SKIP:
            skipped.add(plugin.NAME)
            continue
        if status is not None and status.code != Code.SUCCESS:
            raise ScoringError(plugin.NAME, status.message or status.detail or status.code.value, "PreScore")
        active.append(plugin)
    cycle.state[SKIPPED] = skipped
    weighted: list[tuple[str, dict[str, int], int]] = []
    for plugin in active:
        raw = memo.raw_scores(plugin, cycle, feasible, names)
        normalize = getattr(plugin, "normalize_score", None)
        final = normalize(cycle, raw) if normalize is not None else raw
        weighted.append((plugin.NAME, final, plugin.WEIGHT))
    _check_range(names, weighted)
    results = {}
    for name in names:
        by_plugin = {plugin_name: final[name] * weight for plugin_name, final, weight in weighted}
        results[name] = NodeScore(sum(by_plugin.values()), by_plugin)
    return results


def _check_range(names: list[str], weighted: list[tuple[str, dict[str, int], int]]) -> None:
    """Every normalised score must be in 0..100: the first that is not (nodes in order, each
    node's plugins in order) fails the attempt."""
    if all(MIN_NODE_SCORE <= min(final.values(), default=MIN_NODE_SCORE)
           and max(final.values(), default=MAX_NODE_SCORE) <= MAX_NODE_SCORE for _, final, _ in weighted):
        return
    for name in names:
        for plugin_name, final, _ in weighted:
            value = final[name]
            if value > MAX_NODE_SCORE or value < MIN_NODE_SCORE:
                raise ScoringError(plugin_name, f'plugin "{plugin_name}" returns an invalid score {value}, it should '
                                                f"in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after "
                                                "normalizing", "Weight")


def best(scores: dict[str, NodeScore]) -> list[str]:
    """The nodes of the top total, by name: the scheduler binds one of them, and which one it is
    cannot be told from outside (see the module's note on ties)."""
    if not scores:
        return []
    top = max(s.total for s in scores.values())
    return sorted(name for name, s in scores.items() if s.total == top)
