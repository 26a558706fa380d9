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
# (RabbitMQ's management API), purchases accepted (purchase-api's purchases_accepted_total, summed
# over its restarts) and each process's CPU per accepted purchase over the interval (/proc/PID/stat;
# beam.smp and mariadbd are the machine's shared servers, so others' work shows in theirs).
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
#   --idempotency-ttl TIME   purchase-api's IDEMPOTENCY_TTL (default 5m)
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
# Each store sends 9 hours of purchases (and their GETs) at rate/stores requests/s.
per_hour="$(awk -v m="$minutes" -v r="$rate" -v s="$stores" -v g="$get_ratio" 'BEGIN { printf "%.0f", m * 60 * r / (9 * s * (1 + g)) }')"
[[ "$per_hour" -ge 1 ]] || { echo "--minutes, --rate and --stores give less than one purchase per store and hour" >&2; exit 2; }

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
STORE_STATE_DIR="$RUN_DIR/store-state"
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
    for name in beam.smp mariadbd; do
      echo "$name $(pgrep -o -x "$name" 2>/dev/null || true)"
    done
  } >"$RUN_DIR/pids.tmp"
  mv "$RUN_DIR/pids.tmp" "$RUN_DIR/pids"
}
CPU_NAMES=(purchase-api store-service purchases-service load-client broker-proxy db-proxy redis-proxy redis beam.smp mariadbd)

# $1 = management port: the service's Prometheus scrape, empty when it does not answer.
scrape() { curl -sf -m 5 "http://127.0.0.1:$1/actuator/prometheus" 2>/dev/null || true; }
# $1 = scrape, $2 = metric name, $3 = a label filter (regex, may be empty): the sum of its values.
metric() {
  awk -v name="$2" -v filter="$3" 'index($0, name "{") == 1 || index($0, name " ") == 1 {
      if (filter == "" || $0 ~ filter) { sum += $NF; found = 1 } }
    END { if (found) printf "%.0f", sum }' <<<"$1"
}
# CPU ticks (user + system) of a pid, empty when it is gone; fields after the ")" of the name.
cpu_ticks() {
  [[ -n "$1" && -r "/proc/$1/stat" ]] || return 0
  awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || true
}
# The write-ahead log kept (every segment: store-service keeps the log from the older of its two
# newest snapshots on) and the newest snapshot (the counts' size; the older one is its twin).
wal_bytes() {
  find "$STORE_STATE_DIR" -maxdepth 1 -name 'log-*.wal' -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'
}
newest_snapshot_bytes() {
  find "$STORE_STATE_DIR" -maxdepth 1 -name 'snapshot-*.snap' -printf '%f %s\n' 2>/dev/null | sort | tail -n 1 | awk '{ printf "%.0f", $2 }'
}

# In the background until the load ends: one row of samples.csv every --sample-every s, and a
# line on stderr. Faults come from faults.log ("<t_s> <fault>" lines, appended by the main loop)
# and go into the fault column as <fault>@<t_s>.
sampler() {
  set +e
  local start="$1" columns="" name tick=0 now t api store purchases accepted=0 raw last_raw=0 api_pid last_api_pid=""
  local last_t=0 delta dt fault_cell faults_seen=0 struck_so_far pid ticks
  declare -A last_ticks last_pid
  columns="t_s,fault,accepted,accepted_per_s"
  for name in purchase-api store-service purchases-service; do columns+=",${name}_heap_used_bytes,${name}_heap_live_bytes"; done
  columns+=",store_wal_bytes,store_snapshot_bytes,redis_used_bytes,redis_keys,queue_messages"
  for name in "${CPU_NAMES[@]}"; do columns+=",cpu_ms_per_purchase_$name"; done
  echo "$columns" >"$SAMPLES"
  while true; do
    tick=$((tick + 1))
    sleep "$(awk -v s="$start" -v k="$tick" -v e="$sample_every" -v n="$(date +%s.%N)" 'BEGIN { w = s + k * e - n; printf "%.3f", (w > 0 ? w : 0) }')"
    now="$(date +%s.%N)"
    t="$(awk -v n="$now" -v s="$start" 'BEGIN { printf "%.1f", n - s }')"
    dt="$(awk -v a="$t" -v b="$last_t" 'BEGIN { print a - b }')"
    api="$(scrape "$API_MANAGEMENT_PORT")"
    store="$(scrape "$STORE_MANAGEMENT_PORT")"
    purchases="$(scrape "$PURCHASES_MANAGEMENT_PORT")"
    # purchase-api's counter starts again at 0 when it restarts.
    api_pid="$(awk '$1 == "purchase-api" { print $2 }' "$RUN_DIR/pids")"
    raw="$(metric "$api" purchases_accepted_total "")"
    delta=""
    if [[ -n "$raw" ]]; then
      if [[ "$api_pid" != "$last_api_pid" || "$raw" -lt "$last_raw" ]]; then delta="$raw"; else delta=$((raw - last_raw)); fi
      accepted=$((accepted + delta))
      last_raw="$raw" last_api_pid="$api_pid"
    fi
    struck_so_far="$(cat "$RUN_DIR/faults.log" 2>/dev/null)"
    fault_cell="$(awk -v skip="$faults_seen" 'NR > skip && NF == 2 { printf "%s%s@%s", (n++ ? "+" : ""), $2, $1 }' <<<"$struck_so_far")"
    faults_seen="$(grep -c . <<<"$struck_so_far")"
    local row="$t,$fault_cell,$accepted,$([[ -n "$delta" ]] && awk -v d="$delta" -v s="$dt" 'BEGIN { printf "%.0f", d / s }')"
    local scraped
    for scraped in "$api" "$store" "$purchases"; do
      # The live size reads 0 until the first collection of the old generation: not yet known.
      row+=",$(metric "$scraped" jvm_memory_used_bytes 'area="heap"'),$(metric "$scraped" jvm_gc_live_data_size_bytes "" | sed 's/^0$//')"
    done
    local redis_used redis_keys queued
    redis_used="$(redis-cli -p "$REDIS_PORT" info memory 2>/dev/null | awk -F: '$1 == "used_memory" { printf "%d", $2 }')"
    redis_keys="$(redis-cli -p "$REDIS_PORT" dbsize 2>/dev/null | tr -dc '0-9')"
    queued="$(curl -sf -m 5 -u guest:guest "http://127.0.0.1:15672/api/queues/$VHOST?columns=name,messages" 2>/dev/null \
      | grep -o '"messages":[0-9]*' | awk -F: '{ s += $2; n++ } END { if (n) printf "%d", s }')"
    row+=",$(wal_bytes),$(newest_snapshot_bytes),$redis_used,$redis_keys,$queued"
    for name in "${CPU_NAMES[@]}"; do
      pid="$(awk -v n="$name" '$1 == n { print $2 }' "$RUN_DIR/pids")"
      ticks="$(cpu_ticks "$pid")"
      local cell=""
      if [[ -n "$ticks" ]]; then
        # A new pid (a restart) is measured from its start.
        local before="${last_ticks[$name]:-0}"
        [[ "${last_pid[$name]:-}" == "$pid" ]] || before=0
        if [[ -n "$delta" && "$delta" -gt 0 && $tick -gt 1 ]]; then
          cell="$(awk -v c="$((ticks - before))" -v d="$delta" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.4f", c * 1000 / hz / d }')"
        fi
        last_ticks[$name]="$ticks" last_pid[$name]="$pid"
      fi
      row+=",$cell"
    done
    echo "$row" >>"$SAMPLES"
    log "$(awk -F, -v OFS=' ' '{ printf "t %5.0fs accepted %9s (%5s/s) heap MiB api %4.0f store %4.0f purchases %4.0f | wal %5.1f MiB snapshots %5.1f MiB | redis %5.1f MiB %8s keys | queued %6s%s",
      $1, $3, $4, $5 / 1048576, $7 / 1048576, $9 / 1048576, $11 / 1048576, $12 / 1048576, $13 / 1048576, $14, $15, ($2 == "" ? "" : " | fault " $2) }' <<<"$row")"
    last_t="$t"
  done
}

build_if_needed "${SERVICE_MODULES[@]}" load-client contract
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
export IDEMPOTENCY_TTL="$idempotency_ttl"
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
sampler "$START" &
STARTED_PIDS+=("$!")
STARTED_NAMES+=(sampler)
SAMPLER_PID=$!

# Faults at --fault-every, 2 --fault-every, ... minutes in, while the load runs.
fault_seconds="$(awk -v m="$fault_every" 'BEGIN { printf "%.0f", m * 60 }')"
next_fault="$fault_seconds"
struck=0
deadline=$((SECONDS + ${minutes%.*} * 120 + 600))
while kill -0 "$CLIENT_PID" 2>/dev/null; do
  elapsed="$(awk -v s="$START" -v n="$(date +%s.%N)" 'BEGIN { printf "%d", n - s }')"
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
log "the load ended after $(awk -v s="$START" -v n="$(date +%s.%N)" 'BEGIN { printf "%.0f", n - s }') s, $struck faults struck; checking"

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
