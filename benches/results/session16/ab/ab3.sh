#!/bin/bash
# Point select A/B with the CPU ledger per process class.
set -u
cpu() {
  for pid in $(pgrep -f "tessera|mariadbd|haproxy"); do
    c=$(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null | cut -c1-200)
    t=$(awk '{print $14+$15}' /proc/$pid/stat 2>/dev/null)
    case "$c" in
      *haproxy*) k=haproxy;; *ab16/meta*) k=meta;; *mariadbd*) k=shard;; *compute*) k=compute;; *) k=other;;
    esac
    echo "$k $t"
  done | awk '{s[$1]+=$2} END {for (k in s) print k, s[k]}'
}
run_leg() {
  local name=$1 B=$2 D=/tmp/ab16
  $B cluster down --data-dir $D >/dev/null 2>&1; rm -rf $D
  $B cluster up --haproxy --data-dir $D --base-port 28432 --durability relaxed > /tmp/ab-up.log 2>&1 || { echo "$name: up failed"; return; }
  local HP=$($B cluster status --json --data-dir $D | python3 -c "import json,sys; a=json.load(sys.stdin); h=[n for n in a if n['role']=='haproxy'][0]; print(h['port'], h['user'], h['password'])")
  read PORT USER PASS <<< "$HP"
  local SB="--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=$PORT --pgsql-user=$USER --pgsql-password=$PASS --pgsql-db=tessera --tables=4 --table-size=50000"
  sysbench oltp_point_select $SB --threads=4 prepare > /dev/null 2>&1
  sysbench oltp_point_select $SB --threads=64 --time=5 run > /dev/null 2>&1
  local b=$(cpu)
  local out=$(sysbench oltp_point_select $SB --threads=64 --time=20 run 2>&1)
  local a=$(cpu)
  local n=$(echo "$out" | grep -E "transactions:" | awk '{print $2}')
  local tps=$(echo "$out" | grep -E "transactions:" | sed -E 's/.*\(([0-9.]+) per sec.*/\1/')
  echo "$name $tps TPS; us CPU per transaction: $(join <(echo "$b" | sort) <(echo "$a" | sort) | awk -v n=$n '{printf "%s %.1f  ", $1, ($3-$2)*10000/n}')"
  $B cluster down --data-dir $D >/dev/null 2>&1
}
for leg in before after after before; do
  if [ $leg = before ]; then run_leg before /tmp/before/tessera; else run_leg after /work/main/target/release/tessera; fi
done
