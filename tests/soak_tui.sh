#!/usr/bin/env bash
# Soak test of the workbench (documented run, not CI): a cloth simulation runs in the Cloth
# tab while random keys are sent for DURATION seconds (default 1800); the workbench's resident
# memory (RSS) is sampled every 10 s. Fails when the process dies, panics, or its RSS grows by
# 10 % or more between the first sample (after a 60 s warm-up) and the last.
# Usage: nice -n 19 tests/soak_tui.sh [path/to/kestrel] [DURATION_S] [SCENE_DOWNS]
#   SCENE_DOWNS: Down presses in the Cloth tab's scene list (default 3: fabric_hanging.toml).
# Prints one summary line: keys sent, RSS start/end/max [KiB], growth [%].
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/target/release/kestrel}"
duration="${2:-1800}"
downs="${3:-3}"
[ -x "$bin" ] || { echo "soak: no binary at $bin"; exit 1; }
command -v tmux >/dev/null || { echo "soak: tmux is missing"; exit 1; }
label=soak
# shellcheck source=tests/tmux_session.sh
source "$root/tests/tmux_session.sh"
rss() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0; }

cd "$work"
ln -s "$root/scenes" scenes
tmux new-session -d -s "$session" -x 120 -y 40 \
  "RUST_BACKTRACE=1 NO_COLOR= '$bin' 2>'$work/stderr'; echo exited-\$?; sleep 600"
wait_for "1 Curves" 10
keys 5; wait_for "provot_sheet_17"
for _ in $(seq "$downs"); do keys Down; done
keys Enter; wait_for "paused" 30
keys Space; wait_for "running" 10
shell=$(tmux list-panes -t "$session" -F '#{pane_pid}')
pid=$(ps -o pid= --ppid "$shell" | tr -d ' ' | head -n 1)
[ -n "$pid" ] || fail "no workbench process"

# Keys that browse, switch tabs, change laws and views, single-step, open and close help;
# not q / Ctrl-C (quit), Enter (loads or fits), Space (pauses), o / s (prompts).
pool=(Tab BTab 1 2 3 4 6 Up Down Left Right PPage NPage '?' Escape j k l f m p n + - '[' ']')
sent=0
start=$(date +%s)
warm=$((start + 60))
rss0=0; rss1=0; rssmax=0; last_sample=0; last_check=$start
while :; do
  now=$(date +%s)
  [ "$now" -ge $((start + duration)) ] && break
  kill -0 "$pid" 2>/dev/null || fail "the workbench died after $sent keys"
  keys "${pool[RANDOM % ${#pool[@]}]}"
  sent=$((sent + 1))
  sleep 0.$((RANDOM % 3 + 1))
  # every 20 s: back to the Cloth tab, and run the simulation again if a key paused it
  if [ "$now" -ge $((last_check + 20)) ]; then
    last_check=$now
    keys Escape 5; sleep 0.3
    if screen | grep -qF "paused (Space runs"; then keys Space; fi
  fi
  if [ "$now" -ge "$warm" ] && [ "$now" -ge $((last_sample + 10)) ]; then
    last_sample=$now
    r=$(rss)
    [ "$rss0" = 0 ] && rss0=$r
    rss1=$r
    [ "$r" -gt "$rssmax" ] && rssmax=$r
  fi
done
kill -0 "$pid" 2>/dev/null || fail "the workbench died"
screen | grep -q "running" || { keys Escape 5; sleep 0.5; }
steps=$(screen | grep -o 'step [0-9]*' | head -n 1 || true)
keys Escape q; sleep 1
screen | grep -q "quit" && keys y
sleep 1
if grep -q "panicked" "$work/stderr" 2>/dev/null; then fail "panic: $(cat "$work/stderr")"; fi
growth=$(awk -v a="$rss0" -v b="$rss1" 'BEGIN { if (a > 0) printf "%.1f", 100 * (b - a) / a; else print "nan" }')
echo "soak: ${duration} s, $sent keys sent, RSS start ${rss0} KiB, end ${rss1} KiB, max ${rssmax} KiB, growth ${growth} %, ${steps:-step ?}"
awk -v g="$growth" 'BEGIN { exit !(g < 10) }' || fail "RSS grew by ${growth} %"
