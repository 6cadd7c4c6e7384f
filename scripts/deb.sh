#!/usr/bin/env bash
# The Debian package, built and checked: cargo-deb packs the release binary
# with its man pages and shell completions (written by the binary itself:
# `yace man --out`, `yace completions`, so they always match it), then the
# package is installed into a throwaway root with dpkg, run there (--version,
# its man page, a short load test against its own embedded target) and
# removed again. Nothing outside target/ and a temp folder is touched.
#
#   scripts/deb.sh            build target/debian/yace_VERSION-1_ARCH.deb and check it
#
# Needs cargo-deb (`cargo install cargo-deb --locked`, from crates.io) and
# dpkg (Debian, Ubuntu). The release build takes a few minutes (fat LTO).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s\n' "$*"; }
fail() { echo "scripts/deb.sh: $*" >&2; exit 1; }

command -v cargo-deb >/dev/null 2>&1 ||
    fail "cargo-deb is not installed: cargo install cargo-deb --locked"
command -v dpkg-deb >/dev/null 2>&1 || fail "dpkg-deb is not installed (a Debian or Ubuntu system)"

target=${CARGO_TARGET_DIR:-target}
bin="$target/release/yace"
assets="$target/release/packaging"

log "release build"
cargo build --release --locked -p yace

log "man pages and completions, from the binary ($assets)"
rm -rf "$assets"
mkdir -p "$assets/man" "$assets/completions"
"$bin" man --out "$assets/man"
gzip -9n "$assets"/man/*.1
"$bin" completions bash >"$assets/completions/yace.bash"
"$bin" completions zsh >"$assets/completions/_yace"
"$bin" completions fish >"$assets/completions/yace.fish"

log "cargo deb"
# The binary is stripped; its line tables (for backtraces) go to a second
# package, yace-dbgsym_….ddeb, as Debian does it.
paths=$(cargo deb -p yace --no-build --locked --dbgsym)
deb=$(grep '\.deb$' <<<"$paths" | tail -n 1)
ddeb=$(grep '\.ddeb$' <<<"$paths" | tail -n 1 || true)
[ -f "$deb" ] || fail "cargo deb did not say where the package is (got: $paths)"
echo "$deb ($(du -h "$deb" | cut -f1))"
[ -z "$ddeb" ] || echo "$ddeb ($(du -h "$ddeb" | cut -f1), debug symbols)"
dpkg-deb --info "$deb" | sed -n 's/^ \(Package\|Version\|Architecture\|Depends\|Installed-Size\):/  &/p'

log "contents"
contents=$(dpkg-deb --contents "$deb")
for want in ./usr/bin/yace \
    ./usr/share/man/man1/yace.1.gz \
    ./usr/share/man/man1/yace-run.1.gz \
    ./usr/share/man/man1/yace-import-access-log.1.gz \
    ./usr/share/bash-completion/completions/yace \
    ./usr/share/zsh/vendor-completions/_yace \
    ./usr/share/fish/vendor_completions.d/yace.fish \
    ./usr/share/doc/yace/copyright \
    ./usr/share/doc/yace/CHANGELOG.md; do
    grep -q " $want\$" <<<"$contents" || fail "$want is not in the package"
done
echo "  every expected file is there ($(grep -c ' \./' <<<"$contents") entries)"

log "dpkg -i into a throwaway root"
root=$(mktemp -d "${TMPDIR:-/tmp}/yace-deb-root.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
# The root has no libc6 of its own: its dependencies are this system's.
dpkg_root=(dpkg --root="$root" --log=/dev/null --force-not-root --force-depends
    --force-script-chrootless)
"${dpkg_root[@]}" -i "$deb"
"${dpkg_root[@]}" -s yace | sed -n 's/^\(Status\|Version\):/  &/p'
installed="$root/usr/bin/yace"
"$installed" --version
man -l "$root/usr/share/man/man1/yace-import-access-log.1.gz" 2>/dev/null | grep -q -- '--replay' ||
    fail "the installed man page does not read"
bash -c "source '$root/usr/share/bash-completion/completions/yace'; complete -p yace" >/dev/null ||
    fail "bash cannot load the installed completions"
"$installed" run -n 2000 -c 4 -q --json "$root/check.json" >/dev/null
python3 - "$root/check.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["responses"] == 2000 and s["errors"] == 0, s
print(f"  the installed yace ran 2000 requests against its embedded target: {s['rps']:.0f} responses/s")
EOF

log "dpkg -r"
"${dpkg_root[@]}" -r yace
[ ! -e "$installed" ] || fail "dpkg -r left $installed"
echo "  removed"

log "package ready: $deb"
