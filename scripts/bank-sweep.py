#!/usr/bin/env python3
"""Prints the table of experiments/malekeh-banks.toml from its sweep store: per variant
(design and settings other than the bank count) and bank count, IPC normalized per
workload to the default baseline with 8 banks (arithmetic mean over the workloads), the
share of issue attempts operand collection refused ((stalls.bank_conflict +
no_free_collector + register_file) / (those + issued); register_file is Malekeh's STHLD
holds), and the instructions that took several collector units (multi_collector).

    bank-sweep.py STORE

Every run must be `ok`; a missing or failed point is named and the script exits 1.
"""

import json
import sqlite3
import sys
from collections import defaultdict

BANKS = "register_file.banks"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    db = sqlite3.connect(sys.argv[1])
    runs = defaultdict(dict)
    bad = []
    for workload, design, sets, status, stats in db.execute(
        "SELECT workload, design, sets, status, stats FROM runs"
    ):
        # [[key, value as written in TOML], ...]
        sets = dict(json.loads(sets)) if sets else {}
        if status != "ok" or not stats:
            bad.append(f"{workload} {design} {sets}: {status}")
            continue
        banks = int(sets.pop(BANKS, 8))
        label = design + "".join(f", {k.split('.')[-1]}={v}" for k, v in sorted(sets.items()))
        runs[(label, banks)][workload] = json.loads(stats)["total"]
    if bad:
        sys.exit("not ok:\n" + "\n".join(bad))
    ref = runs.get(("baseline", 8))
    if not ref:
        sys.exit("no baseline run with 8 banks")
    workloads = sorted(ref)
    print("| variant | banks | mean IPC (vs baseline, 8 banks) | operand-stall share | multi-unit instructions |")
    print("|---|---:|---:|---:|---:|")
    for (label, banks) in sorted(runs, key=lambda k: (k[0] != "baseline", k[0], k[1])):
        got = runs[(label, banks)]
        missing = [w for w in workloads if w not in got]
        if missing:
            sys.exit(f"{label} with {banks} banks: no run of {', '.join(missing)}")
        ipc = sum(got[w]["ipc"] / ref[w]["ipc"] for w in workloads) / len(workloads)
        refused = issued = spans = 0
        for w in workloads:
            s = got[w]["stalls"]
            refused += s["bank_conflict"] + s["no_free_collector"] + s["register_file"]
            issued += s["issued"]
            spans += got[w]["register_file"]["extra"].get("multi_collector_instructions", 0)
        share = 100 * refused / max(1, refused + issued)
        print(f"| {label} | {banks} | {ipc:.3f} | {share:.2f}% | {spans} |")


if __name__ == "__main__":
    main()
