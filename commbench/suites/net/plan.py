"""Which shift steps AllPairs runs: all P-1 at small scale, a host-aware cover beyond.

Shift k pairs every rank r with rank r+k (mod P). All P-1 shifts measure every ordered rank
pair, but at thousands of ranks P-1 steps of up to -time seconds each take hours. What the
verdicts need is every ordered *host* pair (and the pairs within each host that has several
ranks), and far fewer shifts reach them: with R ranks per host placed in blocks, shift m*R
pairs every rank of host h with a rank of host h+m, so the shifts R, 2R, ... (H-1)R and 1
cover every host pair in H steps.

`cover` finds such a set for any placement (greedily: the first host pair not yet covered,
taken in order of host distance (b - a) mod H, intra-host pairs last, gets the shift from
a's first rank to b's first rank, or from a's first rank to its second; each such shift
covers at least that pair). `make` applies --net-shifts (settings.py):

- all: every shift 1 ... P-1 (rule "all");
- auto (default): all while P-1 <= ALL_UP_TO (64), else the cover if it has at most
  AUTO_STEPS (256) steps, else a seeded sample of AUTO_STEPS of the cover's shifts;
- N: all when N >= P-1; else the cover, plus seeded random other shifts up to N, or a
  seeded sample of N of the cover's shifts when the cover has more than N.

A sample (rule "sampled") leaves host pairs unmeasured; `coverage` says which, and the
records and the text say so (allpairs.Fold, views/net_text.py). Seeds: --net-seed + 2000.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from commbench.suites.net.settings import ALL_UP_TO, AUTO_STEPS

LISTED = 64  # host pairs not covered: listed by name up to this many, counted always


@dataclass(frozen=True)
class NetPlan:
    shifts: tuple[int, ...]  # the shifts run, ascending
    of: int  # P - 1
    rule: str  # "all", "cover", "cover+random" or "sampled"
    cover: int  # steps of the host cover (0 when not computed: rule "all")
    requested: str  # --net-shifts as given: auto, all or N
    seed: int

    def text(self) -> str:
        n = len(self.shifts)
        if self.rule == "all":
            return f"all {n} of P-1 = {self.of} shifts (every rank pair)"
        if self.rule == "cover":
            return f"{n} of P-1 = {self.of} shifts: those that cover every host pair"
        if self.rule == "cover+random":
            return (
                f"{n} of P-1 = {self.of} shifts: the {self.cover} that cover every host pair and "
                f"{n - self.cover} more drawn at random (seed {self.seed})"
            )
        return (
            f"{n} of P-1 = {self.of} shifts, SAMPLED: drawn at random (seed {self.seed}) from "
            f"the {self.cover} that would cover every host pair (--net-shifts {self.requested})"
        )

    def to_dict(self) -> dict:
        return asdict(self) | {"shifts": list(self.shifts), "steps": len(self.shifts)}


def host_ids(rank_hosts: list[str]) -> tuple[np.ndarray, list[str]]:
    """(each rank's host index, the hosts in order of their first rank)."""
    order = list(dict.fromkeys(rank_hosts))
    at = {h: i for i, h in enumerate(order)}
    return np.array([at[h] for h in rank_hosts], dtype=np.int64), order


def needed(hid: np.ndarray, nhosts: int) -> np.ndarray:
    """The host pairs AllPairs measures: every ordered pair of hosts, and (h, h) where h
    has several ranks."""
    need = ~np.eye(nhosts, dtype=bool)
    need[np.diag_indices(nhosts)] = np.bincount(hid, minlength=nhosts) > 1
    return need


def coverage(shifts, hid: np.ndarray, nhosts: int) -> np.ndarray:
    """[a, b]: some shift pairs a rank of host a with a rank of host b."""
    cov = np.zeros((nhosts, nhosts), dtype=bool)
    ranks = np.arange(hid.size)
    for k in shifts:
        cov[hid, hid[(ranks + k) % hid.size]] = True
    return cov


def cover(hid: np.ndarray, nhosts: int) -> list[int]:
    """Shifts that cover every needed host pair (module docstring), ascending."""
    p = hid.size
    if nhosts == p:  # one rank per host: every rank pair is a host pair
        return list(range(1, p))
    first = np.full(nhosts, -1)
    second = np.full(nhosts, -1)
    for r in range(p - 1, -1, -1):  # the lowest two ranks of every host
        second[hid[r]], first[hid[r]] = first[hid[r]], r
    need, cov = needed(hid, nhosts), np.zeros((nhosts, nhosts), dtype=bool)
    ranks, hosts, shifts = np.arange(p), np.arange(nhosts), []
    for d in [*range(1, nhosts), 0]:  # host distance; pairs within a host last
        col = (hosts + d) % nhosts
        while True:
            todo = np.flatnonzero(need[hosts, col] & ~cov[hosts, col])
            if not todo.size:
                break
            a = int(todo[0])
            k = int((first[col[a]] - first[a]) % p if d else second[a] - first[a])
            cov[hid, hid[(ranks + k) % p]] = True
            shifts.append(k)
    return sorted(shifts)


def make(rank_hosts: list[str], requested: str = "auto", seed: int = 1) -> NetPlan:
    """The shifts AllPairs runs at these hosts under --net-shifts (module docstring)."""
    p = len(rank_hosts)
    of = p - 1
    auto = requested == "auto"
    limit = AUTO_STEPS if auto else of if requested == "all" else int(requested)
    if (of <= ALL_UP_TO) if auto else limit >= of:
        return NetPlan(tuple(range(1, p)), of, "all", 0, requested, seed)
    hid, order = host_ids(rank_hosts)
    chosen = cover(hid, len(order))
    rng = np.random.default_rng(seed + 2000)
    if len(chosen) > limit:
        picked = rng.choice(np.array(chosen), size=limit, replace=False)
        return NetPlan(
            tuple(sorted(int(k) for k in picked)), of, "sampled", len(chosen), requested, seed
        )
    if auto or len(chosen) == limit:
        return NetPlan(tuple(chosen), of, "cover", len(chosen), requested, seed)
    others = np.setdiff1d(np.arange(1, p), np.array(chosen))
    extra = rng.choice(others, size=limit - len(chosen), replace=False)
    shifts = tuple(sorted(chosen + [int(k) for k in extra]))
    return NetPlan(shifts, of, "cover+random", len(chosen), requested, seed)


def statement(plan: NetPlan, rank_hosts: list[str]) -> dict:
    """What the plan covers: counts of the host pairs measured and not, the first LISTED
    of those not measured by name, and the plan's own text."""
    hid, order = host_ids(rank_hosts)
    h = len(order)
    if plan.rule == "all":
        need = int(needed(hid, h).sum())
        covered, missing = need, []
    elif h == hid.size:  # one rank per host: shift k covers (a, a+k) for every a, disjointly
        need, covered = h * (h - 1), h * len(plan.shifts)
        gone = sorted(set(range(1, h)) - set(plan.shifts))
        missing = [[0, k] for k in gone[:LISTED]]
    else:
        want = needed(hid, h)
        miss = want & ~coverage(plan.shifts, hid, h)
        need, covered = int(want.sum()), int(want.sum() - miss.sum())
        missing = []
        for a in range(h):
            missing += [[a, int(b)] for b in np.flatnonzero(miss[a])[: LISTED - len(missing)]]
            if len(missing) >= LISTED:
                break
    return {
        **plan.to_dict(),
        "host_pairs": need,
        "covered": covered,
        "uncovered": need - covered,
        "uncovered_pairs": [[order[a], order[b]] for a, b in missing],
        "text": plan.text(),
    }


def fan_targets(rank_hosts: list[str], limit: int, seed: int) -> tuple[dict[str, int], dict]:
    """FanIn/FanOut's targets, {host: its first rank}, and what was chosen: every host up to
    `limit` hosts (0: no limit), beyond it `limit` hosts drawn at random (seed + 3000), in
    the hosts' order. A fan step costs every rank a sample, so H of them at thousands of
    hosts would take hours; a sample still judges each host it holds against the others."""
    first = {h: r for r, h in reversed(list(enumerate(rank_hosts)))}
    hosts = list(dict.fromkeys(rank_hosts))
    if not limit or len(hosts) <= limit:
        return {h: first[h] for h in hosts}, {"rule": "all", "hosts": len(hosts), "of": len(hosts)}
    rng = np.random.default_rng(seed + 3000)
    picked = sorted(int(i) for i in rng.choice(len(hosts), size=limit, replace=False))
    statement = {
        "rule": "sampled",
        "hosts": limit,
        "of": len(hosts),
        "seed": seed,
        "text": f"{limit} of {len(hosts)} hosts as targets, SAMPLED: drawn at random "
        f"(seed {seed}; --net-fans {limit})",
    }
    return {hosts[i]: first[hosts[i]] for i in picked}, statement
