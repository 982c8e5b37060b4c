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

# The ibverbs rail is built and tested too (it reports "no RDMA device" where
# there is none); one feature set for every step, so nothing is built twice.
features=(--features mpcrs-rails/ibverbs)

cargo fmt --all -- --check
cargo build --release --workspace --all-targets "${features[@]}"
cargo test --release --workspace --doc "${features[@]}"
cargo nextest run --workspace --release --no-fail-fast "${features[@]}" "$@"
