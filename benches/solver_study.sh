#!/usr/bin/env bash
# The solver study of docs/cloth.md: the hanging kes sheet (cotton shirting, 1 cm spacing,
# two corners pinned, as scenes/kes_sheet_70.toml) at N × N for each Δt and method, one
# thread, STEPS steps; prints one markdown row per run: evaluations and Newton/Broyden
# iterations per step, halved and unconverged steps, user CPU per step.
# Usage: benches/solver_study.sh "20 50 70 100" "0.001 0.002 0.005 0.01" [STEPS] [METHODS]
# METHODS: integrator:preconditioner pairs, default all five below.
set -euo pipefail
cd "$(dirname "$0")/.."
grids=${1:-"20 50 70 100"}
dts=${2:-"0.001 0.002 0.005 0.01"}
steps=${3:-100}
methods=${4:-"broyden:stretch broyden:lines newton_krylov:block newton_krylov:lines newton_tangent:lines"}
bin=target/release/kestrel
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| grid | dt (ms) | method | evaluations/step | iterations/step | halved | unconverged | CPU ms/step |"
echo "|---|---|---|---|---|---|---|---|"
for n in $grids; do
  scene=$tmp/sheet_$n.toml
  size=$(python3 -c "print(round(($n - 1) * 0.01, 6))")
  sed -e "s/^nu = 70/nu = $n/; s/^nv = 70/nv = $n/" \
      -e "s/^size = \[0.69, 0.69\]/size = [$size, $size]/" \
      -e "s/\[69, 0\]/[$((n - 1)), 0]/" \
      -e "s#\"fabrics/#\"$PWD/scenes/fabrics/#" scenes/kes_sheet_70.toml > "$scene"
  for dt in $dts; do
    for m in $methods; do
      integ=${m%%:*}
      pre=${m##*:}
      out=$tmp/out.json
      # a run that does not converge exits 1 but still prints its summary
      RAYON_NUM_THREADS=1 /usr/bin/time -f "%U" -o "$tmp/time" "$bin" run "$scene" --steps "$steps" \
        --dt "$dt" --integrator "$integ" --preconditioner "$pre" --json > "$out" 2>/dev/null || true
      user=$(tail -1 "$tmp/time")
      python3 - "$out" "$n" "$dt" "$m" "$user" "$steps" <<'PY'
import json, sys
path, n, dt, m, user, steps = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception:
    print(f"| {n}² | {float(dt)*1e3:g} | {m} | failed (blow-up) | | | | |")
    sys.exit(0)
print(f"| {n}² | {float(dt)*1e3:g} | {m} | {d['evaluations_per_step']:.1f} | {d['iterations_per_step']:.2f} "
      f"| {d['halved_steps']} | {d['unconverged_steps']} | {1e3*float(user)/int(steps):.1f} |")
PY
    done
  done
done
