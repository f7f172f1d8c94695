"""The PGAS pairing rules: who is whose partner, and whether a run's groups pair up.

Every latency and bandwidth test runs on communicating pairs, all pairs at
once: by default {i, N/2+i}; with a partner offset Q the seed's other rule
(see `partners`).
"""

from __future__ import annotations

from commbench import policy
from commbench.option_types import ConfigError
from commbench.suites.pgas.settings import PgasSettings


class PairingError(ValueError):
    """No valid pairing for this process count and partner offset."""


def partners(n: int, offset: int | None = None) -> list[int]:
    """partner[i] for ranks i = 0 .. n-1 of one group, by the seed's rules.

    Default: pairs {i, N/2+i} for i = 0 .. N/2-1. With a partner offset Q:
    {i, i+Q} where i mod 2Q < Q and {i-Q, i} where i mod 2Q >= Q.

    The seed writes the offset rule "for i in [0, N/2-1]", but read literally
    over that range it pairs only ranks below N/2 (and their partners): for
    N=8, Q=1 it gives {0,1}, {2,3} and leaves 4..7 without a partner, against
    the seed's own "all the latency and bandwidth tests use communicating
    pairs". Only Q = N/2 (the default pairing) would survive. So the rule is
    applied to every rank i in [0, N-1]; its two clauses then name each pair
    from both ends, and it pairs every rank exactly when N is a multiple of 2Q.
    Q = N/2 reproduces the default pairs.
    """
    if n < 2 or n % 2:
        raise PairingError(f"the PGAS tests pair processes: {n} is not an even number of processes")
    if offset is None:
        half = n // 2
        return [(i + half) % n for i in range(n)]
    q = offset
    if q < 1:
        raise PairingError(f"--pgas-offset must be >= 1, got {q}")
    out = [i + q if i % (2 * q) < q else i - q for i in range(n)]
    bad = [i for i, p in enumerate(out) if not 0 <= p < n]
    if bad:
        i = bad[0]
        good = [d for d in range(1, n // 2 + 1) if n % (2 * d) == 0]
        raise PairingError(
            f"--pgas-offset {q} leaves rank {i} of {n} processes without a partner (rank {out[i]} "
            "does not exist; the rule {i, i+Q} for i mod 2Q < Q, {i-Q, i} for i mod 2Q >= Q "
            f"pairs {n} processes only when {n} is a multiple of 2Q = {2 * q}); accepted for {n} "
            f"processes: {', '.join(map(str, good))}"
        )
    for i, p in enumerate(out):  # the rule is symmetric by construction; keep it honest
        if out[p] != i or p == i:
            raise PairingError(f"--pgas-offset {q}: rank {i} and {p} are not a pair")
    return out


def pairs(n: int, offset: int | None = None) -> list[tuple[int, int]]:
    """The pairs {lower, upper} in order of the lower rank."""
    part = partners(n, offset)
    return [(i, p) for i, p in enumerate(part) if i < p]


def validate(cfg, size: int) -> None:
    """Every process group of the run must pair up under the chosen rule."""
    offset = PgasSettings.of(cfg.params).offset
    for np_ in policy.np_sequence(size, cfg.npmin):
        if np_ % 2:
            raise ConfigError(
                "family pgas needs an even number of processes in every group: -npmin "
                f"{cfg.npmin} with {size} processes gives a group of {np_} (accepted: an even "
                "-npmin, e.g. -npmin 2)"
            )
        try:
            partners(np_, offset)
        except PairingError as e:
            raise ConfigError(
                str(e) + (f" (process count {np_} of the -npmin sequence)" if np_ != size else "")
            ) from None
