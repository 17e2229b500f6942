#!/bin/bash
# Before/after in one invocation: the release binaries of b792121 (before)
# and of main (after), alternated A B A B on the same machine, each a fresh
# 3+3 cluster behind haproxy (relaxed), sysbench 4 x 50,000 rows, 64
# threads, 20 s after a 5 s warm-up.
set -u
run_leg() { # name binary
  local name=$1 B=$2 D=/tmp/ab16
  $B cluster down --data-dir $D >/dev/null 2>&1; rm -rf $D
  $B cluster up --haproxy --data-dir $D --base-port 28432 --durability relaxed > /tmp/ab-up.log 2>&1 || { echo "$name: up failed"; return; }
  local HP=$($B cluster status --json --data-dir $D | python3 -c "import json,sys; a=json.load(sys.stdin); h=[n for n in a if n['role']=='haproxy'][0]; print(h['port'], h['user'], h['password'])")
  read PORT USER PASS <<< "$HP"
  local SB="--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=$PORT --pgsql-user=$USER --pgsql-password=$PASS --pgsql-db=tessera --tables=4 --table-size=50000"
  sysbench oltp_point_select $SB --threads=4 prepare > /dev/null 2>&1
  for w in oltp_point_select oltp_read_only; do
    sysbench $w $SB --threads=64 --time=5 run > /dev/null 2>&1
    local tps=$(sysbench $w $SB --threads=64 --time=20 run 2>&1 | grep -E "transactions:" | sed -E 's/.*\(([0-9.]+) per sec.*/\1/')
    echo "$name $w $tps"
  done
  $B cluster down --data-dir $D >/dev/null 2>&1
}
for round in 1 2; do
  run_leg before /tmp/before/tessera
  run_leg after /work/main/target/release/tessera
done
