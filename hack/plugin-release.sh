#!/usr/bin/env bash
# Builds the release of the kubectl plugin: kubectl-mysqlbench cross-built with CGO_ENABLED=0 for
# linux/darwin amd64/arm64 and windows/amd64 into dist/plugin/ archives (tar.gz; zip for Windows
# when zip is installed, else tar.gz there too: krew reads both) that hold the binary and the
# LICENSE (krew's index refuses archives without one), their sha256sums.txt, and the
# krew manifest plugins/krew/mysqlbench.yaml rendered with the version, each archive's URL and
# its sha256 as dist/plugin/mysqlbench.yaml.
#
#   VERSION=v0.1.0 hack/plugin-release.sh      (make plugin-release VERSION=v0.1.0)
#
# VERSION is the release tag (krew wants semver with a leading v), required: a release built as
# v0.0.0-dev by omission would go out under the wrong name.
# RELEASE_URL is where the archives will be downloaded from (default: the GitHub release of
# VERSION). PLATFORMS narrows the build ("linux/amd64 windows/amd64"); the manifest then keeps
# only those platforms. The archives are reproducible: same sources and Go, same sha256.
# Every binary must stay under PLUGIN_MAX_BYTES (40 MB; hack/plugin-size.sh prints each one's
# size): the release stops at the first that outgrew it.
# Needs go, tar, gzip, sha256sum, sed, awk, wc (and zip, optional).
set -euo pipefail

cd "$(dirname "$0")/.."
VERSION=${VERSION:-}
[ -n "$VERSION" ] || { echo "VERSION is required: VERSION=v0.1.0 $0 (make plugin-release VERSION=v0.1.0)" >&2; exit 1; }
DIST=${DIST:-dist/plugin}
RELEASE_URL=${RELEASE_URL:-https://github.com/mysqlbench/mysqlbench-operator/releases/download/$VERSION}
PLATFORMS=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}
TEMPLATE=plugins/krew/mysqlbench.yaml
PKG=github.com/mysqlbench/mysqlbench-operator/internal/plugin

if ! [[ $VERSION =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "VERSION=$VERSION: krew wants a semantic version with a leading v, e.g. v0.1.0 or v0.2.0-rc.1" >&2
  exit 1
fi
for cmd in go tar gzip sha256sum sed awk wc; do
  command -v "$cmd" >/dev/null || { echo "plugin-release needs $cmd" >&2; exit 1; }
done

# The archives' files get the last commit's time, so a rebuild of the same commit is identical.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
rm -rf "$DIST"
mkdir -p "$DIST"
out=$(cd "$DIST" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

subs=(-e "s|@VERSION@|$VERSION|g" -e "s|@URL@|$RELEASE_URL|g")
built=()
for platform in $PLATFORMS; do
  os=${platform%/*} arch=${platform#*/}
  case $platform in
    linux/amd64 | linux/arm64 | darwin/amd64 | darwin/arm64 | windows/amd64) ;;
    *) echo "unknown platform $platform: the krew manifest has linux/darwin amd64/arm64 and windows/amd64" >&2; exit 1 ;;
  esac
  bin=kubectl-mysqlbench
  [ "$os" = windows ] && bin=kubectl-mysqlbench.exe
  dir=$stage/${os}_$arch
  mkdir -p "$dir"
  echo "building $platform"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false \
    -ldflags "-s -w -X $PKG.Version=$VERSION" -o "$dir/$bin" ./cmd/kubectl-mysqlbench
  # Its size, and no archive of a binary over the limit.
  hack/plugin-size.sh "$dir/$bin" | sed "s|^$stage/|  |"
  cp LICENSE "$dir/LICENSE"
  touch -d "@$SOURCE_DATE_EPOCH" "$dir/$bin" "$dir/LICENSE"
  name=kubectl-mysqlbench_${VERSION}_${os}_$arch
  if [ "$os" = windows ] && command -v zip >/dev/null; then
    archive=$name.zip
    (cd "$dir" && zip -q -X "$out/$archive" "$bin" LICENSE)
    # Without unzip the zip goes unchecked (zip -q fails on a missing file anyway).
    listed=$(unzip -Z1 "$out/$archive" 2>/dev/null || printf '%s\n' "$bin" LICENSE)
  else
    archive=$name.tar.gz
    tar -C "$dir" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -cf - "$bin" LICENSE |
      gzip -n -9 >"$out/$archive"
    listed=$(tar -tzf "$out/$archive")
  fi
  # An archive without the binary or the LICENSE would be refused by krew (or by its index).
  for want in "$bin" LICENSE; do
    grep -qx "$want" <<<"$listed" || { echo "$archive: $want missing (has: $listed)" >&2; exit 1; }
  done
  sum=$(sha256sum "$out/$archive" | awk '{print $1}')
  echo "$sum  $archive" >>"$out/sha256sums.txt"
  subs+=(-e "s|@ARCHIVE_${os}_$arch@|$archive|g" -e "s|@SHA256_${os}_$arch@|$sum|g")
  built+=("${os}_$arch")
done

# The manifest: the template with every placeholder filled, without the platforms not built.
sed "${subs[@]}" "$TEMPLATE" | awk -v built=" ${built[*]} " '
  /^  - selector:/ { flush(); held = $0 "\n"; holding = 1; next }
  holding && /^  [^ -]/ { flush() }
  holding { held = held $0 "\n"; if ($1 == "os:") os = $2; if ($1 == "arch:") arch = $2; next }
  { print }
  END { flush() }
  function flush() {
    if (holding && index(built, " " os "_" arch " ")) printf "%s", held
    holding = 0; held = ""; os = ""; arch = ""
  }' >"$out/mysqlbench.yaml"
if grep -n '@[A-Za-z0-9_]*@' "$out/mysqlbench.yaml" >&2; then
  echo "$TEMPLATE: placeholders left unfilled (above)" >&2
  exit 1
fi

echo "wrote $DIST:"
(cd "$out" && ls -l)
echo "install locally: kubectl krew install --manifest=$DIST/mysqlbench.yaml --archive=$DIST/<archive for your platform>"
