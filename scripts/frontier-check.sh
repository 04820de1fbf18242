#!/usr/bin/env bash
# Compares the frontiers two `cosine` binaries find, point by point, over 84 searches: the 21 named workloads at
# their default size, at 1e8 and at 1e10 entries (today's catalog), and at their default size on the paper's
# catalog, all at a $20,000 budget. A change to the search that should not change what it finds must show
# "slower at 0" on every line.
#
#   scripts/frontier-check.sh OLD_COSINE NEW_COSINE [OUT_DIR]
#
# Each search takes 1-3 s; the whole check about 4 minutes a binary on a 2-core machine. Needs python3.
set -euo pipefail
old=$1
new=$2
out=${3:-$(mktemp -d)}
workloads="ycsb-a ycsb-b ycsb-c ycsb-d ycsb-e ycsb-f $(for i in $(seq 0 14); do printf 'endure-w%s ' "$i"; done)"
for side in old new; do
  bin=${!side}
  mkdir -p "$out/$side"
  for w in $workloads; do
    for e in default 100000000 10000000000; do
      args=()
      [ "$e" = default ] || args=(--entries "$e")
      "$bin" search --budget 20000 --workload "$w" "${args[@]}" --json >"$out/$side/$w-$e.json"
    done
    "$bin" search --budget 20000 --workload "$w" --catalog paper --json >"$out/$side/$w-paper.json"
  done
done
python3 - "$out/old" "$out/new" <<'PY'
import glob, json, os, sys
old, new = sys.argv[1], sys.argv[2]

def latency_at(frontier, cost):
    best = float("inf")
    for c in frontier:
        if c["cost"]["total_usd"] <= cost + 1e-9:
            best = min(best, c["latency_s"])
    return best

slower_total = 0
for path in sorted(glob.glob(old + "/*.json")):
    name = os.path.basename(path)
    a = json.load(open(path))["frontier"]
    b = json.load(open(os.path.join(new, name)))["frontier"]
    slower, faster, worst, best = 0, 0, 1.0, 1.0
    for cost in sorted({c["cost"]["total_usd"] for c in a + b}):
        la, lb = latency_at(a, cost), latency_at(b, cost)
        if la == float("inf") and lb == float("inf"):
            continue
        if lb > la * (1 + 1e-9):
            slower += 1
            worst = max(worst, lb / la)
        elif lb < la * (1 - 1e-9):
            faster += 1
            best = max(best, la / lb)
    slower_total += slower
    print(f"{name:32s} points {len(a):4d} -> {len(b):4d}  slower at {slower:3d} (up to {worst:.4f}x)"
          f"  faster at {faster:3d} (up to {best:.4f}x)")
print(f"slower points in all: {slower_total}")
sys.exit(1 if slower_total else 0)
PY
