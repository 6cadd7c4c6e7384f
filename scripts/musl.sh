#!/usr/bin/env bash
# A static yace: the x86_64-unknown-linux-musl target, one binary with no
# shared library at all, for any x86-64 Linux (old glibc, Alpine, a
# scratch container). Checked here: it is static (no interpreter, no
# NEEDED), it says its version, and it runs a short load test against its
# own embedded target.
#
#   scripts/musl.sh           build target/x86_64-unknown-linux-musl/dist/yace and check it
#
# Needs rustup (it adds the target's standard library, once) and musl's
# C compiler for ring's C and assembly (Debian: apt-get install
# musl-tools). It builds the `dist` profile (fat LTO, one codegen unit: the
# shipped build), which takes several minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

triple=x86_64-unknown-linux-musl
log() { printf '\n== %s\n' "$*"; }
fail() { echo "scripts/musl.sh: $*" >&2; exit 1; }

command -v x86_64-linux-musl-gcc >/dev/null 2>&1 || command -v musl-gcc >/dev/null 2>&1 ||
    fail "no musl C compiler (ring compiles C for the target): apt-get install musl-tools"
if ! rustup target list --installed 2>/dev/null | grep -qx "$triple"; then
    log "rustup target add $triple"
    rustup target add "$triple"
fi

log "dist build for $triple"
cargo build --profile dist --locked -p yace --target "$triple"
bin="${CARGO_TARGET_DIR:-target}/$triple/dist/yace"

log "static?"
file "$bin" 2>/dev/null || true
if readelf -l "$bin" | grep -q 'Requesting program interpreter'; then
    fail "$bin has a program interpreter: it is not static"
fi
if readelf -d "$bin" 2>/dev/null | grep -q '(NEEDED)'; then
    fail "$bin needs shared libraries: $(readelf -d "$bin" | grep NEEDED)"
fi
echo "  no interpreter, no shared library ($(du -h "$bin" | cut -f1))"

log "runs"
"$bin" --version
out=$(mktemp "${TMPDIR:-/tmp}/yace-musl.XXXXXX.json")
trap 'rm -f "$out"' EXIT
scripts/check-run.sh "$bin" "$out" "the static binary"

log "static binary ready: $bin"
