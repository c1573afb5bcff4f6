#!/usr/bin/env bash
# The Δt study of docs/cloth.md: SCENE run for 1 s of simulated time at each Δt with
# INTEGRATOR, the last positions compared with a Δt = 0.25 ms run of the same integrator
# (examples/record_distance.rs); prints one markdown row per Δt: evaluations and CG
# iterations per step, halved steps, CPU per step and per simulated second, and the largest
# particle distance to the reference (m and % of the sheet's size).
# Usage: benches/dt_study.sh SCENE [INTEGRATOR] ["0.0005 0.001 0.002 0.005 0.01 0.02"]
set -euo pipefail
cd "$(dirname "$0")/.."
scene=$1
integ=${2:-newton_tangent}
dts=${3:-"0.0005 0.001 0.002 0.005 0.01 0.02"}
bin=target/release/kestrel
dist=target/release/examples/record_distance
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # dt → record file; prints the summary JSON path
  local dt=$1 steps
  steps=$(python3 -c "print(round(1.0 / $dt))")
  RAYON_NUM_THREADS=1 /usr/bin/time -f "%U" -o "$tmp/time_$dt" "$bin" run "$scene" --integrator "$integ" \
    --dt "$dt" --steps "$steps" --every "$steps" --record "$tmp/r_$dt.krec" --json > "$tmp/s_$dt.json"
}
run 0.00025
echo "| Δt (ms) | evaluations/step | CG iterations/step | halved | CPU ms/step | CPU s per simulated s | max distance (m) | % of size |"
echo "|---|---|---|---|---|---|---|---|"
for dt in 0.00025 $dts; do
  [ "$dt" = 0.00025 ] || run "$dt" || { echo "| $(python3 -c "print($dt*1e3)") | failed | | | | | | |"; continue; }
  d=$("$dist" "$tmp/r_0.00025.krec" "$tmp/r_$dt.krec")
  python3 - "$tmp/s_$dt.json" "$(tail -1 "$tmp/time_$dt")" "$d" "$dt" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); user = float(sys.argv[2]); d = json.loads(sys.argv[3]); dt = float(sys.argv[4])
steps = s["steps"]
print(f"| {dt*1e3:g} | {s['evaluations_per_step']:.2f} | {s['linear_iterations_per_step']:.1f} | {s['halved_steps']} "
      f"| {1e3*user/steps:.2f} | {user/s['sim_time_s']:.2f} | {d['max_m']:.2e} | {100*d['max_of_size']:.3f} |")
PY
done
