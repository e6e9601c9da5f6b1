#!/bin/sh
# Installs memsvc on macOS or Linux: picks this machine's binary, checks it
# against SHA256SUMS, and puts it at $PREFIX/bin/memsvc (default ~/.local/bin).
#
#   sh install.sh                     the latest release from GitHub, or a checkout's built dist/
#   sh install.sh --from <folder>     a folder holding memsvc-<os>-<cpu> and SHA256SUMS
#   sh install.sh --base-url <URL>    another download location (a mirror, one pinned release)
#   from a checkout:                  npm install && npm run build && sh install.sh
#
# Options: --prefix <dir> (or PREFIX=...). Environment twins: MEMSVC_DIST, MEMSVC_BASE_URL,
# MEMSVC_REPO (owner/name of the GitHub repository the latest release comes from).
# Windows: use install.ps1.
set -eu

# The GitHub repository releases are published from. "memsvc/memsvc" is an
# assumption until the project's public home is settled: change it here and in
# install.ps1 (one line each), or set MEMSVC_REPO=<owner>/<name>.
repo=${MEMSVC_REPO:-memsvc/memsvc}
latest_url=https://github.com/$repo/releases/latest/download

base_url=${MEMSVC_BASE_URL:-}
from=${MEMSVC_DIST:-}
prefix=${PREFIX:-$HOME/.local}

fail() {
  echo "memsvc install: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    # An option wins over the other source's environment twin.
    --from) [ $# -ge 2 ] || fail "--from needs a folder"; from=$2; base_url=; shift 2 ;;
    --base-url) [ $# -ge 2 ] || fail "--base-url needs a URL"; base_url=$2; from=; shift 2 ;;
    --prefix) [ $# -ge 2 ] || fail "--prefix needs a folder"; prefix=$2; shift 2 ;;
    -h|--help)
      # Piped into sh there is no file to read the header from.
      if [ -f "$0" ]; then awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; else echo "usage: sh install.sh [--from <folder> | --base-url <URL>] [--prefix <dir>]"; fi
      exit 0 ;;
    *) fail "unknown option $1 (see --help)" ;;
  esac
done

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  MINGW*|MSYS*|CYGWIN*) fail "on Windows run install.ps1 in PowerShell" ;;
  *) fail "no memsvc binary for $(uname -s)" ;;
esac
case "$(uname -m)" in
  x86_64|amd64) arch=x64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) fail "no memsvc binary for $(uname -m) CPUs" ;;
esac
# A shell under Rosetta reports x86_64 on Apple silicon; the native binary is the better pick.
if [ "$os" = darwin ] && [ "$arch" = x64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then arch=arm64; fi
name=memsvc-$os-$arch

ways() { # after a failure: the three ways, so the next attempt can take another
  cat >&2 <<EOF
Ways to install memsvc:
  sh install.sh                    the latest release (needs github.com): $latest_url
  sh install.sh --from <folder>    a folder holding $name and SHA256SUMS (a release's files)
  from a checkout:                 npm install && npm run build && sh install.sh
EOF
  exit 1
}

# Where the binaries come from: an explicit --from/--base-url; else this
# checkout's dist/ once `npm run build` has written SHA256SUMS there; else the
# latest release. Piped into sh, $0 is "sh", not a file: there is no checkout.
here=
if [ -f "$0" ]; then here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd); fi
if [ -z "$from" ] && [ -z "$base_url" ]; then
  if [ -n "$here" ] && [ -f "$here/dist/SHA256SUMS" ]; then
    from=$here/dist
  else
    base_url=$latest_url
    if [ -n "$here" ] && [ -f "$here/package.json" ]; then
      echo "memsvc install: $here/dist holds no build (npm install && npm run build makes one): taking the latest release"
    fi
  fi
fi

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t memsvc)
trap 'rm -rf "$tmp"' EXIT INT TERM

download() { # download <file>: from $base_url into $tmp; curl/wget say why on failure
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --connect-timeout 30 "$base_url/$1" -o "$tmp/$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -T 30 "$base_url/$1" -O "$tmp/$1"
  else
    echo "memsvc install: need curl or wget to download" >&2
    return 1
  fi
}

fetch() { # fetch <file>: copies or downloads one release file into $tmp
  if [ -n "$from" ]; then
    if [ ! -f "$from/$1" ]; then
      echo "memsvc install: $from/$1 does not exist" >&2
      [ "$1" != SHA256SUMS ] || echo "memsvc install: in a checkout, \`npm run build\` writes dist/$name and dist/SHA256SUMS" >&2
      ways
    fi
    cp "$from/$1" "$tmp/$1"
  elif ! download "$1"; then
    echo "memsvc install: could not download $base_url/$1" >&2
    ways
  fi
}

echo "memsvc install: $name from ${from:-$base_url}"
fetch SHA256SUMS
fetch "$name"

expected=$(awk -v n="$name" '$2 == n || $2 == "*" n { print $1 }' "$tmp/SHA256SUMS")
[ -n "$expected" ] || fail "SHA256SUMS lists no $name"
if command -v sha256sum >/dev/null 2>&1; then
  actual=$(sha256sum "$tmp/$name" | cut -d ' ' -f 1)
elif command -v shasum >/dev/null 2>&1; then
  actual=$(shasum -a 256 "$tmp/$name" | cut -d ' ' -f 1)
else
  fail "need sha256sum or shasum to check the download"
fi
[ "$actual" = "$expected" ] || fail "checksum mismatch for $name (expected $expected, got $actual): not installed"

chmod 0755 "$tmp/$name"
version=$("$tmp/$name" --version 2>/dev/null) || fail "$name does not run on this machine: not installed"

mkdir -p "$prefix/bin"
# Copy next to the target, then rename: a running memsvc is never overwritten in place.
cp "$tmp/$name" "$prefix/bin/.memsvc.$$"
chmod 0755 "$prefix/bin/.memsvc.$$"
mv -f "$prefix/bin/.memsvc.$$" "$prefix/bin/memsvc"
echo "memsvc install: installed memsvc $version at $prefix/bin/memsvc (sha256 $actual)"

case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "memsvc install: $prefix/bin is not on your PATH; add it, e.g. echo 'export PATH=\"$prefix/bin:\$PATH\"' >> ~/.profile" ;;
esac
cat <<EOF

Next:
  memsvc setup    creates the service home, finds a language model, wires your agent
                  harnesses, installs autostart and starts the server
EOF
