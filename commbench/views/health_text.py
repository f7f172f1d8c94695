"""`commbench health`'s verdicts as text: a line a host, slow ones with their evidence, and
what was drained (no MPI; the verdicts: commbench.models.health)."""

from __future__ import annotations

from commbench.models import health


def lines(verdicts: dict[str, dict], drained: list[dict], notes: list[str] = ()) -> list[str]:
    counts = {k: sum(v["verdict"] == k for v in verdicts.values()) for k in
              (health.GOOD, health.SLOW, health.FAILED)}  # fmt: skip
    out = [
        f"commbench health: {len(verdicts)} hosts: {counts[health.GOOD]} good, "
        f"{counts[health.SLOW]} slow, {counts[health.FAILED]} failed to run"
    ]
    width = max([len(h) for h in verdicts] + [4])
    for host, v in verdicts.items():
        word = v["verdict"].upper() if v["verdict"] != health.GOOD else v["verdict"]
        out.append(f"  {host:<{width}}  {word}")
        out += [f"  {'':<{width}}    {e}" for e in v["evidence"]]
        out += [f"  {'':<{width}}    ({f})" for f in v.get("figures", [])]
    for d in drained:
        done = "drained" if d["ok"] else f"NOT drained ({d['said']})"
        out.append(f"  {d['host']}: {done} as Slurm node {d['node']}: {d['reason']}")
    return out + [f"  note: {n}" for n in notes]
