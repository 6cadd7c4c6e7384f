#!/usr/bin/env bash
# The Debian package, built and checked: cargo-deb packs the release binary
# with its man pages and shell completions (written by the binary itself:
# `yace man --out`, `yace completions`, so they always match it), then the
# package is installed into a throwaway root with dpkg, run there (--version,
# its man page, a short load test against its own embedded target) and
# removed again. Nothing outside target/ and a temp folder is touched,
# unless --system is given.
#
#   scripts/deb.sh            build target/debian/yace_VERSION-1_ARCH.deb and check it
#   scripts/deb.sh --system   then also `dpkg -i` it on this system, as a user
#                             would (root; CI does this), check it there and
#                             purge it: `yace --version` names the commit, `man
#                             yace-run` reads, bash completes with it, a short
#                             run works; purged, /usr/bin/yace is gone. It
#                             refuses to start if a yace package (or an
#                             unpackaged /usr/bin/yace) is already there, and
#                             purges its own package even when a check fails.
#
# Needs cargo-deb (`cargo install cargo-deb --locked`, from crates.io) and
# dpkg (Debian, Ubuntu). The binary is the `dist` profile's (fat LTO, one
# codegen unit: what ships is what bench/ measures); it builds in about
# four times the CPU of `cargo build --release` (bench/results/).
set -euo pipefail
cd "$(dirname "$0")/.."

SYSTEM=0
case "${1:-}" in
    --system) SYSTEM=1 ;;
    "") ;;
    *) echo "usage: scripts/deb.sh [--system]" >&2; exit 2 ;;
esac

log() { printf '\n== %s\n' "$*"; }
fail() { echo "scripts/deb.sh: $*" >&2; exit 1; }

# --system: this system must have no yace of anyone else's, checked before
# minutes go into the build, and again just before dpkg -i.
no_yace_here() {
    local status f
    status=$(dpkg-query -W -f='${Status} ${Version}' yace 2>/dev/null || true)
    case "$status" in
        "" | "unknown ok not-installed"*) ;;
        *) fail "a yace package is already on this system ($status): --system will not replace" \
            "or remove someone's package. Remove it yourself (dpkg -r yace), or run without --system" ;;
    esac
    for f in /usr/bin/yace /usr/share/man/man1/yace.1.gz /usr/share/bash-completion/completions/yace; do
        [ ! -e "$f" ] || fail "$f is already there (not from a yace package): --system will not overwrite it;" \
            "move it away, or run without --system"
    done
}
if [[ $SYSTEM == 1 ]]; then
    [ "$(id -u)" = 0 ] || fail "--system installs with dpkg -i: run it as root"
    no_yace_here
fi

command -v cargo-deb >/dev/null 2>&1 ||
    fail "cargo-deb is not installed: cargo install cargo-deb --locked"
command -v dpkg-deb >/dev/null 2>&1 || fail "dpkg-deb is not installed (a Debian or Ubuntu system)"

target=${CARGO_TARGET_DIR:-target}
# The shipped build is `dist`; YACE_PROFILE=release packages the thin-LTO
# build instead (the test gate's smoke check: the same package, built in
# minutes, not the serial fat link).
profile=${YACE_PROFILE:-dist}
# cargo-deb maps the manifest's target/release/ assets to --profile's folder.
bin="$target/$profile/yace"
assets="$target/$profile/packaging"

log "$profile build (cargo build --profile $profile)"
cargo build --profile "$profile" --locked -p yace

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
paths=$(cargo deb -p yace --profile "$profile" --no-build --locked --dbgsym)
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
installed_here=0
cleanup() {
    # --system: a failed check still takes the package off this system.
    if [[ $installed_here == 1 ]]; then
        echo "scripts/deb.sh: purging the yace package this script installed" >&2
        dpkg --purge yace >/dev/null || echo "scripts/deb.sh: dpkg --purge yace failed" >&2
    fi
    rm -rf "$root"
}
trap cleanup EXIT
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
# The root has no libc6 of its own: its dependencies are this system's.
dpkg_root=(dpkg --root="$root" --log=/dev/null --force-not-root --force-depends
    --force-script-chrootless)
"${dpkg_root[@]}" -i "$deb"
"${dpkg_root[@]}" -s yace | sed -n 's/^\(Status\|Version\):/  &/p'
installed="$root/usr/bin/yace"
"$installed" --version
# (Read whole before grep: `grep -q` quitting early would SIGPIPE the
# reader, a failure under pipefail.)
page_text=$(man -l "$root/usr/share/man/man1/yace-import-access-log.1.gz" 2>/dev/null || true)
grep -q -- '--replay' <<<"$page_text" || fail "the installed man page does not read"
bash -c "source '$root/usr/share/bash-completion/completions/yace'; complete -p yace" >/dev/null ||
    fail "bash cannot load the installed completions"
scripts/check-run.sh "$installed" "$root/check.json" "the installed yace"

log "dpkg -r"
"${dpkg_root[@]}" -r yace
[ ! -e "$installed" ] || fail "dpkg -r left $installed"
echo "  removed"

if [[ $SYSTEM == 1 ]]; then
    log "dpkg -i on this system (--system)"
    no_yace_here
    installed_here=1
    dpkg -i "$deb"
    dpkg-query -W -f='  ${Package} ${Version}: ${Status}\n' yace
    [ -x /usr/bin/yace ] || fail "dpkg -i did not install /usr/bin/yace"
    version=$(/usr/bin/yace --version)
    echo "  $version"
    if commit=$(git rev-parse --short=12 HEAD 2>/dev/null); then
        grep -qF "($commit, built " <<<"$version" ||
            fail "the installed yace --version does not name the commit $commit: $version"
    fi
    page=/usr/share/man/man1/yace-run.1.gz
    [ -f "$page" ] || fail "$page is not installed (does a path-exclude in /etc/dpkg/dpkg.cfg.d/ drop man pages?)"
    if command -v man >/dev/null 2>&1; then
        # man finds the page by its name, as a user types it.
        page_text=$(LC_ALL=C MANPAGER=cat man yace-run 2>/dev/null || true)
        grep -q -- '--rate' <<<"$page_text" || fail "man yace-run does not read"
        echo "  man yace-run reads"
    else
        page_text=$(zcat "$page")
        grep -q '^\.TH' <<<"$page_text" || fail "$page is not a man page"
        echo "  $page is a man page (man is not installed here)"
    fi
    # bash-completion's loader reads completions/yace when `yace` is typed;
    # the same file, sourced, completes `yace imp` to `import`.
    words=$(bash -c 'source /usr/share/bash-completion/completions/yace &&
        COMP_WORDS=(yace imp) COMP_CWORD=1 COMP_LINE="yace imp" COMP_POINT=8 &&
        _yace yace imp yace && echo "${COMPREPLY[*]}"') ||
        fail "bash cannot load /usr/share/bash-completion/completions/yace"
    grep -qw import <<<"$words" || fail "bash completes \`yace imp\` to '$words', not import"
    echo "  bash completes \`yace imp\` to: $words"
    (here=$PWD && cd "$root" && "$here/scripts/check-run.sh" /usr/bin/yace "$root/system.json" /usr/bin/yace)

    log "dpkg --purge on this system"
    dpkg --purge yace
    installed_here=0
    [ ! -e /usr/bin/yace ] || fail "dpkg --purge yace left /usr/bin/yace"
    [ ! -e "$page" ] || fail "dpkg --purge yace left $page"
    status=$(dpkg-query -W -f='${Status}' yace 2>/dev/null || true)
    case "$status" in
        "" | "unknown ok not-installed") echo "  removed: /usr/bin/yace is gone, dpkg knows no yace" ;;
        *) fail "after dpkg --purge, dpkg still has yace: $status" ;;
    esac
fi

log "package ready: $deb"
