#!/usr/bin/env bash
# The whole test suite: system packages, a release build of every crate, binary and
# example, the doc tests, then every other test through cargo-nextest, whose
# summary closes the output. Usage: scripts/test.sh [extra nextest arguments]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup-system.sh
if ! cargo nextest --version >/dev/null 2>&1; then
  cargo install cargo-nextest --locked
fi

cargo fmt --all -- --check
cargo build --release --workspace --all-targets
cargo test --release --workspace --doc
cargo nextest run --workspace --release --no-fail-fast "$@"
