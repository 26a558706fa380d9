#!/usr/bin/env bash
# The soak: a run long enough to see time. Starts the platform as scripts/faults.sh does (a
# throw-away RabbitMQ vhost and MySQL database, every broker, database and idempotency-store link
# through a fault proxy; here the idempotency store is a Redis of the run's own, so that its
# memory is the platform's alone), and runs the load client paced (--rate) with 10 % GETs, tills
# retrying with Idempotency-Keys (--retries) and some accepted purchases sent again minutes later
# (--late-retries, --late-retry-after). Every --fault-every minutes it strikes the next fault of
# --faults (scripts/faults.sh's inject: a kill -9 and restart, a link cut, the database read-only,
# a broker memory alarm, the idempotency store frozen, ...). Every --sample-every s it writes one
# row to samples.csv in the run folder: each service's heap (used now, and live after the last
# old-generation collection: jvm_gc_live_data_size_bytes), store-service's write-ahead log (all
# it keeps) and newest snapshot, Redis memory and keys, the messages waiting in the run's queues
# (RabbitMQ's management API), purchases accepted (purchase-api's api_purchases_accepted_total, summed
# over its restarts) and each process's CPU per accepted purchase over the interval (/proc/PID/stat;
# beam.smp is the local broker's, mariadbd the machine's shared server, so others' work shows in it).
# At the end: the load client's verify (every accepted purchase stored once and counted once),
# then load-client soak-report draws soak.png and judges that nothing grew without bound (each
# size's low point over the last third of the run against the middle third's; a heap's occupancy
# is drawn, not judged: see load-client soak-report --help).
# The load is steady: every store opens at once (load-client run --all-stores-at-once, not the
# standard profile's three phases), each paced at --rate / --stores, with --purchases-per-hour
# derived from --minutes. The idempotency keys' TTL is short (--idempotency-ttl, 5m) so that
# Redis reaches its plateau within the run's first third; --late-retry-after must stay below it,
# or a late re-send finds its key gone.
#
# Usage: scripts/soak.sh [options]
#   --minutes M        length of the load (default 30)
#   --rate R           requests/s, POSTs and GETs (default 4000, about half of the closed-loop
#                      rate of a 2-core machine at 256 stores)
#   --stores N         stores of the load client (default 256)
#   --fault-every M    minutes between faults, the first M minutes in (default 5; 1.5 allowed)
#   --faults "A B ..." the faults, struck in turn (default "kill-store-service
#                      kill-purchases-service kill-purchase-api broker-restart db-read-only
#                      broker-alarm redis-freeze"); any fault of scripts/faults.sh --help but
#                      none, late-retry, node-loss and node-partition. db-read-only and
#                      broker-alarm change a setting of the machine's MariaDB or RabbitMQ for
#                      8 s (set back after)
#   --get-ratio F      GETs per POST (default 0.1)
#   --retries N        the load client's retries per request (default 12)
#   --late-retries N   stores re-sending their first accepted purchase late (default 8)
#   --late-retry-after TIME  how late (default 3m)
#   --idempotency-ttl TIME   purchase-api's API_IDEMPOTENCY_TTL (default 5m)
#   --sample-every S   seconds between samples (default 15)
#   --tolerance F      growth allowed, last third against the middle third (default 0.25)
#   --run-dir DIR      output folder (default runs/soak-<UTC time>): samples.csv, soak.png,
#                      verdict.md, the load client's result and output, every process's log
#   -h, --help         this help
# Exit status: 0 when nothing was lost or duplicated and nothing grew, 1 otherwise.
# Environment: as scripts/run-local.sh (API_PORT, ..., SERVICE_JAVA_OPTS) and scripts/faults.sh
# (FAULTS_PROXY_PORT); SOAK_REDIS_PORT (default 17676) for the run's Redis. Uses the fixed ports
# of both: it cannot run beside them.
set -euo pipefail

SCRIPT_NAME=soak
# shellcheck source=lib/fault-injection.sh
source "$(dirname "$0")/lib/fault-injection.sh"
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

SOAK_FAULTS=(kill-store-service kill-purchases-service kill-purchase-api broker-restart broker-loss
  broker-latency db-outage db-loss db-latency db-read-only broker-alarm redis-freeze)
minutes=30
rate=4000
stores=256
fault_every=5
faults="kill-store-service kill-purchases-service kill-purchase-api broker-restart db-read-only broker-alarm redis-freeze"
get_ratio=0.1
retries=12
late_retries=8
late_retry_after=3m
idempotency_ttl=5m
sample_every=15
tolerance=0.25
run_dir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --stores) stores="$2"; shift 2 ;;
    --fault-every) fault_every="$2"; shift 2 ;;
    --faults) faults="$2"; shift 2 ;;
    --get-ratio) get_ratio="$2"; shift 2 ;;
    --retries) retries="$2"; shift 2 ;;
    --late-retries) late_retries="$2"; shift 2 ;;
    --late-retry-after) late_retry_after="$2"; shift 2 ;;
    --idempotency-ttl) idempotency_ttl="$2"; shift 2 ;;
    --sample-every) sample_every="$2"; shift 2 ;;
    --tolerance) tolerance="$2"; shift 2 ;;
    --run-dir) run_dir="$2"; shift 2 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
done
read -r -a fault_list <<<"$faults"
for fault in "${fault_list[@]}"; do
  [[ " ${SOAK_FAULTS[*]} " == *" $fault "* ]] || { echo "not a soak fault: $fault (see --help)" >&2; exit 2; }
done
number='^[0-9]+([.][0-9]+)?$'
for value in "$minutes" "$rate" "$fault_every" "$get_ratio" "$sample_every" "$tolerance"; do
  [[ "$value" =~ $number ]] || { echo "not a number: $value (see --help)" >&2; exit 2; }
done
[[ "$stores" =~ ^[1-9][0-9]*$ ]] || { echo "--stores must be a positive whole number" >&2; exit 2; }
[[ "$late_retries" -le "$stores" ]] || late_retries="$stores"

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUN_DIR="${run_dir:-$ROOT/runs/soak-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$RUN_DIR"
RUN_DIR="$(cd "$RUN_DIR" && pwd)"
export JAVA_HOME="${JAVA_HOME:-$("$ROOT/scripts/find-jdk.sh")}"
JAVA="$JAVA_HOME/bin/java"
# shellcheck source=lib/platform.sh
source "$ROOT/scripts/lib/platform.sh"
NAME=soak
REDIS_PORT="${SOAK_REDIS_PORT:-17676}"
SAMPLES="$RUN_DIR/samples.csv"
STORE_DURABILITY_STATE_DIR="$RUN_DIR/store-state"
CLIENT_PID=""

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [[ -n "$CLIENT_PID" ]] && kill -0 "$CLIENT_PID" 2>/dev/null; then
    kill -TERM "$CLIENT_PID" 2>/dev/null || true
  fi
  stop_started
  restore_servers
  drop_sandbox
  log "results in $RUN_DIR"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The processes whose CPU is sampled, "name pid" per line, rewritten after every restart.
write_pids() {
  local name
  {
    for name in purchase-api store-service purchases-service load-client broker-proxy db-proxy redis-proxy redis; do
      echo "$name $(pid_of "$name")"
    done
    echo "beam.smp $(broker_pid || true)"
    echo "mariadbd $(pgrep -o -x mariadbd 2>/dev/null || true)"
  } >"$RUN_DIR/pids.tmp"
  mv "$RUN_DIR/pids.tmp" "$RUN_DIR/pids"
}
CPU_NAMES=(purchase-api store-service purchases-service load-client broker-proxy db-proxy redis-proxy redis beam.smp mariadbd)

build_if_needed "${SERVICE_MODULES[@]}" load-client tools
# Each store sends 9 hours of purchases (and their GETs) at rate/stores requests/s.
read -r per_hour fault_seconds < <(tools soak-plan --minutes "$minutes" --rate "$rate" --stores "$stores" \
  --get-ratio "$get_ratio" --fault-every "$fault_every") || true
[[ "${per_hour:-0}" -ge 1 ]] || { echo "--minutes, --rate and --stores give less than one purchase per store and hour" >&2; exit 2; }
"$ROOT/scripts/local-services.sh"
{
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "command: $0 --minutes $minutes --rate $rate --stores $stores --fault-every $fault_every --faults \"$faults\""
} >"$RUN_DIR/environment.txt"
open_sandbox "h-$NAME" "purchases_h_$NAME"
proxy_broker_link
proxy_database_link
[[ " ${fault_list[*]} " != *" db-read-only "* ]] || restrict_database_user
require_free_port "$REDIS_PORT" "the run's Redis"
start_process redis "$RUN_DIR/redis.log" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no
wait_until redis 30 port_in_use "$REDIS_PORT"
proxy_redis_link "$REDIS_PORT"
export API_IDEMPOTENCY_TTL="$idempotency_ttl"
log "soak: $minutes min at $rate requests/s ($stores stores x $per_hour purchases/hour, $get_ratio GETs per POST), a fault every $fault_every min of: $faults; idempotency keys kept $idempotency_ttl"
start_platform mysql

: >"$RUN_DIR/faults.log"
"$JAVA" -jar "$(jar_of load-client)" run --base-url "http://127.0.0.1:$API_PORT" --max-stores "$stores" \
  --purchases-per-hour "$per_hour" --rate "$rate" --get-ratio "$get_ratio" --retries "$retries" \
  --late-retries "$late_retries" --late-retry-after "$late_retry_after" --all-stores-at-once --label soak \
  --out "$RUN_DIR/soak.json" \
  --progress lines >"$RUN_DIR/load-client.txt" 2>&1 &
CLIENT_PID=$!
STARTED_PIDS+=("$CLIENT_PID")
STARTED_NAMES+=(load-client)
START="$(date +%s.%N)"
write_pids
# A row of samples.csv every --sample-every s, and a line on stderr (tools soak-sampler --help).
# Faults come from faults.log ("<t_s> <fault>" lines, appended by the main loop) and go into the
# fault column as <fault>@<t_s>.
cpu_options=()
for name in "${CPU_NAMES[@]}"; do cpu_options+=(--cpu "$name"); done
"$JAVA" -jar "$(jar_of tools)" soak-sampler --samples "$SAMPLES" --pids "$RUN_DIR/pids" --faults "$RUN_DIR/faults.log" --start "$START" \
  --every "$sample_every" --management-port "$API_MANAGEMENT_PORT" "$STORE_MANAGEMENT_PORT" "$PURCHASES_MANAGEMENT_PORT" \
  --redis-port "$REDIS_PORT" --vhost "$VHOST" --store-state "$STORE_DURABILITY_STATE_DIR" --clock-ticks "$(getconf CLK_TCK)" \
  "${cpu_options[@]}" &
STARTED_PIDS+=("$!")
STARTED_NAMES+=(sampler)
SAMPLER_PID=$!

# Faults at --fault-every, 2 --fault-every, ... minutes in, while the load runs.
next_fault="$fault_seconds"
struck=0
deadline=$((SECONDS + ${minutes%.*} * 120 + 600))
while kill -0 "$CLIENT_PID" 2>/dev/null; do
  elapsed=$(($(date +%s) - ${START%.*}))
  if [[ "$fault_seconds" -gt 0 && "$elapsed" -ge "$next_fault" ]]; then
    fault="${fault_list[$((struck % ${#fault_list[@]}))]}"
    echo "$elapsed $fault" >>"$RUN_DIR/faults.log"
    inject "$fault"
    write_pids
    struck=$((struck + 1))
    next_fault=$((next_fault + fault_seconds))
  fi
  [[ $SECONDS -lt $deadline ]] || die "the load client ran past twice --minutes and 10 minutes; see $RUN_DIR/load-client.txt"
  sleep 1
done
wait "$CLIENT_PID" || true
kill -TERM "$SAMPLER_PID" 2>/dev/null || true
[[ -f "$RUN_DIR/soak.json" ]] || die "the load client wrote no result; see $RUN_DIR/load-client.txt"
log "the load ended after $(($(date +%s) - ${START%.*})) s, $struck faults struck; checking"

status=0
verdict="$(verify "$RUN_DIR/soak.json")" || status=$?
[[ $status -le 1 ]] || die "the verify command could not check the run; see $RUN_DIR/load-client.txt"
growth_status=0
"$JAVA" -jar "$(jar_of load-client)" soak-report "$SAMPLES" --chart "$RUN_DIR/soak.png" --tolerance "$tolerance" \
  --title "Soak, $minutes min at $rate/s, $stores stores" >"$RUN_DIR/verdict.md" || growth_status=$?
[[ $growth_status -le 1 ]] || die "soak-report could not read $SAMPLES"
{
  echo "Soak of $minutes min at $rate requests/s ($stores stores), a fault every $fault_every min ($struck struck), $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  cat "$RUN_DIR/verdict.md"
  echo "exactly-once: $verdict"
} | tee "$RUN_DIR/summary.md"
[[ $status -eq 0 && $growth_status -eq 0 ]]
