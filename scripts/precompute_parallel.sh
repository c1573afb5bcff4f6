#!/usr/bin/env bash
# Precompute a reduced model in N shard processes on this machine with GNU parallel, then
# merge them (docs/reduced.md). Usage: scripts/precompute_parallel.sh SCENE N MODEL [ARGS...]
# (ARGS go to every shard, e.g. --chains 8). Needs `parallel` and `kestrel` on PATH (or KESTREL).
set -euo pipefail
scene=$1 n=$2 model=$3
shift 3
kestrel=${KESTREL:-kestrel}
parts=$(mktemp -d)
trap 'rm -rf "$parts"' EXIT
# one process per shard; each uses all cores it is given (RAYON_NUM_THREADS to limit)
seq 1 "$n" | parallel --halt now,fail=1 \
    "$kestrel" precompute "$scene" --shard {}/"$n" --out "$parts"/part{}.krp --json "$@"
"$kestrel" precompute merge "$parts"/part*.krp --out "$model" --json
