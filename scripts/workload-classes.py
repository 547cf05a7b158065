#!/usr/bin/env python3
"""Writes workloads/classes.toml from measurements in `regsim paper` sweep stores.

    scripts/workload-classes.py --cerf STORE --ltrf STORE --wir STORE [--commit C] > workloads/classes.toml

The stores are those `regsim paper cerf|ltrf|wir [--quick]` write (results/paper-<p>/store.sqlite
or `--out DIR`/store.sqlite). Each classification states its criterion and how it was
measured, and each workload the measured value that put it in its class:

- cache_sensitivity (CERF's cache-sensitive and -insensitive, section IV): the baseline on
  gtx480 with its 16 KB L1D and with a 4x (64 KB) L1D (the two baseline points of
  experiments/cerf.toml); sensitive when IPC grows by at least 10% (the threshold of
  scripts/cache-sensitivity.sh; the paper gives no number).
- register_limited (LTRF's register-sensitive, section 6: the register file limits TLP):
  the occupancy limiter of the baseline of LTRF Table 2's #1 with the cache's 16 KB added
  (maxwell-ltrf, sm.registers=69632, a point of experiments/ltrf.toml); `registers` when
  any kernel's occupancy is limited by registers, `other` otherwise.
- wir_reuse (WIR section VII orders its benchmarks by reusability, Figure 2, and reports
  the top and bottom halves): the fraction of warp instructions reused under RLPV on
  gtx480 (experiments/wir.toml); `high` for the upper half of the measured workloads (at
  or above the median), `low` for the lower half.
"""
import argparse
import json
import sqlite3
import statistics
import sys


def runs(store, design):
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    out = []
    for workload, sets, stats in con.execute(
        "SELECT workload, sets, stats FROM runs WHERE status = 'ok' AND design = ?", (design,)
    ):
        s = json.loads(stats) if stats else None
        if s is None:
            continue
        out.append((workload, {k: v for k, v in json.loads(sets)}, s))
    return out


def entry(workload, cls, measured):
    return f'{workload} = {{ class = "{cls}", measured = "{measured}" }}'


def cache_sensitivity(store, commit):
    base, big = {}, {}
    for w, sets, s in runs(store, "baseline"):
        if not sets:
            base[w] = s["total"]["ipc"]
        elif sets == {"l1d.size_bytes": "65536"}:
            big[w] = s["total"]["ipc"]
    lines = [
        "[cache_sensitivity]",
        'criterion = "sensitive: the baseline\'s IPC grows by at least 10% when the L1D grows '
        '4x (16 KB to 64 KB, same ways and lines); insensitive otherwise"',
        f'measured = "the two baseline points of experiments/cerf.toml on gtx480 '
        f'(regsim paper cerf), scripts/workload-classes.py at commit {commit}"',
        "[cache_sensitivity.workloads]",
    ]
    for w in sorted(set(base) & set(big)):
        gain = big[w] / base[w] - 1 if base[w] > 0 else 0.0
        cls = "sensitive" if gain >= 0.10 else "insensitive"
        lines.append(entry(w, cls, f"IPC {base[w]:.3f} -> {big[w]:.3f} ({gain:+.1%})"))
    return lines


def register_limited(store, commit):
    lines = [
        "[register_limited]",
        'criterion = "registers: the occupancy of some kernel is limited by registers on the '
        'baseline of LTRF Table 2 #1 with the cache\'s 16 KB added (256 KB + 16 KB per SM); '
        'other: limited by threads, warps, CTAs or shared memory"',
        f'measured = "kernels[].occupancy.limited_by of the baseline point sm.registers=69632 '
        f'of experiments/ltrf.toml on maxwell-ltrf (regsim paper ltrf), '
        f'scripts/workload-classes.py at commit {commit}"',
        "[register_limited.workloads]",
    ]
    for w, sets, s in sorted(runs(store, "baseline"), key=lambda r: r[0]):
        if sets != {"sm.registers": "69632"}:
            continue
        ks = s.get("kernels", [])
        lim = [k.get("occupancy", {}).get("limited_by", "?") for k in ks]
        ctas = max((k.get("occupancy", {}).get("ctas_per_sm", 0) for k in ks), default=0)
        cls = "registers" if "registers" in lim else "other"
        shown = "registers" if cls == "registers" else (lim[0] if lim else "?")
        lines.append(entry(w, cls, f"limited by {shown}, {ctas} CTAs per SM"))
    return lines


def wir_reuse(store, commit):
    frac = {}
    for w, sets, s in runs(store, "wir"):
        if sets.get("register_file.wir.variant") != '"RLPV"':
            continue
        t = s["total"]
        extra = t["register_file"]["extra"]
        reused = sum(extra.get(k, 0) for k in ["wir_reused_alu", "wir_reused_sfu", "wir_reused_load"])
        frac[w] = reused / t["warp_instructions"] if t["warp_instructions"] else 0.0
    if not frac:
        return []
    median = statistics.median(frac.values())
    lines = [
        "[wir_reuse]",
        f'criterion = "high: at least the median ({median:.1%}) of the measured workloads\' '
        f'fractions of warp instructions reused under RLPV (the top half, as WIR section VII '
        f'splits its benchmarks by reusability); low: below it"',
        f'measured = "register_file.extra.wir_reused_* over warp_instructions of the RLPV points '
        f'of experiments/wir.toml on gtx480 (regsim paper wir), scripts/workload-classes.py at '
        f'commit {commit}"',
        "[wir_reuse.workloads]",
    ]
    for w in sorted(frac):
        cls = "high" if frac[w] >= median else "low"
        lines.append(entry(w, cls, f"{frac[w]:.1%} of warp instructions reused"))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cerf", required=True)
    ap.add_argument("--ltrf", required=True)
    ap.add_argument("--wir", required=True)
    ap.add_argument("--commit", default="(not given)")
    a = ap.parse_args()
    print("# Workload classes of the papers, each with its measured criterion; generated by")
    print("# scripts/workload-classes.py (its docstring says how) from `regsim paper` stores.")
    print("# `regsim paper` reads it to break figures down by class (figures.toml `classes`).")
    for part in [cache_sensitivity(a.cerf, a.commit), register_limited(a.ltrf, a.commit),
                 wir_reuse(a.wir, a.commit)]:
        print()
        print("\n".join(part))
    return 0


if __name__ == "__main__":
    sys.exit(main())
