#!/usr/bin/env bash
# The README's server table: one round of Debian's redis-server (defaults; appendonly + appendfsync always)
# and `cosine serve` (--sync never, batch, always) under redis-benchmark, side by side on loopback.
# Needs redis-server and redis-tools (apt-get install redis-server redis-tools) and a release build
# (cargo build --release -p cosine). Usage: bash benches/redis-compare.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
cosine=./target/release/cosine
work="$(mktemp -d)"
trap 'redis-cli -p 6401 shutdown nosave >/dev/null 2>&1 || true; redis-cli -p 6402 shutdown >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
rate() { tr '\r' '\n' | grep "per second" | awk '{print $2}' | tr '\n' ' '; }
bench() { # port label
    local one both
    one=$(redis-benchmark -p "$1" -t set -n 100000 -c 50 -d 100 -q | rate)
    both=$(redis-benchmark -p "$1" -t set,get -n 50000 -r 100000 -d 100 -q | rate)
    echo "$2 SET-c50 $one SET,GET $both"
}
wait_port() { for _ in $(seq 1 50); do redis-cli -p "$1" ping >/dev/null 2>&1 && return; sleep 0.1; done; }
for round in $(seq 1 "$rounds"); do
    echo "round $round"
    for mode in default always; do
        rm -rf "$work/redis"; mkdir -p "$work/redis"
        if [ "$mode" = default ]; then
            redis-server --port 6401 --dir "$work/redis" --daemonize yes >/dev/null
        else
            redis-server --port 6401 --appendonly yes --appendfsync always --save "" --dir "$work/redis" --daemonize yes >/dev/null
        fi
        wait_port 6401; bench 6401 "redis-$mode"
        redis-cli -p 6401 shutdown nosave >/dev/null 2>&1 || true; sleep 0.5
    done
    for sync in never batch always; do
        rm -rf "$work/cosine"
        "$cosine" serve --design examples/design-lsm.json --data "$work/cosine" --bind 127.0.0.1:6402 --sync "$sync" >"$work/serve.log" 2>&1 &
        wait_port 6402; bench 6402 "cosine-$sync"
        redis-cli -p 6402 shutdown >/dev/null 2>&1 || true; wait
    done
done
