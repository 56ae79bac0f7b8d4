#!/usr/bin/env bash
# Reproduce every implemented figure at one size, one after the other.
# Usage: scripts/reproduce-all.sh [paper|small|quick] [extra reproduce options...]
# Each figure's run can be resumed on its own with `stealbench reproduce <id> --resume`.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-quick}
shift || true
cargo build --release
bin=target/release/stealbench
if [ -n "${CARGO_TARGET_DIR:-}" ]; then bin=$CARGO_TARGET_DIR/release/stealbench; fi
ids=$("$bin" list | awk '/^Figures/{f=1; next} /^$/{f=0} f && $2 == "implemented" {print $1}')
for id in $ids; do
  echo "=== $id --size $size"
  "$bin" reproduce "$id" --size "$size" "$@"
done
