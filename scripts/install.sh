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
"$bin" run -n 2000 -c 4 -q --json "$root/check.json" >/dev/null
python3 - "$root/check.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["responses"] == 2000 and s["errors"] == 0, s
print(f"  the installed yace ran 2000 requests against its embedded target: {s['rps']:.0f} responses/s")
EOF
printf '\n== cargo install works\n'
