#!/usr/bin/env bash
# fuzz/run.sh — run every fuzz target (or the ones named) for SECONDS each.
#
#   fuzz/run.sh                 # every target, 60 s each
#   fuzz/run.sh 10              # smoke: 10 s each (what scripts/test.sh runs)
#   fuzz/run.sh 600 response_parser
#
# Needs the nightly toolchain (rustup toolchain install nightly); installs
# cargo-fuzz (`cargo install cargo-fuzz --locked`, ~2 min) when it is missing.
# Each target fuzzes into a working corpus under fuzz/out/corpus/<target>
# (git-ignored; a temporary one for runs of 30 s or less), seeded from the
# committed fuzz/corpus/<target>, so the committed corpus never grows by
# itself. A crash leaves its input in
# fuzz/artifacts/<target>/ and the log in fuzz/out/<target>.log; the script
# goes on with the other targets and exits 1 at the end.
#
# Environment:
#   FUZZ_SANITIZER   address (default) or none (faster to build and run)
#   FUZZ_ARGS        extra libFuzzer arguments, e.g. "-max_len=65536"
set -euo pipefail

FUZZ_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$FUZZ_DIR"
log() { printf '[fuzz] %s\n' "$*" >&2; }

SECONDS_EACH=${1:-60}
[[ $SECONDS_EACH =~ ^[0-9]+$ ]] && (( SECONDS_EACH >= 1 )) \
    || { log "usage: fuzz/run.sh [SECONDS] [TARGET...]"; exit 2; }
shift || true
SANITIZER=${FUZZ_SANITIZER:-address}

if ! command -v cargo >/dev/null 2>&1 && [[ -x $HOME/.cargo/bin/cargo ]]; then
    export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    log "the nightly toolchain is missing: rustup toolchain install nightly"
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    log "installing cargo-fuzz (cargo install cargo-fuzz --locked; ~2 min)"
    cargo install cargo-fuzz --locked
fi

if (( $# > 0 )); then
    TARGETS=("$@")
else
    mapfile -t TARGETS < <(cargo +nightly fuzz list)
fi

log "building ${TARGETS[*]} (nightly, sanitizer $SANITIZER)"
cargo +nightly fuzz build --sanitizer "$SANITIZER" >&2

mkdir -p out
# A smoke run (30 s or less) starts from the committed corpus alone, in a
# throw-away working corpus, so its time goes to fuzzing rather than to
# replaying what earlier long runs piled up.
SMOKE_DIR=
if (( SECONDS_EACH <= 30 )); then
    SMOKE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/yace-fuzz-smoke.XXXXXX")
    trap 'rm -rf "$SMOKE_DIR"' EXIT
fi
failed=()
for t in "${TARGETS[@]}"; do
    work="${SMOKE_DIR:-out/corpus}/$t"
    mkdir -p "$work" "corpus/$t"
    log "$t: ${SECONDS_EACH}s (corpus $work + corpus/$t)"
    # shellcheck disable=SC2086  # FUZZ_ARGS is a list of flags
    if cargo +nightly fuzz run --sanitizer "$SANITIZER" "$t" "$work" "corpus/$t" -- \
        -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 ${FUZZ_ARGS:-} >"out/$t.log" 2>&1; then
        stats=$(grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "out/$t.log" \
                | sed 's/^stat:://' | tr '\n' ' ')
        cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[^ ]+' "out/$t.log" | tail -n1)
        log "$t: ok  $stats ${cov:+ $cov}"
    else
        failed+=("$t")
        log "$t: FAILED (full log: fuzz/out/$t.log):"
        if grep -q 'panicked at' "out/$t.log"; then
            grep -m1 -A1 'panicked at' "out/$t.log" >&2
        else
            grep -E '^==[0-9]+== ?ERROR|^SUMMARY' "out/$t.log" | head -n 4 >&2 || tail -n 20 "out/$t.log" >&2
        fi
        grep -E 'Test unit written to' "out/$t.log" | sed 's/.*Test unit written to /input: /' >&2 || true
    fi
done

if (( ${#failed[@]} > 0 )); then
    log "FAILED: ${failed[*]} (inputs in fuzz/artifacts/<target>/; reproduce with"
    log "  cd fuzz && cargo +nightly fuzz run <target> artifacts/<target>/<file>)"
    exit 1
fi
log "all ${#TARGETS[@]} targets ran ${SECONDS_EACH}s each without a failure"
