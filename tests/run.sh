#!/usr/bin/env bash
# The test command: every Rust test (release), a fuzzing smoke run of the readers, then the
# workbench end to end in tmux. The integration tests build target/release/kestrel, so the
# tmux test uses that binary as is.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release
# a fuzzing smoke run of every reader (0.5 s each; docs/reliability.md has the long run)
cargo run --release --example fuzz -- all --seconds 0.5
bash tests/e2e_tui.sh target/release/kestrel
