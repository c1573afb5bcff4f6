#!/usr/bin/env bash
# The test command: every Rust test (release), then the workbench end to end in tmux.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release
cargo build --release --bin kestrel
bash tests/e2e_tui.sh target/release/kestrel
