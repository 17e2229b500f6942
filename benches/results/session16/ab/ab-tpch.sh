#!/bin/bash
# TPC-H SF 0.1 before/after in one invocation: A B A B, Tessera only.
cd /work/main
for round in 1 2; do
  for leg in before after; do
    if [ $leg = before ]; then B=/tmp/before/tessera; T=/tmp/before/tpch; else B=target/release/tessera; T=target/release/tpch; fi
    $T --sf 0.1 --timeout 60 --tessera $B --durability relaxed --work /tmp/tessera-abtpch --out /tmp/abtpch-$leg-$round > /tmp/abtpch-$leg-$round.log 2>&1
    python3 -c "
import json
d=json.load(open('/tmp/abtpch-$leg-$round/tpch-sf0.1.json'))
print('$leg', $round, 'total', round(sum(x['tessera_s'] for x in d),3), 'correct', sum(1 for x in d if x['tessera_ok']))
"
  done
done
