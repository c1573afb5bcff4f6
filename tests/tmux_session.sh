# Shared by the tmux tests (sourced, not run): a private session in a temporary folder and the
# helpers that read its screen. Set `label` (the prefix of failure messages) and `bin` (the
# kestrel binary, made absolute here) before sourcing.
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"   # the tests run in a temporary folder
work="$(mktemp -d)"
session="kestrel-$label-$$"
cleanup() { tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

screen() { tmux capture-pane -t "$session" -p; }
fail() { echo "$label FAILED: $1"; echo "----- screen -----"; screen || true; echo "------------------"; exit 1; }
# wait_for TEXT [SECONDS]: poll the screen until TEXT shows
wait_for() {
  local text="$1" limit="${2:-10}" i=0
  while [ "$i" -lt $((limit * 10)) ]; do
    screen | grep -qF -- "$text" && return 0
    sleep 0.1; i=$((i + 1))
  done
  fail "did not see '$text' within ${limit}s"
}
# wait_gone TEXT [SECONDS]: poll the screen until TEXT is gone
wait_gone() {
  local text="$1" limit="${2:-10}" i=0
  while [ "$i" -lt $((limit * 10)) ]; do
    screen | grep -qF -- "$text" || return 0
    sleep 0.1; i=$((i + 1))
  done
  fail "'$text' still shown after ${limit}s"
}
keys() { tmux send-keys -t "$session" "$@"; }
