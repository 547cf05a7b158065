#!/usr/bin/env python3
"""Measures the built-in workloads and assigns each to the papers' classes by a stated rule.

    scripts/workload-classes.py measure [--out DIR] [-j N] [NAME...]
    scripts/workload-classes.py classify [--stats DIR] [--commit C] > workloads/classes.toml
    scripts/workload-classes.py table [--stats DIR] [--readme workloads/README.md]

`measure` runs every workload (workloads/bin/*, or the NAMEs) through `regsim run --stats`
at the six points below, writing DIR/<point>/<name>.json (default DIR:
results/workload-classes). `classify` reads them and prints the classes file that
`regsim paper` reads (figures.toml `classes`); `table` prints one Markdown row per workload
(what it computes, from the workload table of workloads/README.md; its classes; registers
per thread, ours and ptxas's; occupancy limiters; the measured values) and the class
counts, and with --readme replaces the text between the markers
`<!-- workload-classes:begin -->` and `<!-- workload-classes:end -->` of that file.

The points and the rules (each workload's measured value is written next to its class):

- cache_sensitivity (CERF's cache-sensitive and -insensitive, section IV): the baseline on
  gtx480 with its 16 KB L1D (point `base`) and with a 4x (64 KB) L1D (`l1d4`: the two
  baseline points of experiments/cerf.toml); sensitive when IPC grows by at least 10% (the
  threshold of scripts/cache-sensitivity.sh; the paper gives no number).
- register_limited (LTRF's register-sensitive, section 6: the register file limits TLP):
  the occupancy limiter of the baseline of LTRF Table 2's #1 with the cache's 16 KB added
  (maxwell-ltrf, sm.registers=69632, a point of experiments/ltrf.toml; point `ltrf`);
  `registers` when any kernel's occupancy is limited by registers, `other` otherwise. The
  table also gives gtx480's limiter (point `base`).
- wir_reuse (WIR section VII orders its benchmarks by reusability, Figure 2, and reports
  the top and bottom halves): the fraction of warp instructions reused under RLPV on
  gtx480 (point `wir`); `high` for the upper half of the measured workloads (at or above
  the median), `low` for the lower half.
- long_strands (Gebhart MICRO'11 section 4: the ORF and LRF pay off on long strands of
  short-latency arithmetic): warp instructions per strand end under orf-lrf on gtx480
  (point `orflrf`, register_file.extra.orf_lrf_strand_ends); `long` at 10 or more.
- operand_bound (Malekeh and BOW: kernels whose issue the register file's banks and
  operand collectors hold back): on rtx2060-scaled's baseline (point `rtx`), the share of
  scheduler cycles with an instruction to issue in which the operand collectors refused it,
  (stalls.bank_conflict + stalls.no_free_collector) / (those + stalls.issued); `bound` at
  10% or more.
"""
import argparse
import concurrent.futures
import json
import os
import re
import statistics
import subprocess
import sys

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
REGSIM = os.path.join(REPO, "target", "release", "regsim")

# point name -> regsim run flags
POINTS = {
    "base": ["--gpu", "gtx480"],
    "l1d4": ["--gpu", "gtx480", "--set", "l1d.size_bytes=65536"],
    "ltrf": ["--gpu", "maxwell-ltrf", "--set", "sm.registers=69632"],
    "orflrf": ["--gpu", "gtx480", "--rf", "orf-lrf"],
    "rtx": ["--gpu", "rtx2060-scaled"],
    "wir": ["--gpu", "gtx480", "--rf", "wir", "--set", 'register_file.wir.variant="RLPV"'],
}
SENSITIVE_GAIN = 0.10
LONG_STRAND = 10.0
OPERAND_BOUND = 0.10


def all_workloads():
    bins = os.path.join(REPO, "workloads", "bin")
    return sorted(n for n in os.listdir(bins) if os.path.isfile(os.path.join(bins, n)))


def run_point(out, point, name):
    path = os.path.join(out, point, name + ".json")
    cmd = [REGSIM, "run", *POINTS[point], "--stats", path, "--",
           os.path.join(REPO, "workloads", "bin", name)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    last = p.stdout.strip().splitlines()[-1:] or [""]
    if p.returncode != 0 or last[0] != "PASS":
        return f"{name} at {point}: exit {p.returncode}, last line {last[0]!r}: {p.stderr[-300:]}"
    return None


def measure(args):
    names = args.names or all_workloads()
    for point in POINTS:
        os.makedirs(os.path.join(args.out, point), exist_ok=True)
    if not os.path.exists(REGSIM):
        sys.exit(f"error: {REGSIM} missing; run cargo build --release first")
    jobs = [(p, n) for n in names for p in POINTS]
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for err in pool.map(lambda j: run_point(args.out, *j), jobs):
            if err:
                failed.append(err)
                print("FAILED: " + err, file=sys.stderr)
    print(f"measured {len(names)} workloads at {len(POINTS)} points into {args.out}", file=sys.stderr)
    return 1 if failed else 0


def load(stats, point):
    d = os.path.join(stats, point)
    if not os.path.isdir(d):
        sys.exit(f"error: {d} missing; run `{sys.argv[0]} measure` first")
    out = {}
    for f in sorted(os.listdir(d)):
        if f.endswith(".json"):
            with open(os.path.join(d, f)) as fh:
                out[f[:-5]] = json.load(fh)
    return out


class Measured:
    """The per-workload values every rule and the table use."""

    def __init__(self, stats):
        pts = {p: load(stats, p) for p in POINTS}
        self.names = sorted(set.intersection(*(set(v) for v in pts.values())))
        self.v = {}
        for w in self.names:
            base, big, ltrf = pts["base"][w], pts["l1d4"][w], pts["ltrf"][w]
            extra = pts["orflrf"][w]["total"]["register_file"]["extra"]
            ends = extra.get("orf_lrf_strand_ends", 0)
            st = pts["rtx"][w]["total"]["stalls"]
            refused = st["bank_conflict"] + st["no_free_collector"]
            wt = pts["wir"][w]["total"]
            wx = wt["register_file"]["extra"]
            reused = sum(wx.get(k, 0) for k in ["wir_reused_alu", "wir_reused_sfu", "wir_reused_load"])
            b_ipc, g_ipc = base["total"]["ipc"], big["total"]["ipc"]
            self.v[w] = {
                "ipc": b_ipc,
                "ipc4": g_ipc,
                "gain": g_ipc / b_ipc - 1 if b_ipc > 0 else 0.0,
                "lim_gtx": limiter(base),
                "lim_ltrf": limiter(ltrf),
                "regs_gtx": max(k["occupancy"]["registers_per_thread"] for k in base["kernels"]),
                "regs_ltrf": max(k["occupancy"]["registers_per_thread"] for k in ltrf["kernels"]),
                "strand": pts["orflrf"][w]["total"]["warp_instructions"] / ends if ends else 0.0,
                "operand": refused / (refused + st["issued"]) if refused + st["issued"] else 0.0,
                "reuse": reused / wt["warp_instructions"] if wt["warp_instructions"] else 0.0,
            }
        self.reuse_median = statistics.median(self.v[w]["reuse"] for w in self.names)

    def classes(self, w):
        m = self.v[w]
        return {
            "cache_sensitivity": "sensitive" if m["gain"] >= SENSITIVE_GAIN else "insensitive",
            "register_limited": "registers" if m["lim_ltrf"][0] == "registers" else "other",
            "wir_reuse": "high" if m["reuse"] >= self.reuse_median else "low",
            "long_strands": "long" if m["strand"] >= LONG_STRAND else "short",
            "operand_bound": "bound" if m["operand"] >= OPERAND_BOUND else "not",
        }


def limiter(stats):
    """(limiter, CTAs per SM): `registers` when any kernel is limited by registers."""
    ks = stats["kernels"]
    for k in ks:
        if k["occupancy"]["limited_by"] == "registers":
            return "registers", k["occupancy"]["ctas_per_sm"]
    return ks[0]["occupancy"]["limited_by"], ks[0]["occupancy"]["ctas_per_sm"]


def entry(workload, cls, measured):
    return f'{workload} = {{ class = "{cls}", measured = "{measured}" }}'


def classify(args):
    m = Measured(args.stats)
    at = f"scripts/workload-classes.py at commit {args.commit}"
    sections = [
        ("cache_sensitivity",
         "sensitive: the baseline's IPC grows by at least 10% when the L1D grows 4x (16 KB to "
         "64 KB, same ways and lines); insensitive otherwise",
         f"total.ipc of the baseline on gtx480 as is and with l1d.size_bytes=65536 (the two "
         f"baseline points of experiments/cerf.toml), {at}",
         lambda v: f"IPC {v['ipc']:.3f} -> {v['ipc4']:.3f} ({v['gain']:+.1%})"),
        ("register_limited",
         "registers: the occupancy of some kernel is limited by registers on the baseline of "
         "LTRF Table 2 #1 with the cache's 16 KB added (256 KB + 16 KB per SM); other: limited "
         "by threads, warps, CTAs or shared memory",
         f"kernels[].occupancy.limited_by of the baseline on maxwell-ltrf with "
         f"sm.registers=69632 (a point of experiments/ltrf.toml), {at}",
         lambda v: f"limited by {v['lim_ltrf'][0]}, {v['lim_ltrf'][1]} CTAs per SM, "
                   f"{v['regs_ltrf']} registers per thread"),
        ("wir_reuse",
         f"high: at least the median ({m.reuse_median:.1%}) of the measured workloads' "
         f"fractions of warp instructions reused under RLPV (the top half, as WIR section VII "
         f"splits its benchmarks by reusability); low: below it",
         f"register_file.extra.wir_reused_* over warp_instructions of wir with "
         f"register_file.wir.variant=RLPV on gtx480 (the RLPV points of experiments/wir.toml), "
         f"{at}",
         lambda v: f"{v['reuse']:.1%} of warp instructions reused"),
        ("long_strands",
         "long: at least 10 warp instructions per strand (Gebhart MICRO'11 section 4.1: the "
         "ORF and LRF hold values only within a strand); short: fewer",
         f"total.warp_instructions over register_file.extra.orf_lrf_strand_ends of orf-lrf on "
         f"gtx480, {at}",
         lambda v: f"{v['strand']:.1f} warp instructions per strand"),
        ("operand_bound",
         "bound: in at least 10% of the scheduler cycles with an instruction to issue, the "
         "operand collectors refused it (bank conflicts or no free collector); not: fewer",
         f"(stalls.bank_conflict + stalls.no_free_collector) / (those + stalls.issued) of the "
         f"baseline on rtx2060-scaled, {at}",
         lambda v: f"{v['operand']:.1%} of issue attempts refused by operand collection"),
    ]
    print("# Workload classes of the papers, each with its measured criterion; generated by")
    print("# scripts/workload-classes.py (its docstring says how) from `regsim run` statistics.")
    print("# `regsim paper` reads it to break figures down by class (figures.toml `classes`).")
    for name, criterion, measured, show in sections:
        print()
        print(f"[{name}]")
        print(f'criterion = "{criterion}"')
        print(f'measured = "{measured}"')
        print(f"[{name}.workloads]")
        for w in m.names:
            print(entry(w, m.classes(w)[name], show(m.v[w])))
    return 0


def descriptions(readme):
    """Workload -> the 'what it exercises' cell of the README's workload table."""
    out = {}
    with open(readme) as fh:
        for line in fh:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 2 and re.fullmatch(r"`[a-z0-9_]+`", cells[0]):
                out.setdefault(cells[0].strip("`"), cells[1])
    return out


def ptxas_registers():
    out = {}
    with open(os.path.join(REPO, "workloads", "ptxas-registers.tsv")) as fh:
        next(fh)
        for line in fh:
            w, _, r = line.rstrip("\n").split("\t")
            out[w] = max(out.get(w, 0), int(r))
    return out


def table(args):
    m = Measured(args.stats)
    readme = args.readme or os.path.join(REPO, "workloads", "README.md")
    what = descriptions(readme)
    ptxas = ptxas_registers()
    short = {"cache_sensitivity": ("sensitive", "cache"), "register_limited": ("registers", "regs"),
             "wir_reuse": ("high", "reuse"), "long_strands": ("long", "strands"),
             "operand_bound": ("bound", "operands")}
    rows = ["| workload | what it computes | classes | registers: ours gtx480 / maxwell-ltrf, ptxas "
            "| limiter: gtx480 / maxwell-ltrf | L1D 4x | strand | operand stalls |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    counts = {k: 0 for k in short}
    both = big_gain = 0
    for w in m.names:
        v, cl = m.v[w], m.classes(w)
        tags = [short[k][1] for k in short if cl[k] == short[k][0]]
        for k in short:
            counts[k] += cl[k] == short[k][0]
        both += v["lim_gtx"][0] == "registers" and v["lim_ltrf"][0] == "registers"
        big_gain += v["gain"] >= 0.30
        rows.append(
            f"| `{w}` | {what.get(w, '')} | {', '.join(tags) or '-'} "
            f"| {v['regs_gtx']} / {v['regs_ltrf']}, {ptxas.get(w, '?')} "
            f"| {v['lim_gtx'][0]} / {v['lim_ltrf'][0]} | {v['gain']:+.0%} | {v['strand']:.1f} "
            f"| {v['operand']:.0%} |")
    summary = (f"{len(m.names)} workloads: cache-sensitive {counts['cache_sensitivity']} "
               f"({big_gain} with at least +30% IPC), register-limited on maxwell-ltrf "
               f"{counts['register_limited']} ({both} on gtx480 too), long strands "
               f"{counts['long_strands']}, operand-collection-bound {counts['operand_bound']}, "
               f"high WIR reuse {counts['wir_reuse']}.")
    text = "\n".join(rows) + "\n\n" + summary + "\n"
    if args.readme:
        with open(args.readme) as fh:
            old = fh.read()
        begin, end = "<!-- workload-classes:begin -->\n", "<!-- workload-classes:end -->"
        if begin not in old or end not in old:
            sys.exit(f"error: {args.readme} lacks the markers {begin.strip()} and {end}")
        head, rest = old.split(begin, 1)
        _, tail = rest.split(end, 1)
        with open(args.readme, "w") as fh:
            fh.write(head + begin + text + end + tail)
    else:
        sys.stdout.write(text)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    default_out = os.path.join(REPO, "results", "workload-classes")
    p = sub.add_parser("measure", help="run the workloads at every point")
    p.add_argument("--out", default=default_out)
    p.add_argument("-j", "--jobs", type=int, default=2)
    p.add_argument("names", nargs="*")
    p = sub.add_parser("classify", help="print the classes file")
    p.add_argument("--stats", default=default_out)
    p.add_argument("--commit", default="(not given)")
    p = sub.add_parser("table", help="print (or put into a README) the per-workload table")
    p.add_argument("--stats", default=default_out)
    p.add_argument("--readme")
    a = ap.parse_args()
    return {"measure": measure, "classify": classify, "table": table}[a.command](a)


if __name__ == "__main__":
    sys.exit(main())
