#!/usr/bin/env bash
# `cargo install --path crates/cli`, as the README says, into a throwaway
# root: the installed yace says its version and runs a short load test
# against its own embedded target. Not part of `cargo test`: a release
# build takes minutes (it reuses target/release when scripts/deb.sh or
# `cargo build --release` ran before: cargo install --path builds in the
# workspace's target folder).
#
#   scripts/install.sh
set -euo pipefail
cd "$(dirname "$0")/.."

root=$(mktemp -d "${TMPDIR:-/tmp}/yace-install.XXXXXX")
trap 'rm -rf "$root"' EXIT

printf '\n== cargo install --path crates/cli --root %s --locked\n' "$root"
start=$(date +%s)
cargo install --path crates/cli --root "$root" --locked
echo "  $(($(date +%s) - start)) s"

bin="$root/bin/yace"
[ -x "$bin" ] || { echo "scripts/install.sh: no $bin" >&2; exit 1; }
"$bin" --version
scripts/check-run.sh "$bin" "$root/check.json" "the installed yace"
printf '\n== cargo install works\n'
