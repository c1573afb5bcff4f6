#!/usr/bin/env bash
# The test command: every Rust test (release), then the workbench end to end in tmux. The
# integration tests build target/release/kestrel, so the tmux test uses that binary as is.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release
bash tests/e2e_tui.sh target/release/kestrel
