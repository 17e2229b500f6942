#!/usr/bin/env bash
# Installs the Debian packages Tessera needs (idempotent).
set -euo pipefail
PKGS="mariadb-server mariadb-client postgresql-15 postgresql-client sysbench haproxy mold"
missing=""
for p in $PKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q $missing
fi
