#!/bin/bash
# Profile run: a release cluster behind haproxy, sysbench at 64 threads,
# CPU per process class from /proc, perf flat profile of the compute nodes,
# and the statement cache's counters.
set -u
B=${B:-/work/main/target/release/tessera}
D=/tmp/prof16
$B cluster down --data-dir $D >/dev/null 2>&1; rm -rf $D
$B cluster up --haproxy --data-dir $D --base-port 27432 --durability relaxed > /tmp/prof-up.log 2>&1 || { echo "up failed"; cat /tmp/prof-up.log; exit 1; }
ST=$($B cluster status --json --data-dir $D)
HP=$(echo "$ST" | python3 -c "import json,sys; a=json.load(sys.stdin); h=[n for n in a if n['role']=='haproxy'][0]; print(h['port'], h['user'], h['password'])")
read PORT USER PASS <<< "$HP"
COMPUTE_PIDS=$(echo "$ST" | python3 -c "import json,sys; a=json.load(sys.stdin); print(','.join(str(n['pid']) for n in a if n['role']=='compute'))")
COMPUTE_PORTS=$(echo "$ST" | python3 -c "import json,sys; a=json.load(sys.stdin); print(' '.join(str(n['port']) for n in a if n['role']=='compute'))")
SB="--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-port=$PORT --pgsql-user=$USER --pgsql-password=$PASS --pgsql-db=tessera --tables=4 --table-size=50000"
sysbench oltp_point_select $SB --threads=4 prepare > /tmp/prof-prepare.log 2>&1
cpu() { # utime+stime ticks per class
  for pid in $(pgrep -f "tessera|mariadbd|haproxy|sysbench"); do
    c=$(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null | cut -c1-200)
    t=$(awk '{print $14+$15}' /proc/$pid/stat 2>/dev/null)
    case "$c" in
      *sysbench*) k=client;; *haproxy*) k=haproxy;; *meta*mariadbd*|*mariadbd*meta*) k=meta;; *mariadbd*) k=shard;; *compute*) k=compute;; *) k=other;;
    esac
    echo "$k $t"
  done | awk '{s[$1]+=$2} END {for (k in s) print k, s[k]}'
}
for mode in auto disable; do
  for w in oltp_point_select oltp_read_only; do
    sysbench $w $SB --threads=64 --time=5 --db-ps-mode=$mode run > /dev/null 2>&1  # warm-up
    before=$(cpu)
    if [ "$mode $w" = "auto oltp_point_select" ]; then
      (sleep 3; perf record -F 499 -p $COMPUTE_PIDS -o /tmp/perf-point.data -- sleep 10 > /dev/null 2>&1) &
    fi
    sysbench $w $SB --threads=64 --time=20 --db-ps-mode=$mode run > /tmp/prof-$w-$mode.log 2>&1
    wait
    after=$(cpu)
    tps=$(grep -E "transactions:" /tmp/prof-$w-$mode.log | sed -E 's/.*\(([0-9.]+) per sec.*/\1/')
    n=$(grep -E "transactions:" /tmp/prof-$w-$mode.log | awk '{print $2}')
    echo "== $w ps=$mode: $tps TPS ($n transactions in 20 s; perf attached for 10 s on the point-select auto run)"
    join <(echo "$before" | sort) <(echo "$after" | sort) | awk -v n=$n '{printf "  %-8s %8.1f us CPU per transaction\n", $1, ($3-$2)*10000/n}'
  done
done
for p in $COMPUTE_PORTS; do
  PGPASSWORD=$PASS psql -h 127.0.0.1 -p $p -U $USER -d tessera -Atc "SHOW tessera.statement_cache" | sed "s/^/  compute :$p statement cache: /"
done
$B cluster down --data-dir $D > /dev/null 2>&1
perf report -i /tmp/perf-point.data --no-children --sort dso,symbol --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -45 > /tmp/perf-point.txt
echo "perf top symbols in /tmp/perf-point.txt"
