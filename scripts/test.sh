#!/usr/bin/env bash
# The whole test suite: system packages, a release build of every crate, binary and
# example, then every test through cargo-nextest (which prints the summary), then
# the doc tests. Usage: scripts/test.sh [extra nextest arguments]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup-system.sh
if ! cargo nextest --version >/dev/null 2>&1; then
  cargo install cargo-nextest --locked
fi

cargo fmt --all -- --check
cargo build --release --workspace --all-targets
cargo nextest run --workspace --release --no-fail-fast "$@"
cargo test --release --workspace --doc
