#!/usr/bin/env python3
"""The search's answers and the price tag's checks as result files, and the tables README.md and BENCHMARKS.md
show of them, rendered from those files.

    scripts/results.py search COSINE [OUT]      # runs `cosine search --json` for YCSB A-F at $5,000, $20,000 and
                                                # $60,000 (a few minutes on a 2-core machine) and writes OUT
                                                # (default bench-results/search-DATE.json)
    scripts/results.py verify-table FILE...     # prints the table of `cosine verify --json` files
    scripts/results.py render                   # rewrites the marked sections of README.md and BENCHMARKS.md
                                                # from the newest bench-results/search-*.json and, per workload,
                                                # the newest bench-results/verify-ycsb-?-*.json
                                                # and adversary-*.json (`cosine adversary --json` runs)

Result files are named by suite and date (`verify-ycsb-a-2026-12-07.json`); a newer file of a suite replaces the
older one in the tables, and git keeps the old.

A marked section is the text between `<!-- BEGIN name -->` and `<!-- END name -->`; everything else is left as
it is.
"""
import datetime
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "bench-results")
WORKLOADS = ["ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f"]
BUDGETS = [5000, 20000, 60000]


def run_search(cosine, workload, budget):
    out = subprocess.run(
        [cosine, "search", "--budget", str(budget), "--workload", workload, "--json"],
        check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def vm_rows(config, workload):
    """Each VM type of a configuration: what it delivers against its limits."""
    rows = []
    for p in config["parts"]:
        d = p["design"]
        dl = d.get("delivered") or {}
        rows.append({
            "vm": p["vm"], "count": p["count"], "vcpus": p["vcpus"], "memory_gib": p["memory_gib"],
            "reserved_gib": p["reserved_gib"], "design_bytes": design_bytes(d["design"]),
            "class": d["class"], "io_per_op": d["io_per_op"], "bound": dl.get("bound"),
            "iops_used": dl.get("iops_used"), "bandwidth_used": dl.get("bandwidth_used"),
            "op_latency_s": dl.get("op_latency_s"), "recovery_s": d["recovery_s"],
            # the operations this VM runs in the configuration's time, and the requests they make
            "requests_per_s": config["throughput"] * p["entries_per_vm"] / total_entries(config)
            * requests(d["requests"]),
            "iops": p["iops"], "mibps": p["mibps"],
        })
    return rows


def total_entries(config):
    return sum(p["entries_per_vm"] * p["count"] for p in config["parts"])


def design_bytes(d):
    return d["buffer_bytes"] + d["filter_bytes"] + d["fence_bytes"] + d.get("cache_bytes", 0)


def requests(r):
    device = r["random_reads"] * (1 - r.get("cached_share", 0.0))
    return device + (r["sequential_blocks"] * r["block_bytes"] + r["log_bytes"]) / (256 * 1024)


def summarize(v, workload):
    best = v["best"]
    out = {"workload": workload, "budget": v["budget"], "search_seconds": v["search"]["seconds"],
           "best": None, "frontier_checked": 0, "frontier_within_limits": True, "baselines": []}
    if best:
        out["best"] = {"provider": best["provider"], "vms": " + ".join(
            f'{p["count"]} x {p["vm"]}' for p in best["parts"]), "monthly_usd": best["cost"]["total_usd"],
            "throughput": best["throughput"], "parts": vm_rows(best, workload)}
    for c in v["frontier"]:
        out["frontier_checked"] += 1
        for r in vm_rows(c, workload):
            ok = (r["iops_used"] is not None and r["iops_used"] <= 1 + 1e-9
                  and r["bandwidth_used"] <= 1 + 1e-9 and r["recovery_s"] <= v["max_recovery_s"] * (1 + 1e-9)
                  and r["design_bytes"] <= (r["memory_gib"] - r["reserved_gib"]) * 2**30 + 1
                  and r["requests_per_s"] <= r["iops"] * (1 + 1e-5))  # JSON rounding at the limit
            out["frontier_within_limits"] &= ok
    for b in v["baselines"]:
        fixed = b["best"]
        m = b.get("margin_across_phi") or {}
        out["baselines"].append({
            "system": b["system"], "throughput": fixed["throughput"] if fixed else None,
            "vms": " + ".join(f'{p["count"]} x {p["vm"]}' for p in fixed["parts"]) if fixed else None,
            "speedup_of_cosine": b["speedup_of_cosine"], "margin_low": m.get("low"), "margin_high": m.get("high"),
            "phi_noisy": m.get("phi_noisy_or_bounded"),
            "bound": ((fixed["parts"][0]["design"].get("delivered") or {}).get("bound") if fixed else None)})
    return out


def collect_search(cosine, out_path):
    runs = []
    for budget in BUDGETS:
        for w in WORKLOADS:
            print(f"{w} at ${budget} ...", file=sys.stderr)
            runs.append(summarize(run_search(cosine, w, budget), w))
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    doc = {"command": f"{os.path.basename(cosine)} search --budget B --workload W --json", "commit": commit,
           "runs": runs}
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def fmt_count(x):
    return "-" if x is None else f"{x:,.0f}"


def fmt_ratio(x):
    return "-" if x is None else f"{x:.2f}"


def margin(b):
    x = b["speedup_of_cosine"]
    if x is None:
        return "-"
    lo, hi = b.get("margin_low"), b.get("margin_high")
    if lo is not None and hi is not None and abs(hi - lo) > 0.005 * x:
        head = f"{x:.2f}x ({lo:.2f}-{hi:.2f})"
    else:
        head = f"{x:.2f}x"
    return head


def search_table(doc, budget):
    lines = [
        f"| workload | Cosine's pick at ${budget:,} | ops/s | bound by | ÷ RocksDB | ÷ WiredTiger | ÷ FASTER |",
        "| --- | --- | ---: | --- | --- | --- | --- |",
    ]
    for r in doc["runs"]:
        if r["budget"] != budget or not r["best"]:
            continue
        b = {x["system"]: x for x in r["baselines"]}
        p = r["best"]["parts"][0]
        lines.append(
            f'| {r["workload"]} | {r["best"]["provider"]} {r["best"]["vms"]}, {p["class"]} | '
            f'{fmt_count(r["best"]["throughput"])} | {p["bound"]} | {margin(b.get("RocksDB", {}))} | '
            f'{margin(b.get("WiredTiger", {}))} | {margin(b.get("FASTER", {}))} |')
    return "\n".join(lines)


def limits_table(doc):
    lines = [
        "| workload | budget | configurations on the frontier | all within IOPS, bandwidth, memory less reserve, "
        "recovery | the pick's IOPS / bandwidth used | its recovery | search seconds |",
        "| --- | ---: | ---: | --- | --- | ---: | ---: |",
    ]
    for r in doc["runs"]:
        p = r["best"]["parts"][0] if r["best"] else None
        use = "-" if not p else f'{100 * p["iops_used"]:.0f}% / {100 * p["bandwidth_used"]:.0f}%'
        rec = "-" if not p else f'{p["recovery_s"]:.0f} s'
        lines.append(f'| {r["workload"]} | ${r["budget"]:,} | {r["frontier_checked"]} | '
                     f'{"yes" if r["frontier_within_limits"] else "**no**"} | {use} | {rec} | '
                     f'{r["search_seconds"]:.1f} |')
    return "\n".join(lines)


def spread(d):
    """The rounds' throughputs of one design as "low-high" (the median is the measured figure)."""
    rows = d.get("rows", [])
    runs = [r["run"] for r in rows if isinstance(r.get("run"), (int, float))]
    failed = [r.get("failed", "failed") for r in rows if not isinstance(r.get("run"), (int, float))]
    text = "-" if len(runs) < 2 else f"{min(runs):,.0f}-{max(runs):,.0f}"
    if failed:
        text += f" ({len(runs)} of {len(rows)}; {'; '.join(failed)})"
    return text


def verify_rows(paths):
    """Each design of each `cosine verify --json` file: priced against measured."""
    lines = [
        "| workload | seed, ops timed | design | priced ops/s | measured ops/s (median) | rounds' range | "
        "measured ÷ priced | priced I/Os an op | measured | ÷ priced |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for path in sorted(paths):
        v = json.load(open(path))
        for d in v["designs"] + ([v["rocksdb"]] if v.get("rocksdb") else []):
            label = d["label"].split(" M_B=")[0].replace("(fixed design; run at its tuning guide's settings)", "(fixed)")
            lines.append(
                f'| {v["workload"]} | {v.get("seed", "-")}, {fmt_count(v["operations"])} | {label} | '
                f'{fmt_count(d["priced_ops_per_s"])} | '
                f'{fmt_count(d["measured_ops_per_s"])} | {spread(d)} | '
                f'{fmt_ratio(d["throughput_measured_over_priced"])} | '
                f'{d["priced_ios_per_op"]:.3f} | '
                f'{"-" if d["measured_ios_per_op"] is None else format(d["measured_ios_per_op"], ".3f")} | '
                f'{fmt_ratio(d["ios_measured_over_priced"])} |')
    return "\n".join(lines)


def runs_of(d):
    return [r["run"] for r in d.get("rows", []) if isinstance(r.get("run"), (int, float))]


def pick_against_best(v):
    """The pick's measured throughput over the best of the designs measured, which design that was, and whether
    the two designs' rounds overlap (a ratio within the rounds' spread is not a ranking the runs can tell)."""
    designs = v["designs"]
    if len(designs) < 2 or v.get("pick_over_best_of_designs") is None:
        return "-"
    best = max(range(len(designs)), key=lambda i: designs[i]["measured_ops_per_s"] or 0)
    if best == 0:
        return f'{fmt_ratio(v["pick_over_best_of_designs"])} (the pick)'
    pick, other = runs_of(designs[0]), runs_of(designs[best])
    overlap = pick and other and max(pick) >= min(other)
    return (f'{fmt_ratio(v["pick_over_best_of_designs"])} (#{best + 1}; rounds '
            f'{"overlap" if overlap else "apart"})')


def verify_summary(paths):
    """One line a workload: the pick priced against measured, the ranking, and Cosine ÷ RocksDB."""
    lines = ["| workload | the pick: measured ÷ priced ops/s | I/Os an op, measured ÷ priced | the pick ÷ the best "
             "of the search's top designs, measured (the best; its rounds against the pick's) | Cosine ÷ RocksDB "
             "predicted | measured |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for path in sorted(paths):
        v = json.load(open(path))
        pick = v["designs"][0]
        r = v.get("cosine_over_rocksdb") or {}
        lines.append(
            f'| {v["workload"]} | {fmt_ratio(pick["throughput_measured_over_priced"])} | '
            f'{fmt_ratio(pick["ios_measured_over_priced"])} | '
            f'{pick_against_best(v)} | '
            f'{fmt_ratio(r.get("predicted"))} | {fmt_ratio(r.get("measured"))} |')
    return "\n".join(lines)


def verify_table(paths):
    return verify_rows(paths) + "\n\n" + verify_summary(paths)


def replace_section(path, name, body):
    text = open(path).read()
    begin, end = f"<!-- BEGIN {name} -->", f"<!-- END {name} -->"
    if begin not in text or end not in text:
        sys.exit(f"{path}: no section {name}")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + body.strip() + "\n" + end + tail)


def newest(pattern):
    """The newest file of each suite matching `pattern` (names end in -YYYY-MM-DD.json), by suite."""
    by_suite = {}
    for path in sorted(glob.glob(os.path.join(RESULTS, pattern))):
        suite = os.path.basename(path)[: -len("-YYYY-MM-DD.json")]
        by_suite[suite] = path
    return [by_suite[k] for k in sorted(by_suite)]


def adversary_table(doc):
    """Each run of `cosine adversary --json` (a file of several): PING latency and the server's memory."""
    rows = ["| run | keys, seconds | PINGs answered (failed) | PING p50 | p99 | max | server resident before | peak (bound) "
            "| attacker connections | server up, data intact |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for i, r in enumerate(doc["runs"], 1):
        rows.append(
            f"| {i} | {r['records']:,}, {r['seconds']:g} s | {r['pings']:,} ({r['ping_errors']}) "
            f"| {r['ping_p50_us'] / 1000:.2f} ms | {r['ping_p99_us'] / 1000:.2f} ms | {r['ping_max_us'] / 1000:.0f} ms "
            f"| {r['resident_before_bytes'] >> 20} MiB | {r['resident_peak_bytes'] >> 20} MiB ({r['rss_bound_bytes'] >> 20} MiB) "
            f"| {r['attacker_connections']} | {'yes' if r['server_up'] else 'NO'}, {'yes' if r['data_intact'] else 'NO'} |")
    return "\n".join(rows)


def render():
    searches = newest("search-*.json")
    if not searches:
        sys.exit("no bench-results/search-*.json: run `scripts/results.py search target/release/cosine` first")
    search = json.load(open(searches[-1]))
    verify = newest("verify-ycsb-?-*.json")
    readme, bench = os.path.join(ROOT, "README.md"), os.path.join(ROOT, "BENCHMARKS.md")
    replace_section(readme, "search-20000", search_table(search, 20000))
    replace_section(bench, "search-limits", limits_table(search))
    for budget in BUDGETS:
        replace_section(bench, f"search-{budget}", search_table(search, budget))
    if verify:
        replace_section(bench, "verify", verify_table(verify))
    adversary = newest("adversary-*.json")
    if adversary:
        replace_section(bench, "adversary", adversary_table(json.load(open(adversary[-1]))))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "search":
        today = datetime.date.today().isoformat()
        collect_search(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else os.path.join(RESULTS, f"search-{today}.json"))
    elif len(sys.argv) >= 3 and sys.argv[1] == "verify-table":
        print(verify_table(sys.argv[2:]))
    elif sys.argv[1:] == ["render"]:
        render()
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
