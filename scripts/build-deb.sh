#!/bin/sh
# Builds the Debian package (debian/, dpkg-buildpackage -us -uc) from a copy
# of the source tree in a temporary directory, so that neither the tree nor
# its parent directory is written, then checks it with lintian: any error or
# warning fails. The .deb, .dsc, source tarball, .buildinfo and .changes land
# in build/deb/, the build's log in build/deb/build.log.
# Usage: scripts/build-deb.sh [--no-lintian]   (debhelper, dpkg-dev, lintian:
# scripts/install-deps.sh installs them)
set -eu
cd "$(dirname "$0")/.."
lint=yes
[ "${1:-}" = --no-lintian ] && lint=no
out=build/deb

# The package's version is the programs' (--version): one number.
version=$(dpkg-parsechangelog -S Version)
code=$(sed -n 's/^#define STANDBY_VERSION "\(.*\)"$/\1/p' common/standby.h)
if [ "$version" != "$code" ]; then
        echo "build-deb: debian/changelog says $version, common/standby.h's STANDBY_VERSION $code" >&2
        exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/standby-$version
mkdir "$src"
# What git tracks, and new files it does not ignore: the tree as it is,
# without build outputs. Outside a git checkout, the tree minus those.
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
        git ls-files -z --cached --others --exclude-standard | xargs -0 -r sh -c '
                for f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\0" "$f"; done; true' sh |
                tar --null -T - -cf - | tar -xf - -C "$src"
else
        tar --exclude=./build --exclude=./build-san --exclude=./build-fuzz --exclude=./bench-results \
                -cf - . | tar -xf - -C "$src"
fi

rm -rf "$out"
mkdir -p "$out"
echo "build-deb: dpkg-buildpackage -us -uc in $src (log: $out/build.log)"
if ! (cd "$src" && dpkg-buildpackage -us -uc -j"$(nproc)") > "$out/build.log" 2>&1; then
        tail -n 40 "$out/build.log" >&2
        echo "build-deb: dpkg-buildpackage failed (all of it in $out/build.log)" >&2
        exit 1
fi
find "$tmp" -maxdepth 1 -type f -exec cp {} "$out/" \;
changes=$(ls "$out"/standby_"$version"_*.changes)
deb=$(ls "$out"/standby_"$version"_*.deb)
echo "build-deb: $deb"

[ "$lint" = yes ] || exit 0
# The .changes names the .dsc, the source tarball and the .deb: lintian
# checks each of them, and the .changes itself.
echo "build-deb: lintian $changes"
lintian --display-info --fail-on error,warning "$changes"
echo "build-deb: lintian: no errors, no warnings"
