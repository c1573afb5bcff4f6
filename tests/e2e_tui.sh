#!/usr/bin/env bash
# End-to-end test of the workbench in a real terminal (tmux, 120x40): walk the tabs, run a
# fit, save the parameter set, export a PNG, load a cloth scene and render its frame, quit;
# then close the terminal under a running simulation: the process must be gone within 2 s.
# Fails with the captured screen.
# Usage: tests/e2e_tui.sh [path/to/kestrel]   (default: target/release/kestrel)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/target/release/kestrel}"
[ -x "$bin" ] || { echo "e2e: no binary at $bin (cargo build --release first)"; exit 1; }
if ! command -v tmux >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
  else
    echo "e2e: tmux is missing and cannot be installed here"; exit 1
  fi
fi
label=e2e
# shellcheck source=tests/tmux_session.sh
source "$root/tests/tmux_session.sh"

cd "$work"
ln -s "$root/scenes" scenes   # the Cloth tab lists ./scenes
tmux new-session -d -s "$session" -x 120 -y 40 "NO_COLOR= '$bin'; echo exited-\$?; sleep 30"
wait_for "1 Curves" 10
wait_for "Cotton shirting"
wait_for "EMT"  # the KES values of the first curve (tensile warp)
keys Tab;  wait_for "estimate from"
keys Tab;  wait_for "dissipated ["
# the help closed before the next key (Escape and 4 read together would be Alt-4)
keys '?';  wait_for "driving path"; keys Escape; wait_gone "driving path"
keys 4;    wait_for "idle: Enter runs the fit"
keys Enter; wait_for "fit done" 60
keys a;    wait_for "accepted into the Connector tab"
keys s;    wait_for "save the card (1 law, above) to"; wait_for "tensile warp (accepted)"
keys C-u;  tmux send-keys -t "$session" -l "e2e.params.toml"; keys Enter
wait_for "/e2e.params.toml" 10
keys 6;    wait_for "export PNG"
keys Enter; wait_for "write .png or .svg to"
keys C-u;  tmux send-keys -t "$session" -l "e2e.png"; keys Enter
wait_for "/e2e.png" 30
keys 5;    wait_for "provot_sheet_17"
keys Down Down Down Down Down; keys Enter; wait_for "paused" 20
keys 6;    wait_for "cloth: current frame"
keys Down Down Down; keys Enter; wait_for "write PNG to"
keys C-u;  tmux send-keys -t "$session" -l "e2e-cloth.png"; keys Enter
wait_for "/e2e-cloth.png" 90
wait_for "adapter:" 5
keys q;    wait_for "exited-0" 10

[ -s "$work/e2e.params.toml" ] || fail "no parameter file written"
grep -q 'kestrel_params = 1' "$work/e2e.params.toml" || fail "parameter file has no format version"
head -c 8 "$work/e2e.png" | od -An -tx1 | grep -q '89 50 4e 47' || fail "e2e.png is not a PNG"
head -c 8 "$work/e2e-cloth.png" | od -An -tx1 | grep -q '89 50 4e 47' || fail "e2e-cloth.png is not a PNG"
# The terminal goes away while a simulation runs: the process must be gone within 2 s.
tmux kill-session -t "$session" 2>/dev/null || true
tmux new-session -d -s "$session" -x 120 -y 40 "NO_COLOR= '$bin'; sleep 30"
wait_for "1 Curves" 10
keys 5;    wait_for "provot_sheet_17"
keys Down Down Down Down Down; keys Enter; wait_for "paused" 20
keys Space; sleep 1
shell=$(tmux list-panes -t "$session" -F '#{pane_pid}')
pid=$(ps -o pid= --ppid "$shell" | tr -d ' ' | head -n 1)
[ -n "$pid" ] || fail "no workbench process under the pane's shell"
tmux kill-session -t "$session"
# gone: no such process, or a zombie whose parent (the pane's shell) died with the terminal
running() { case "$(ps -o stat= -p "$1" 2>/dev/null)" in ""|Z*) return 1 ;; *) return 0 ;; esac; }
for _ in $(seq 20); do running "$pid" || break; sleep 0.1; done
if running "$pid"; then
  kill -9 "$pid" 2>/dev/null || true
  echo "e2e FAILED: the workbench (pid $pid) still ran 2 s after its terminal went away"; exit 1
fi
echo "e2e: 2 passed, 0 failed"
