#!/bin/sh
# Installs a released analyst: finds this machine's target triple,
# downloads its archive and SHA256SUMS, checks the archive against them
# (a mismatch installs nothing) and puts `analyst` in a folder on the PATH.
# No root needed.
#
#   curl -fsSL https://github.com/analyst-cli/analyst/releases/latest/download/install.sh | sh
#   sh install.sh [--to DIR] [--version V] [--base-url URL]
#
#   --to DIR        where analyst goes (default: ~/.local/bin)
#   --version V     the release (default: the highest SHA256SUMS lists);
#                   1.2.3 or v1.2.3, matched exactly
#   --base-url URL  the folder that holds the archives and SHA256SUMS
#                   (a mirror, or file:///… on a machine with no network)
set -eu

repository=https://github.com/analyst-cli/analyst
to="${HOME:?HOME is not set}/.local/bin"
version=""
base_url=""

say() { printf 'install.sh: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --to) [ $# -ge 2 ] || die "--to needs a folder"; to=$2; shift 2 ;;
    --version) [ $# -ge 2 ] || die "--version needs a version"; version=${2#v}; shift 2
      [ -n "$version" ] || die "--version needs a version, such as 1.2.3" ;;
    --base-url) [ $# -ge 2 ] || die "--base-url needs a URL"; base_url=${2%/}; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done

# This machine's target triple: the archives are named by it.
supported="x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-apple-darwin aarch64-apple-darwin"
os=$(uname -s)
machine=$(uname -m)
case "$os/$machine" in
  Linux/x86_64|Linux/amd64) target=x86_64-unknown-linux-gnu ;;
  Linux/aarch64|Linux/arm64) target=aarch64-unknown-linux-gnu ;;
  Darwin/x86_64) target=x86_64-apple-darwin ;;
  Darwin/arm64|Darwin/aarch64) target=aarch64-apple-darwin ;;
  *) die "no release for $os $machine; there are: $supported (and x86_64-pc-windows-msvc as a .zip, or 'pipx install analyst-cli')" ;;
esac

if [ -z "$base_url" ]; then
  if [ -n "$version" ]; then
    base_url=$repository/releases/download/v$version
  else
    base_url=$repository/releases/latest/download
  fi
fi

fetch() { # URL FILE
  if command -v curl >/dev/null 2>&1; then
    curl --proto '=https,file,http' -fsSL "$1" -o "$2"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    die "neither curl nor wget is installed"
  fi
}

sha256() { # FILE
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    die "neither sha256sum nor shasum is installed: cannot check the download"
  fi
}

work=$(mktemp -d)
new=""
trap 'rm -rf "$work"; [ -z "$new" ] || rm -f "$new"' EXIT INT TERM

fetch "$base_url/SHA256SUMS" "$work/SHA256SUMS" || die "cannot download $base_url/SHA256SUMS"
# The archive for this target: of exactly the version asked for, else of
# the highest version the checksums list (by version order: 1.10.0 after
# 1.9.2, a release after its pre-releases), whatever the order of the file.
line=$(awk -v target="$target" -v wanted="$version" '
  function newer(a, b,    i, n, m, pa, pb, x, y) {  # is version a above version b?
    pa = index(a, "-"); pb = index(b, "-")
    x = pa ? substr(a, 1, pa - 1) : a; y = pb ? substr(b, 1, pb - 1) : b
    n = split(x, xs, "."); m = split(y, ys, ".")
    for (i = 1; i <= (n > m ? n : m); i++) {
      if ((xs[i] + 0) != (ys[i] + 0)) return (xs[i] + 0) > (ys[i] + 0)
    }
    if (!pa || !pb) return !pa && pb
    return substr(a, pa + 1) > substr(b, pb + 1)
  }
  {
    file = $2; sub(/^\*/, "", file)
    prefix = "analyst-"; suffix = "-" target ".tar.gz"
    if (length(file) <= length(prefix) + length(suffix)) next
    if (substr(file, 1, length(prefix)) != prefix) next
    if (substr(file, length(file) - length(suffix) + 1) != suffix) next
    v = substr(file, length(prefix) + 1, length(file) - length(prefix) - length(suffix))
    if (v !~ /^[0-9][0-9A-Za-z.+-]*$/) next
    if (wanted != "" && v != wanted) next
    if (best == "" || newer(v, best)) { best = v; line = $1 "  " file }
  }
  END { if (line != "") print line }
' "$work/SHA256SUMS")
[ -n "$line" ] || die "$base_url/SHA256SUMS lists no archive for $target${version:+ of version $version}"
expected=${line%% *}
archive=${line##* }
fetch "$base_url/$archive" "$work/$archive" || die "cannot download $base_url/$archive"
actual=$(sha256 "$work/$archive")
[ "$actual" = "$expected" ] || die "$archive does not match SHA256SUMS (expected $expected, got $actual): nothing was installed"

# Only a regular file named analyst in the archive's folder is installed:
# not a link, a device, or anything elsewhere.
member=${archive%.tar.gz}/analyst
tar -tvzf "$work/$archive" | awk -v want="$member" '$NF == want && substr($1, 1, 1) == "-" { found = 1 } END { exit !found }' \
  || die "$archive holds no regular file $member: nothing was installed"
mkdir "$work/unpacked"
tar -xzf "$work/$archive" -C "$work/unpacked" "$member" || die "cannot unpack $member from $archive"
if [ ! -f "$work/unpacked/$member" ] || [ -L "$work/unpacked/$member" ]; then
  die "$archive holds no regular file $member: nothing was installed"
fi
mkdir -p "$to"
# Copied beside under a name of its own (runs into the same folder at once
# each have theirs), then renamed: a running analyst is never half-written.
new=$(mktemp "$to/.analyst.XXXXXX") || die "cannot write in $to"
cp "$work/unpacked/$member" "$new"
chmod 755 "$new"
mv -f "$new" "$to/analyst"
new=""
say "installed $("$to/analyst" --version 2>/dev/null || echo "${archive%.tar.gz}") as $to/analyst"
say "man pages and completions are in the archive: $base_url/$archive"

case ":${PATH:-}:" in
  *":$to:"*) ;;
  *) say "$to is not on your PATH; add it, e.g. in ~/.profile: export PATH=\"$to:\$PATH\"" ;;
esac
