#!/usr/bin/env python3
"""CERF's on-chip energy over the baseline's with static energy added (docs/results/notes/
cerf.md): regsim's energy is dynamic only and never drives timing, so a static power P
adds P x cycles to each run exactly. Prints, over the cache-sensitive workloads of
workloads/classes.toml (geomean of CERF / baseline), the ratio with static energy a share
f of each baseline run's on-chip energy, and with the static power of CERF Table III's
leakage (assumptions in the note).

    cerf-static-energy.py BASELINE_DIR CERF_DIR

Each DIR holds WORKLOAD.json stats files of `regsim run --gpu gtx480 --stats`.
"""

import json
import math
import os
import sys
import tomllib

# CERF Table III leakage, mW per bank; on our scale by our MRF read (64 pJ) over its 4.62 pJ.
SCALE = 64 / 4.62
GHZ = 0.7  # gtx480 core clock
SMS, RF_BANKS, L2_SLICES = 15, 8, 12
L2 = L2_SLICES * (2.66 + 0.80)
STATIC_PJ_PER_CYCLE = {
    "baseline": (SMS * (RF_BANKS * 1.78 + 0.19 + 0.20) + L2) / GHZ * SCALE,
    "cerf": (SMS * (RF_BANKS * 1.78 + 0.32) + L2) / GHZ * SCALE,
}


def load(d, w):
    with open(os.path.join(d, w + ".json")) as f:
        t = json.load(f)["total"]
    return t["energy"]["on_chip_joules"] * 1e12, t["cycles"]


def geomean(v):
    return math.exp(sum(map(math.log, v)) / len(v))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "workloads", "classes.toml"), "rb") as f:
        classes = tomllib.load(f)["cache_sensitivity"]["workloads"]
    ws = sorted(w for w, c in classes.items() if c["class"] == "sensitive")
    missing = [w for w in ws if not os.path.exists(os.path.join(sys.argv[2], w + ".json"))]
    if missing:
        sys.exit("no CERF run of " + ", ".join(missing))
    runs = [(load(sys.argv[1], w), load(sys.argv[2], w)) for w in ws]
    dyn = [c[0] / b[0] for b, c in runs]
    cyc = [c[1] / b[1] for b, c in runs]
    print(f"{len(ws)} cache-sensitive workloads; cycles ratio {geomean(cyc):.3f}")
    print("| static share f | " + " | ".join(f"{f / 10:.1f}" for f in range(8)) + " |")
    print("| CERF / baseline | " + " | ".join(
        f"{geomean([(1 - f / 10) * d + f / 10 * t for d, t in zip(dyn, cyc)]):.3f}" for f in range(8)
    ) + " |")
    pb, pc = STATIC_PJ_PER_CYCLE["baseline"], STATIC_PJ_PER_CYCLE["cerf"]
    for k in (0.5, 1.0, 2.0):
        v = [(c[0] + k * pc * c[1]) / (b[0] + k * pb * b[1]) for b, c in runs]
        share = sorted(k * pb * b[1] / (b[0] + k * pb * b[1]) for b, _ in runs)
        print(f"Table III leakage x{k}: {geomean(v):.3f} (static share of baseline on-chip: "
              f"median {share[len(share) // 2]:.2f}, {share[0]:.2f}..{share[-1]:.2f})")


if __name__ == "__main__":
    main()
