#!/usr/bin/env bash
# Fetches PostgreSQL 15's regression suite (src/test/regress) from Debian's
# source package into a cache outside the repository, for `pgregress`.
# Nothing of PostgreSQL's is copied into the repository. Prints the
# regress folder. Idempotent: skips the download when the cache has it.
#
#   scripts/fetch-pg-regress.sh    # cache: ${TESSERA_CACHE:-$HOME/.cache/tessera}/postgresql-15
#                                  # (where pgregress looks without --regress-dir)
set -euo pipefail
cache="${TESSERA_CACHE:-$HOME/.cache/tessera}/postgresql-15"
find_regress() {
  find "$cache" -maxdepth 5 -type d -path '*/src/test/regress' 2>/dev/null | sort | tail -n 1 || true
}
dir="$(find_regress)"
if [ -n "$dir" ] && [ -f "$dir/sql/test_setup.sql" ]; then
  echo "$dir"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
if ! command -v dpkg-source >/dev/null 2>&1; then
  $SUDO apt-get update -q >&2
  $SUDO apt-get install -y -q dpkg-dev >&2
fi
# A deb-src entry for bookworm main, added only when no deb-src entry
# exists yet. The answers compared are the installed server's, not the
# files' expected output, so a minor version apart does not matter.
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  $SUDO tee /etc/apt/sources.list.d/tessera-deb-src.sources >/dev/null <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
fi
$SUDO apt-get update -q >&2
mkdir -p "$cache"
# apt-get source runs as the caller; as root it warns that it cannot drop
# privileges to _apt for the download, which is harmless here.
(cd "$cache" && apt-get source -q postgresql-15 >&2)
dir="$(find_regress)"
if [ -z "$dir" ] || [ ! -f "$dir/sql/test_setup.sql" ]; then
  echo "no src/test/regress under $cache after apt-get source" >&2
  exit 1
fi
echo "$dir"
