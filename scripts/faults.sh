#!/usr/bin/env bash
# The fault experiment: does the platform lose or duplicate purchases when a part fails mid-run?
# For each fault: starts the platform (scripts/lib/platform.sh) in a throw-away RabbitMQ vhost
# and MySQL database, runs the load client closed-loop with retries (each purchase carries an
# Idempotency-Key, so a till's retry is the same purchase), injects the fault --at seconds into
# the run, waits for the pipeline to drain, then counts through public interfaces only: the 201s
# the client saw, purchases stored (purchases-service GET /purchases/count), purchases counted
# (store-service's gauge store_purchases_counted, which survives its restarts), lost
# (accepted but missing), duplicated (more than accepted) and throughput (201s per second of the
# run) relative to the no-fault run. Stops what it started and deletes the vhost and database.
#
# Usage: scripts/faults.sh [options]
#   --fault NAME       run one fault (repeatable); NAME is one of
#                        none                    no fault: the baseline
#                        kill-purchase-api       kill -9, started again --down-for s later
#                        kill-store-service      kill -9, started again --down-for s later
#                        kill-purchases-service  kill -9, started again --down-for s later
#                      Not built yet (they need a fault proxy between the platform and the real
#                      broker and database, which must not be restarted on a shared machine):
#                      broker link cut (a simulated broker restart), database outage, packet
#                      loss and added latency on the broker and database links, and broker node
#                      loss on the local cluster (scripts/rabbitmq-cluster.sh); see inject().
#   --all              every fault above, the baseline first, and one table like Figure 7 of
#                      the study, ending with "faults: N runs, L lost, D duplicated"
#   --stores N         stores of the load client (default 16)
#   --purchases-per-hour N  per store (default 200: 1,800 purchases per store)
#   --at S             seconds into the run when the fault strikes (default 4)
#   --down-for S       seconds a killed service stays down (default 3)
#   --retries N        the load client's retries per request (default 12)
#   --run-dir DIR      output folder (default runs/faults-<UTC time>)
#   -h, --help         this help
# Exit status: 0 when every run lost and duplicated nothing, 1 otherwise.
# Environment: as scripts/run-local.sh (API_PORT, STORE_PORT, ..., SERVICE_JAVA_OPTS);
# FAULTS_NAME (default "faults") names the vhosts (<name>-<fault>) and databases.
set -euo pipefail

SCRIPT_NAME=faults
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

ALL_FAULTS=(none kill-purchase-api kill-store-service kill-purchases-service)
faults=()
stores=16
per_hour=200
fault_at=4
down_for=3
retries=12
run_dir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --fault) faults+=("$2"); shift 2 ;;
    --all) faults=("${ALL_FAULTS[@]}"); shift ;;
    --stores) stores="$2"; shift 2 ;;
    --purchases-per-hour) per_hour="$2"; shift 2 ;;
    --at) fault_at="$2"; shift 2 ;;
    --down-for) down_for="$2"; shift 2 ;;
    --retries) retries="$2"; shift 2 ;;
    --run-dir) run_dir="$2"; shift 2 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ ${#faults[@]} -gt 0 ]] || { echo "name a --fault or use --all (see --help)" >&2; exit 2; }
for fault in "${faults[@]}"; do
  [[ " ${ALL_FAULTS[*]} " == *" $fault "* ]] || { echo "unknown fault: $fault (see --help)" >&2; exit 2; }
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUN_DIR="${run_dir:-$ROOT/runs/faults-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$RUN_DIR"
RUN_DIR="$(cd "$RUN_DIR" && pwd)"
export JAVA_HOME="${JAVA_HOME:-$("$ROOT/scripts/find-jdk.sh")}"
JAVA="$JAVA_HOME/bin/java"
# shellcheck source=lib/platform.sh
source "$ROOT/scripts/lib/platform.sh"
NAME="${FAULTS_NAME:-faults}"

VHOST=""
DATABASE=""
drop_sandbox() {
  [[ -z "$VHOST" ]] || rabbitmqctl -q delete_vhost "$VHOST" >/dev/null 2>&1 || true
  [[ -z "$DATABASE" ]] || mysql -uroot -h127.0.0.1 -e "DROP DATABASE IF EXISTS \`$DATABASE\`" >/dev/null 2>&1 || true
  VHOST="" DATABASE=""
}
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  stop_started
  drop_sandbox
  log "results in $RUN_DIR"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

pid_of() { # $1 = name given to start_process: its latest pid
  local i pid=""
  for ((i = 0; i < ${#STARTED_NAMES[@]}; i++)); do
    [[ "${STARTED_NAMES[$i]}" == "$1" ]] && pid="${STARTED_PIDS[$i]}"
  done
  echo "$pid"
}

# $1 = fault. Strikes while the load client runs; returns once the platform is whole again.
# The link faults (broker link cut, database outage, loss, latency) and broker node loss go here.
inject() {
  local service pid port
  case "$1" in
    none) return 0 ;;
    kill-*)
      service="${1#kill-}"
      pid="$(pid_of "$service")"
      log "fault: kill -9 $service (pid $pid)"
      kill -KILL "$pid"
      wait "$pid" 2>/dev/null || true
      sleep "$down_for"
      mv "$RUN_DIR/$service.log" "$RUN_DIR/$service-killed-$(date +%s).log"
      case "$service" in
        purchase-api) start_purchase_api; port="$API_MANAGEMENT_PORT" ;;
        store-service) start_store_service; port="$STORE_MANAGEMENT_PORT" ;;
        purchases-service) start_purchases_service mysql; port="$PURCHASES_MANAGEMENT_PORT" ;;
      esac
      wait_ready "$service" "$port" "${STARTED_PIDS[-1]}"
      log "fault: $service is back"
      ;;
  esac
}

ROWS=()
TOTAL_LOST=0
TOTAL_DUPLICATED=0
BASELINE=""

# $1 = fault: one run in a sandbox of its own; appends a row to ROWS.
run_fault() {
  local fault="$1" result="$RUN_DIR/$1.json" start end accepted final throughput relative lost duplicated
  VHOST="h-$NAME-$fault"
  DATABASE="purchases_h_${NAME//-/_}_${fault//-/_}"
  drop_sandbox
  VHOST="h-$NAME-$fault"
  DATABASE="purchases_h_${NAME//-/_}_${fault//-/_}"
  rabbitmqctl -q add_vhost "$VHOST" >/dev/null
  rabbitmqctl -q set_permissions -p "$VHOST" guest ".*" ".*" ".*" >/dev/null
  export RABBITMQ_VHOST="$VHOST"
  MYSQL_URL="jdbc:mysql://127.0.0.1:3306/$DATABASE?createDatabaseIfNotExist=true"
  STORE_STATE_DIR="$RUN_DIR/store-state-$fault"
  log "run: fault $fault, $stores stores x $per_hour purchases/hour, vhost $VHOST, database $DATABASE"
  start_platform mysql
  start="$(date +%s.%N)"
  "$JAVA" -jar "$(jar_of load-client)" run --base-url "http://127.0.0.1:$API_PORT" --max-stores "$stores" \
    --purchases-per-hour "$per_hour" --retries "$retries" --label "$fault" --out "$result" --progress lines \
    >"$RUN_DIR/$fault.txt" 2>&1 &
  local client_pid=$!
  if [[ "$fault" != none ]]; then
    sleep "$fault_at"
    kill -0 "$client_pid" 2>/dev/null || die "the run ended before the fault; raise --purchases-per-hour or lower --at"
    inject "$fault"
  fi
  wait "$client_pid" || true
  end="$(date +%s.%N)"
  [[ -f "$result" ]] || die "the load client wrote no result; see $RUN_DIR/$fault.txt"
  accepted="$(accepted_purchases "$result")"
  final="$(sed -n 's/^ *"failed" *: *\([0-9][0-9]*\).*/\1/p' "$result" | head -n 1)"
  wait_for_drain "$accepted" 0 0
  lost=$(( (accepted > STORED ? accepted - STORED : 0) + (accepted > COUNTED ? accepted - COUNTED : 0) ))
  duplicated=$(( (STORED > accepted ? STORED - accepted : 0) + (COUNTED > accepted ? COUNTED - accepted : 0) ))
  throughput="$(awk -v n="$accepted" -v s="$start" -v e="$end" 'BEGIN { printf "%.0f", n / (e - s) }')"
  [[ -n "$BASELINE" ]] || [[ "$fault" != none ]] || BASELINE="$throughput"
  relative="$([[ -n "$BASELINE" ]] && awk -v t="$throughput" -v b="$BASELINE" 'BEGIN { printf "%.0f%%", 100 * t / b }' || echo "n/a")"
  ROWS+=("$(printf '| %-22s | %7s | %7s | %7s | %6s | %4s | %10s | %6s | %8s |' \
    "$fault" "$accepted" "$STORED" "$COUNTED" "$final" "$lost" "$duplicated" "$throughput" "$relative")")
  TOTAL_LOST=$((TOTAL_LOST + lost))
  TOTAL_DUPLICATED=$((TOTAL_DUPLICATED + duplicated))
  log "result: fault $fault: $accepted accepted (201), $STORED stored, $COUNTED counted, $final final failures, $lost lost, $duplicated duplicated, $throughput/s ($relative of no fault); load average $(cut -d' ' -f1-3 /proc/loadavg)"
  stop_started
  drop_sandbox
}

build_if_needed "${SERVICE_MODULES[@]}" load-client
"$ROOT/scripts/local-services.sh"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >"$RUN_DIR/environment.txt"
for fault in "${faults[@]}"; do
  run_fault "$fault"
done
{
  echo "Faults at $stores stores x $((per_hour * 9)) purchases (closed loop, $retries retries), fault at ${fault_at}s, $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| fault                  | 201s    | stored  | counted | failed | lost | duplicated | 201s/s | relative |"
  echo "|------------------------|---------|---------|---------|--------|------|------------|--------|----------|"
  printf '%s\n' "${ROWS[@]}"
  echo
  echo "faults: ${#ROWS[@]} runs, $TOTAL_LOST lost, $TOTAL_DUPLICATED duplicated"
} | tee "$RUN_DIR/table.md"
[[ $TOTAL_LOST -eq 0 && $TOTAL_DUPLICATED -eq 0 ]]
