#!/bin/sh
# Installs memsvc on macOS or Linux: picks this machine's binary, checks it
# against SHA256SUMS, and puts it at $PREFIX/bin/memsvc (default ~/.local/bin).
#
#   sh install.sh --base-url <release URL>   download memsvc-<os>-<cpu> and SHA256SUMS from there
#   sh install.sh --from <folder>            take them from a folder (e.g. dist/ after `npm run build:all`)
#   sh install.sh                            a checkout's dist/ next to this script, if it holds a build
#
# Options: --prefix <dir> (or PREFIX=...). Environment twins: MEMSVC_BASE_URL, MEMSVC_DIST.
# Windows: use install.ps1.
set -eu

base_url=${MEMSVC_BASE_URL:-}
from=${MEMSVC_DIST:-}
prefix=${PREFIX:-$HOME/.local}

fail() {
  echo "memsvc install: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --from) [ $# -ge 2 ] || fail "--from needs a folder"; from=$2; shift 2 ;;
    --base-url) [ $# -ge 2 ] || fail "--base-url needs a URL"; base_url=$2; shift 2 ;;
    --prefix) [ $# -ge 2 ] || fail "--prefix needs a folder"; prefix=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) fail "unknown option $1 (see --help)" ;;
  esac
done

if [ -z "$from" ] && [ -z "$base_url" ]; then
  here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
  if [ -f "$here/dist/SHA256SUMS" ]; then from=$here/dist; else fail "say where the binaries are: --base-url <URL> or --from <folder>"; fi
fi

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

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t memsvc)
trap 'rm -rf "$tmp"' EXIT INT TERM

fetch() { # fetch <file>: copies or downloads one release file into $tmp
  if [ -n "$from" ]; then
    [ -f "$from/$1" ] || fail "$from/$1 does not exist"
    cp "$from/$1" "$tmp/$1"
  elif command -v curl >/dev/null 2>&1; then
    curl -fsSL "$base_url/$1" -o "$tmp/$1" || fail "could not download $base_url/$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q "$base_url/$1" -O "$tmp/$1" || fail "could not download $base_url/$1"
  else
    fail "need curl or wget to download $base_url/$1"
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
  memsvc init            create ~/.memsvc with its config and token
  memsvc server          start the service (http://127.0.0.1:8787)
  memsvc hooks install   connect Claude Code to it
EOF
