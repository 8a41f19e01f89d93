#!/usr/bin/env bash
# bench/ha.sh [SCENARIO...]   (default: kill switchover gateway-and-primary)
# A longer HA drill on a fresh local HA stack (scripts/ha.sh up in build/ha-bench): six agents,
# 150 bookings each, the fault 15 s in; then bench/ha_results.md gets, per drill, the write
# outage (from the fault to the first acknowledged booking) and acknowledged bookings per second
# before, during and after it, with this command line. The stack is stopped at the end, also on
# failure. Exits non-zero if a drill failed (the results say which).
set -euo pipefail
repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] || scenarios=(kill switchover gateway-and-primary)
export HA_DIR=${HA_DIR:-$repo/build/ha-bench}
scripts/ha.sh down >/dev/null 2>&1 || true
rm -rf "$HA_DIR"
trap 'scripts/ha.sh down >/dev/null 2>&1 || true' EXIT
scripts/ha.sh up
rc=0
HA_DRILL_AGENTS=${HA_DRILL_AGENTS:-6} HA_DRILL_BOOKINGS=${HA_DRILL_BOOKINGS:-150} HA_DRILL_FAULT_AT=${HA_DRILL_FAULT_AT:-15} \
  HA_DRILL_DEADLINE=${HA_DRILL_DEADLINE:-400} scripts/ha.sh drill "${scenarios[@]}" || rc=$?
reports=()
for s in "${scenarios[@]}"; do
  [ -f "$HA_DIR/drill/$s/report.json" ] && reports+=("$HA_DIR/drill/$s/report.json")
done
[ ${#reports[@]} -gt 0 ] && python3 scripts/ha_drill.py bench --results bench/ha_results.md \
  --command "bench/ha.sh${*:+ $*}" "${reports[@]}"
exit "$rc"
