#!/usr/bin/env python3
"""Tables of Malekeh's Figures 3, 6, 7 and 8 from `regsim run` statistics.

    malekeh-figures.py DIR STHLD...

DIR holds baseline/, malekeh/, bow/ and sthld-<N>/ (one <workload>.json per run), as
scripts/figures-malekeh.sh writes them. Prints Markdown tables.

Register-file dynamic energy (Figure 8) is computed from the event counts in the
statistics with these per-access energies, per warp-wide 32-bit register (32 lanes):
- MRF bank read or write: 32 x 11 pJ (Gebhart et al., MICRO'11, Table 2: "MRF
  read/write energy 11 pJ" per 32-bit access);
- crossbar, bank to collector (and Malekeh's destination path to port D): 32 x 1.9 pJ
  (same table: wire energy 1.9 pJ/mm per 32 bits, MRF to shared datapath 1 mm);
- operand storage, the baseline's collector units, Malekeh's CCUs and BOW's windows
  alike (the CCU reuses the collector's data fields, Malekeh §3.2): read 32 x 3.4 pJ,
  write 32 x 10.9 pJ (Gebhart et al., MICRO'11, Table 3: an 8-entry operand register
  file; BOW's window of 3 instructions holds about as many values);
- the arbiter: no source gives a per-request energy, so it counts 0 here (the
  statistics report the requests, `<design>_arbiter_requests`).
The paper extends AccelWattch and gives no per-access numbers, so these are not its
energies; energy is per warp instruction, so that runs whose instruction counts depend on
timing (atomics_cas's CAS retries) compare per unit of work.
"""

import json
import math
import os
import sys

E_MRF = 32 * 11.0
E_XBAR = 32 * 1.9
E_STORE_READ = 32 * 3.4
E_STORE_WRITE = 32 * 10.9

PAPER = {
    "hit": 48.5,  # % of source operands from the CCUs (§9.2)
    "reads": -48.5,  # % RF reads (abstract)
    "energy": -29.1,  # % RF dynamic energy (abstract)
    "ipc": 9.6,  # % IPC (§9.1)
    "hit_over_bow": 28.1,  # points (§9.2)
    "ipc_over_bow": 5.4,  # % (§9.1)
}


def load(path):
    with open(path) as f:
        return json.load(f)["total"]


def energy(design, t):
    rf = t["register_file"]
    x = rf["extra"]
    reads, writes = rf["reads"], rf["writes"]
    e = E_MRF * (reads + writes)
    if design == "malekeh":
        e += E_XBAR * x["malekeh_crossbar_transfers"]
        e += E_STORE_WRITE * (x["malekeh_ccu_writes"] + x["malekeh_uncached_reads"])
        e += E_STORE_READ * x["malekeh_ccu_reads"]
    elif design == "bow":
        e += E_XBAR * x["bow_crossbar_transfers"]
        e += E_STORE_WRITE * x["bow_window_writes"]
        e += E_STORE_READ * x["bow_window_reads"]
    else:
        # Every operand is read from a bank, crosses to a collector, is latched and
        # delivered.
        e += (E_XBAR + E_STORE_WRITE + E_STORE_READ) * reads
    return e / t["warp_instructions"]


def hit_ratio(design, t):
    x = t["register_file"]["extra"]
    if design == "malekeh":
        return x["malekeh_hits"] / max(1, x["malekeh_operand_reads"])
    return x["bow_forwarded"] / max(1, x["bow_operand_reads"])


def reads_per_inst(t):
    return t["register_file"]["reads"] / t["warp_instructions"]


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def gmean(xs):
    return math.exp(mean([math.log(x) for x in xs])) if xs else float("nan")


def table(header, rows):
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print()


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: malekeh-figures.py DIR STHLD...")
    d = sys.argv[1]
    sthlds = sys.argv[2:]
    names = sorted(
        f[:-5] for f in os.listdir(os.path.join(d, "baseline")) if f.endswith(".json")
    )
    runs = {}
    for label in ["baseline", "malekeh", "bow"] + [f"sthld-{s}" for s in sthlds]:
        for n in names:
            p = os.path.join(d, label, n + ".json")
            if os.path.exists(p):
                runs[(label, n)] = load(p)
    names = [n for n in names if all((l, n) in runs for l in ("baseline", "malekeh", "bow"))]

    ipc = {l: {} for l in ("malekeh", "bow")}
    hit = {l: {} for l in ("malekeh", "bow")}
    en = {l: {} for l in ("malekeh", "bow")}
    rd = {l: {} for l in ("malekeh", "bow")}
    for n in names:
        b = runs[("baseline", n)]
        for l in ("malekeh", "bow"):
            t = runs[(l, n)]
            ipc[l][n] = t["ipc"] / b["ipc"]
            hit[l][n] = hit_ratio(l, t)
            en[l][n] = energy(l, t) / energy("baseline", b)
            rd[l][n] = reads_per_inst(t) / reads_per_inst(b)

    print("### Figure 6: IPC normalized to the baseline\n")
    rows = [[n, f"{ipc['malekeh'][n]:.3f}", f"{ipc['bow'][n]:.3f}"] for n in names]
    rows.append(["**mean**", f"{mean(list(ipc['malekeh'].values())):.3f}",
                 f"{mean(list(ipc['bow'].values())):.3f}"])
    rows.append(["geomean", f"{gmean(list(ipc['malekeh'].values())):.3f}",
                 f"{gmean(list(ipc['bow'].values())):.3f}"])
    table(["workload", "Malekeh", "BOW"], rows)

    print("### Figure 7: source operands served without a bank read (hit ratio)\n")
    rows = []
    for n in names:
        x = runs[("malekeh", n)]["register_file"]["extra"]
        near = x["malekeh_hits_near"] / max(1, x["malekeh_reads_near"])
        far = x["malekeh_hits_far"] / max(1, x["malekeh_reads_far"])
        share = x["malekeh_reads_near"] / max(1, x["malekeh_operand_reads"])
        rows.append([n, f"{100 * hit['malekeh'][n]:.1f}%", f"{100 * near:.1f}%",
                     f"{100 * far:.1f}%", f"{100 * share:.0f}%", f"{100 * hit['bow'][n]:.1f}%"])
    rows.append(["**mean**", f"{100 * mean(list(hit['malekeh'].values())):.1f}%", "", "", "",
                 f"{100 * mean(list(hit['bow'].values())):.1f}%"])
    table(["workload", "Malekeh", "near reads", "far reads", "near share", "BOW"], rows)

    print("### Figure 8: register-file dynamic energy per instruction, normalized\n")
    rows = [[n, f"{en['malekeh'][n]:.3f}", f"{en['bow'][n]:.3f}",
             f"{rd['malekeh'][n]:.3f}", f"{rd['bow'][n]:.3f}"] for n in names]
    rows.append(["**mean**", f"{mean(list(en['malekeh'].values())):.3f}",
                 f"{mean(list(en['bow'].values())):.3f}",
                 f"{mean(list(rd['malekeh'].values())):.3f}",
                 f"{mean(list(rd['bow'].values())):.3f}"])
    table(["workload", "Malekeh energy", "BOW energy", "Malekeh bank reads", "BOW bank reads"],
          rows)

    if sthlds:
        print("### Figure 3: fixed STHLD (adaptive controller off), means over workloads\n")
        rows = []
        for s in sthlds:
            ns = [n for n in names if (f"sthld-{s}", n) in runs]
            if not ns:
                continue
            i = [runs[(f"sthld-{s}", n)]["ipc"] / runs[("baseline", n)]["ipc"] for n in ns]
            h = [hit_ratio("malekeh", runs[(f"sthld-{s}", n)]) for n in ns]
            st = [runs[(f"sthld-{s}", n)]["register_file"]["extra"]["malekeh_sthld_stall_cycles"]
                  / max(1, runs[(f"sthld-{s}", n)]["cycles"]) for n in ns]
            rows.append([s, f"{mean(i):.3f}", f"{100 * mean(h):.1f}%", f"{mean(st):.2f}"])
        table(["STHLD", "IPC / baseline", "hit ratio", "STHLD wait cycles per cycle (per SM sum)"],
              rows)
        print("Per workload, IPC / baseline at each fixed STHLD:\n")
        rows = []
        for n in names:
            r = [n]
            for s in sthlds:
                t = runs.get((f"sthld-{s}", n))
                r.append(f"{t['ipc'] / runs[('baseline', n)]['ipc']:.3f}" if t else "")
            rows.append(r)
        table(["workload"] + [f"STHLD {s}" for s in sthlds], rows)

    print("### The adaptive controller: STHLD at the end of each run, per SM\n")
    rows = []
    for n in names:
        series = runs[("malekeh", n)]["register_file"].get("series", {})
        finals = [v[-1][1] for _, v in sorted(series.items(), key=lambda kv: int(kv[0].rsplit("sm", 1)[1])) if v]
        changes = sum(len(v) for v in series.values())
        rows.append([n, " ".join(str(f) for f in finals), str(changes)])
    table(["workload", "final STHLD, SM 0..", "trajectory points (all SMs)"], rows)

    print("### Averages beside the paper's (its workloads are Rodinia and DeepBench)\n")
    mh, bh = mean(list(hit["malekeh"].values())), mean(list(hit["bow"].values()))
    mi, bi = mean(list(ipc["malekeh"].values())), mean(list(ipc["bow"].values()))
    me = mean(list(en["malekeh"].values()))
    mr = mean(list(rd["malekeh"].values()))
    rows = [
        ["Malekeh hit ratio", f"{PAPER['hit']:.1f}%", f"{100 * mh:.1f}%"],
        ["Malekeh RF (bank) reads", f"{PAPER['reads']:+.1f}%", f"{100 * (mr - 1):+.1f}%"],
        ["Malekeh RF dynamic energy", f"{PAPER['energy']:+.1f}%", f"{100 * (me - 1):+.1f}%"],
        ["Malekeh IPC", f"{PAPER['ipc']:+.1f}%", f"{100 * (mi - 1):+.1f}%"],
        ["Malekeh over BOW, hit ratio", f"{PAPER['hit_over_bow']:+.1f} points",
         f"{100 * (mh - bh):+.1f} points"],
        ["Malekeh over BOW, IPC", f"{PAPER['ipc_over_bow']:+.1f}%", f"{100 * (mi / bi - 1):+.1f}%"],
    ]
    table(["", "paper", "regsim"], rows)


if __name__ == "__main__":
    main()
