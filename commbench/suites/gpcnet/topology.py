"""Who is where: hosts from processor names, node slices, and network_load_test's split.

Hosts are the distinct MPI processor names in sorted order (GPCNeT's node ids); a rank's
index on its host counts the ranks of its host before it. Every test runs on *slices*:
the ranks with the same index on their hosts, one per host, in host order; all slices run
at once, so a ring's neighbours are always on other hosts.

The load test splits the hosts (never the ranks of one host) into victims and congestor
groups (`split`, no MPI): GPCNeT puts floor(0.8 n) hosts in congestion and the rest
measure, in a random order it draws from the clock; here the order is drawn from
--gpcnet-seed (recorded) and the victims' share is --gpcnet-victims. Each congestor kind
needs two hosts (one host alone makes no network traffic): with fewer hosts than the four
kinds need, the first kinds in GPCNeT's order get them and the rest are left out, said.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Split:
    victims: list[str]
    groups: dict[str, list[str]]  # congestor kind -> its hosts
    left_out: list[str] = field(default_factory=list)  # kinds without two hosts
    idle: list[str] = field(default_factory=list)  # hosts in no role

    def role(self, host: str) -> str:
        if host in self.victims:
            return "victim"
        for kind, hs in self.groups.items():
            if host in hs:
                return kind
        return "idle"

    def as_dict(self) -> dict:
        return {
            "victims": self.victims,
            "congestors": self.groups,
            "left_out": self.left_out,
            "idle": self.idle,
        }


def n_victims(n: int, victims: float) -> int:
    """GPCNeT's rule for a fraction (n - floor((1 - F) n)), a count as given; at least 2."""
    if victims < 1:
        return max(2, n - int((1 - victims) * n + 1e-9))
    return int(victims)


def split(hosts: list[str], victims: float, kinds: list[str], seed: int) -> Split:
    """Victim hosts and congestor groups from a seeded shuffle of the sorted hosts: the last
    n_victims of the order measure; the others deal round-robin into the kinds that can have
    two hosts each (GPCNeT: colour = position mod 4, the first kinds get the extras)."""
    order = [hosts[int(i)] for i in np.random.default_rng(seed).permutation(len(hosts))]
    nv = n_victims(len(hosts), victims)
    if nv > len(hosts):
        raise ValueError(f"{nv} victim hosts asked of {len(hosts)}")
    vict, rest = sorted(order[len(order) - nv :]), order[: len(order) - nv]
    usable = kinds[: max(0, len(rest) // 2)]
    groups: dict[str, list[str]] = {k: [] for k in usable}
    for i, h in enumerate(rest if usable else []):
        groups[usable[i % len(usable)]].append(h)
    return Split(
        vict,
        {k: sorted(v) for k, v in groups.items()},
        left_out=kinds[len(usable) :],
        idle=sorted(rest) if not usable else [],
    )


def no_congestor(hosts: int, victims: float, kinds: list[str]) -> str | None:
    """Why Congestion cannot run on `hosts` hosts (None: it can): the victims take their
    share and every congestor kind needs two hosts of the rest; with none, nothing would
    congest, and impact factors of an unloaded network would read as congestion's."""
    try:  # how many victims and groups, not who: any order gives the same counts
        sp = split([str(i) for i in range(hosts)], victims, kinds, 0)
    except ValueError as e:
        return f"not run: {e} (--gpcnet-victims)"
    if sp.groups:
        return None
    return (
        f"not run: {hosts} hosts leave no congestor ({len(sp.victims)} measure, and a "
        f"congestor needs 2 more hosts: at least {len(sp.victims) + 2}; GPCNeT asks for 10)"
    )


@dataclass
class HostLayout:
    """This rank's place: host ids in sorted order, its index on its host."""

    hosts: list[str]  # every world rank's host
    names: list[str]  # the distinct hosts, sorted
    node: int  # this rank's host id
    local: int  # this rank's index among its host's ranks

    @classmethod
    def of(cls, rank_hosts: list[str], rank: int) -> HostLayout:
        names = sorted(set(rank_hosts))
        local = rank_hosts[:rank].count(rank_hosts[rank])
        return cls(rank_hosts, names, names.index(rank_hosts[rank]), local)


def sattolo(n: int, rng: np.random.Generator) -> list[int]:
    """A random cyclic order of 0..n-1 (Sattolo's shuffle, as GPCNeT draws its rings)."""
    a = list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(rng.integers(0, i))
        a[i], a[j] = a[j], a[i]
    return a


def rings(n: int, count: int, seed: int, natural: bool) -> list[list[int]]:
    """The rings of a ring test: `count` orders of the slice's n ranks, drawn once from
    seed (GPCNeT: 8675309 + index on host, so every slice has its own rings and every
    measurement reuses them); the natural ring is the host order."""
    if natural:
        return [list(range(n))] * count
    rng = np.random.default_rng(seed)
    return [sattolo(n, rng) for _ in range(count)]


def neighbours(order: list[int], me: int) -> tuple[int, int]:
    at = order.index(me)
    return order[at - 1], order[(at + 1) % len(order)]
