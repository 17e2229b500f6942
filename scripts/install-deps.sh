#!/usr/bin/env bash
# Installs the Debian packages Tessera needs (idempotent).
set -euo pipefail
PKGS="mariadb-server mariadb-client mariadb-backup postgresql-15 postgresql-client sysbench haproxy mold"
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
# The clients the tests drive: pgjdbc (Debian's) with a JDK to compile the
# JDBC check, psycopg 2 and 3 and SQLAlchemy 2 from PyPI.
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! dpkg -s libpostgresql-jdbc-java >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q libpostgresql-jdbc-java default-jdk-headless
fi
if ! python3 -m pip --version >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q python3-pip
fi
if ! python3 -c 'import sys, psycopg, psycopg2, sqlalchemy; sys.exit(0 if int(sqlalchemy.__version__.split(".")[0]) >= 2 else 1)' 2>/dev/null; then
  python3 -m pip install -q --break-system-packages 'psycopg[binary]' psycopg2-binary 'sqlalchemy>=2' \
    || python3 -m pip install -q 'psycopg[binary]' psycopg2-binary 'sqlalchemy>=2'
fi
