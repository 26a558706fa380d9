#!/usr/bin/env bash
# The fault experiment: does the platform lose or duplicate purchases when a part fails mid-run?
# For each fault: starts the platform (scripts/lib/platform.sh) in a throw-away RabbitMQ vhost
# and MySQL database, with every service's broker and database connections running through a
# fault proxy of its own (the tools jar's fault-proxy: one for the broker link, one for the
# database link, steered over a control port), runs the load client closed-loop with retries
# (each purchase carries an Idempotency-Key, so a till's retry is the same purchase), injects the
# fault --at seconds after the run's first purchase is stored, then checks the run with the load
# client's verify command (the one exactly-once rule, see load-client verify --help): it waits for
# the pipeline to drain and counts through public interfaces only: purchases accepted (a 201) and
# maybe accepted (no 201, but a 503, a timeout or a lost connection, which promise nothing), per
# Idempotency-Key; purchases stored (purchases-service GET /purchases/count) and counted
# (store-service's gauge store_purchases_counted, which survives its restarts); lost and
# duplicated; and throughput (201s per second of the run) relative to the no-fault run. Stops
# what it started and deletes the vhost and database. The machine's RabbitMQ
# and MariaDB are never stopped: a broker restart or database outage is every link through the
# proxy cut at once. Three faults change a setting of the machine's own server for their
# --outage-for s and set it back (also when the script is stopped): db-read-only, broker-alarm;
# redis-freeze goes through a proxy on the idempotency store's link.
#
# Usage: scripts/faults.sh [options]
#   --fault NAME       run one fault (repeatable); NAME is one of
#                        none                    no fault: the baseline
#                        kill-purchase-api       kill -9, started again --down-for s later
#                        kill-store-service      kill -9, started again --down-for s later
#                        kill-purchases-service  kill -9, started again --down-for s later
#                        kill-store-copy         with 2 store copies (STORE_COPIES=2): copy 1
#                                                killed (kill -9), started again --outage-for s
#                                                later; it recovers from its log and its backlog
#                        lose-store-disk         as kill-store-copy, and copy 1's state directory
#                                                deleted while it is down: it comes back rebuilt
#                                                from copy 0 (STORE_REBUILD_PEERS) plus its backlog
#                                                Both probe the two GETs every 0.2 s during the
#                                                run (every one must answer 2xx) and check that
#                                                the copies' counts agree (verify --store-copies)
#                        broker-restart          every broker connection reset, new ones
#                                                refused for --outage-for s (a broker restart)
#                        broker-loss             --loss of the chunks on the broker link held
#                                                for a TCP retransmission timeout (200 ms), for
#                                                --degrade-for s (what packet loss does to TCP:
#                                                stalls, never lost or reordered bytes)
#                        broker-latency          --latency ms added to each chunk each way on
#                                                the broker link, for --degrade-for s
#                        db-outage               the same cut as broker-restart on the database link
#                        db-loss, db-latency     as broker-loss and broker-latency, database link
#                        db-read-only            the database refuses every write for
#                                                --outage-for s (SET GLOBAL read_only; the
#                                                service writes as a user with SELECT and
#                                                INSERT only, to whom it applies)
#                        broker-alarm            a memory alarm on the broker for --outage-for
#                                                s (every publisher blocked, consumers not)
#                        redis-freeze            the idempotency store's link frozen (no bytes,
#                                                connections kept) for --outage-for s
#                        late-retry              no failure: stores 1..--late-retries each send
#                                                their first accepted purchase again (same key
#                                                and body, as after a lost 201) after
#                                                --late-retry-after further purchases of the
#                                                store or that long (5m); a correct platform
#                                                stores and counts it once
#                        node-loss               on a local 3-node cluster (scripts/rabbitmq-
#                                                cluster.sh, replicated topology mode; containers
#                                                of the project's RabbitMQ, or processes with
#                                                CLUSTER_RUNTIME=processes): the node leading most
#                                                quorum queues killed (docker kill, kill -9),
#                                                started again --outage-for s later
#                        node-partition          on the 3-node cluster as containers (always): the
#                                                node leading most quorum queues cut off the other
#                                                two (docker network disconnect) while its clients
#                                                stay connected to it; it stops serving once it
#                                                sees no majority (within net_ticktime, 10 s: its
#                                                publishes are nacked), stays apart --outage-for s
#                                                more, then is healed
#   --all              every fault above, the baseline first, and one table like Figure 7 of
#                      the study, ending with "faults: N runs, L lost, D duplicated"
#   --stores N         stores of the load client (default 16)
#   --purchases-per-hour N  per store (default 200: 1,800 purchases per store)
#   --at S             seconds after the run's first stored purchase when the fault strikes
#                      (default 4)
#   --down-for S       seconds a killed service stays down (default 3)
#   --outage-for S     seconds a link stays cut or a cluster node down (default 8)
#   --degrade-for S    seconds loss or latency lasts (default 10)
#   --loss F           fraction of chunks held for broker-loss and db-loss (default 0.05)
#   --latency MS       added latency of broker-latency and db-latency (default 50)
#   --retries N        the load client's retries per request (default 12)
#   --late-retries N   stores re-sending an accepted purchase in late-retry (default 2)
#   --late-retry-after COUNT|TIME  further purchases of the store (default 4200, more than
#                      store-service's dedup window of 4,096 per store; those stores send extra
#                      purchases to reach it) or a time (90s, 5m) before the re-send
#   --timeout S        a run whose load client has not finished after S s fails (default 600)
#   --run-dir DIR      output folder (default runs/faults-<UTC time>)
#   -h, --help         this help
# Exit status: 0 when every run lost and duplicated nothing, 1 otherwise (also when a run broke:
# it is a row of the table saying so, and the next fault runs).
# Environment: as scripts/run-local.sh (API_PORT, STORE_PORT, ..., SERVICE_JAVA_OPTS);
# FAULTS_NAME (default "faults") names the vhosts (<name>-<fault>) and databases;
# FAULTS_PROXY_PORT (default 17670): the proxies listen on it and the next five ports (broker
# link, its control port, database link, its control port, idempotency store link, its control
# port). node-loss and node-partition start the cluster for their run and stop it (deleting its
# data) after it, keeping the nodes' logs (cluster-<fault>/) and what the clients saw
# (<fault>-clients.txt: the partition's timeline, the connections on each node, the API's 503s by
# reason, the consumers' redeliveries, the services' broker-connection log lines). node-loss
# needs what CLUSTER_RUNTIME needs (scripts/rabbitmq-cluster.sh --help), node-partition a Docker
# engine; CLUSTER_NAME, CLUSTER_PORT_OFFSET and RABBITMQ_IMAGE are passed on to the cluster script.
# The other faults run on the local broker (scripts/lib/local-broker.sh: LOCAL_BROKER and its
# settings).
# FAULTS_REDIS_DB (default 0): the idempotency store's Redis database.
set -euo pipefail

SCRIPT_NAME=faults
# shellcheck source=lib/fault-injection.sh
source "$(dirname "$0")/lib/fault-injection.sh"
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

ALL_FAULTS=(none kill-purchase-api kill-store-service kill-purchases-service kill-store-copy lose-store-disk
  broker-restart broker-loss broker-latency db-outage db-loss db-latency db-read-only broker-alarm redis-freeze
  late-retry node-loss node-partition)
faults=()
stores=16
per_hour=200
fault_at=4
retries=12
late_retries=2
late_retry_after=4200
timeout=600
run_dir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --fault) faults+=("$2"); shift 2 ;;
    --all) faults=("${ALL_FAULTS[@]}"); shift ;;
    --stores) stores="$2"; shift 2 ;;
    --purchases-per-hour) per_hour="$2"; shift 2 ;;
    --at) fault_at="$2"; shift 2 ;;
    --down-for) down_for="$2"; shift 2 ;;
    --outage-for) outage_for="$2"; shift 2 ;;
    --degrade-for) degrade_for="$2"; shift 2 ;;
    --loss) loss="$2"; shift 2 ;;
    --latency) latency_ms="$2"; shift 2 ;;
    --retries) retries="$2"; shift 2 ;;
    --late-retries) late_retries="$2"; shift 2 ;;
    --late-retry-after) late_retry_after="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
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
RUN_PID=""
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [[ -n "$RUN_PID" ]] && kill -0 "$RUN_PID" 2>/dev/null; then
    kill -TERM "$RUN_PID" 2>/dev/null || true
    wait "$RUN_PID" 2>/dev/null || true
  fi
  stop_started
  restore_servers
  drop_sandbox
  stop_cluster
  log "results in $RUN_DIR"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Whether purchases-service has stored any purchase (the fault's clock starts then).
any_purchase_stored() {
  [[ "$(curl -sf "http://127.0.0.1:$PURCHASES_PORT/purchases/count")" =~ \"count\":[1-9] ]]
}

# $1 = fault: one run in a sandbox of its own; writes its table row to $RUN_DIR/<fault>.row and
# "lost duplicated" to $RUN_DIR/<fault>.counts (the no-fault throughput to baseline.txt).
run_fault() {
  local fault="$1" result="$RUN_DIR/$1.json" start end throughput relative baseline verdict
  local accepted maybe stored counted lost duplicated client_extra=()
  [[ "$fault" != late-retry ]] || client_extra=(--late-retries "$late_retries" --late-retry-after "$late_retry_after")
  local vhost="h-$NAME-$fault" database="purchases_h_${NAME//-/_}_${fault//-/_}"
  # node-*: the cluster is started for this run and deleted after it; its default vhost is the sandbox.
  [[ "$fault" != node-* ]] || vhost=""
  [[ "$fault" != node-partition ]] || export CLUSTER_RUNTIME=containers
  # The copy faults need a second copy of the store partition (this subshell's platform only).
  [[ "$fault" != kill-store-copy && "$fault" != lose-store-disk ]] || export STORE_COPIES=2
  local probe_pid=""
  if [[ "$fault" == node-* ]]; then
    # What an interrupted earlier run may have left goes first (drop_sandbox forgets the names).
    VHOST="$vhost" DATABASE="$database"
    drop_sandbox
    VHOST="$vhost" DATABASE="$database"
    "$CLUSTER" stop >>"$RUN_DIR/cluster.log" 2>&1 || true
    unset RABBITMQ_HOST RABBITMQ_PORT
    export RABBITMQ_VHOST=/
    start_cluster replicated 2>>"$RUN_DIR/cluster.log"
  else
    open_sandbox "$vhost" "$database"
    proxy_broker_link
  fi
  proxy_database_link
  [[ "$fault" != db-read-only ]] || restrict_database_user
  proxy_redis_link
  STORE_DURABILITY_STATE_DIR="$RUN_DIR/store-state-$fault"
  log "run: fault $fault, $stores stores x $per_hour purchases/hour, vhost ${VHOST:-/ on the cluster}, database $DATABASE"
  start_platform mysql
  start="$(date +%s.%N)"
  "$JAVA" -jar "$(jar_of load-client)" run --base-url "http://127.0.0.1:$API_PORT" --max-stores "$stores" \
    --purchases-per-hour "$per_hour" --retries "$retries" --label "$fault" --out "$result" --progress lines \
    "${client_extra[@]}" >"$RUN_DIR/$fault.txt" 2>&1 &
  local client_pid=$!
  STARTED_PIDS+=("$client_pid")
  STARTED_NAMES+=(load-client)
  if [[ "$fault" != none && "$fault" != late-retry ]]; then
    # The clock starts at the first purchase stored: the load client retries a refused
    # connection only once the API has answered it, and on a busy machine its start can take
    # longer than --at.
    local first=$((SECONDS + 120))
    until any_purchase_stored; do
      [[ $SECONDS -lt $first ]] || die "no purchase was stored within 120 s of the run's start; see $RUN_DIR/$fault.txt"
      kill -0 "$client_pid" 2>/dev/null || die "the run ended before the fault; raise --purchases-per-hour or lower --at"
      sleep 0.2
    done
    sleep "$fault_at"
    kill -0 "$client_pid" 2>/dev/null || die "the run ended before the fault; raise --purchases-per-hour or lower --at"
    if ((STORE_COPIES > 1)); then
      # purchase-api opens its query connection at the first GET (over 3 s on a loaded machine,
      # a 504): that first answer comes before the probe, which measures the fault.
      local warm=$((SECONDS + 60))
      until curl -sf -o /dev/null "http://127.0.0.1:$API_PORT/items/store/1" \
          && curl -sf -o /dev/null "http://127.0.0.1:$API_PORT/items/top10/1"; do
        [[ $SECONDS -lt $warm ]] || die "the GETs were not answered within 60 s of the fault's time"
        sleep 0.5
      done
      probe_gets "$RUN_DIR/$fault-gets.txt" &
      probe_pid=$!
      STARTED_PIDS+=("$probe_pid")
      STARTED_NAMES+=(get-probe)
    fi
    inject "$fault"
  fi
  local deadline=$((SECONDS + timeout))
  while kill -0 "$client_pid" 2>/dev/null; do
    if [[ $SECONDS -ge $deadline ]]; then
      kill -TERM "$client_pid" 2>/dev/null || true
      die "the load client of fault $fault ran longer than --timeout ${timeout}s; see $RUN_DIR/$fault.txt"
    fi
    sleep 1
  done
  wait "$client_pid" || true
  end="$(date +%s.%N)"
  if [[ -n "$probe_pid" ]]; then
    kill "$probe_pid" 2>/dev/null || true
    wait "$probe_pid" 2>/dev/null || true
    local gets failed_gets
    gets="$(wc -l <"$RUN_DIR/$fault-gets.txt")"
    failed_gets="$(grep -cv '^2' "$RUN_DIR/$fault-gets.txt" || true)"
    log "GETs during the fault: $gets asked, $failed_gets not answered 2xx ($(sort "$RUN_DIR/$fault-gets.txt" | uniq -c | tr -s ' \n' ' '))"
    [[ "$failed_gets" -eq 0 ]] || die "$failed_gets of $gets GETs during fault $fault were not answered 2xx; see $RUN_DIR/$fault-gets.txt"
  fi
  [[ -f "$result" ]] || die "the load client wrote no result; see $RUN_DIR/$fault.txt"
  # The sandbox started empty: no baseline. Exit 1 (lost or duplicated) is a row of the table.
  verdict="$(verify --counts-out "$RUN_DIR/$fault.verify" "$result")" || [[ $? -eq 1 ]] \
    || die "the verify command could not check the run; see $RUN_DIR/$fault.txt"
  [[ "$verdict" != *DIFFER* ]] || die "the store copies' counts differ after fault $fault: $verdict"
  read -r accepted maybe stored counted lost duplicated <"$RUN_DIR/$fault.verify"
  baseline="$(cat "$RUN_DIR/baseline.txt" 2>/dev/null || true)"
  read -r throughput relative < <(tools throughput "$accepted" "$start" "$end" ${baseline:+--baseline "$baseline"})
  [[ -n "$throughput" ]] || die "could not work out the throughput of fault $fault"
  [[ "$fault" != none || -f "$RUN_DIR/baseline.txt" ]] || { echo "$throughput" >"$RUN_DIR/baseline.txt"; relative=100%; }
  printf '| %-22s | %7s | %7s | %7s | %6s | %4s | %10s | %6s | %8s |\n' \
    "$fault" "$accepted" "$stored" "$counted" "$maybe" "$lost" "$duplicated" "$throughput" "$relative" >"$RUN_DIR/$fault.row"
  echo "$lost $duplicated" >"$RUN_DIR/$fault.counts"
  log "result: fault $fault: $verdict; $throughput/s ($relative of no fault); load average $(cut -d' ' -f1-3 /proc/loadavg)"
  [[ "$fault" != node-* ]] || what_the_clients_saw "$fault" >"$RUN_DIR/$fault-clients.txt"
  stop_started
  drop_sandbox
  if [[ "$fault" == node-* ]]; then
    "$CLUSTER" logs "$RUN_DIR/cluster-$fault" 2>>"$RUN_DIR/cluster.log" || true
    stop_cluster >>"$RUN_DIR/cluster.log" 2>&1
    unset RABBITMQ_ADDRESSES RABBITMQ_MANAGEMENT_URL BROKER_TOPOLOGY_MODE BROKER_REPLICATED_SHARDS
  fi
}

build_if_needed "${SERVICE_MODULES[@]}" load-client tools
"$ROOT/scripts/local-services.sh"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >"$RUN_DIR/environment.txt"
ROWS=()
TOTAL_LOST=0
TOTAL_DUPLICATED=0
BROKEN=0
for fault in "${faults[@]}"; do
  # Each run in a subshell that cleans up after itself, so a run that breaks (a service that
  # does not start, a run past --timeout) is a row of the table, not the end of the experiment.
  # In the background, so that a TERM or Ctrl-C of this script reaches it at once (cleanup()).
  ( trap 'stop_started; restore_servers; drop_sandbox; stop_cluster' EXIT; trap 'exit 130' INT; trap 'exit 143' TERM
    run_fault "$fault" ) &
  RUN_PID=$!
  if wait "$RUN_PID" && [[ -f "$RUN_DIR/$fault.counts" ]]; then
    ROWS+=("$(cat "$RUN_DIR/$fault.row")")
    read -r lost duplicated <"$RUN_DIR/$fault.counts"
    TOTAL_LOST=$((TOTAL_LOST + lost))
    TOTAL_DUPLICATED=$((TOTAL_DUPLICATED + duplicated))
  else
    BROKEN=$((BROKEN + 1))
    ROWS+=("$(printf '| %-22s | %-77s |' "$fault" "the run broke: see $RUN_DIR (the log above)")")
  fi
done
{
  echo "Faults at $stores stores x $((per_hour * 9)) purchases (closed loop, $retries retries), fault at ${fault_at}s, $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| fault                  | 201s    | stored  | counted | maybe  | lost | duplicated | 201s/s | relative |"
  echo "|------------------------|---------|---------|---------|--------|------|------------|--------|----------|"
  printf '%s\n' "${ROWS[@]}"
  echo
  echo "faults: ${#ROWS[@]} runs, $TOTAL_LOST lost, $TOTAL_DUPLICATED duplicated$([[ $BROKEN -eq 0 ]] || echo ", $BROKEN broken")"
} | tee "$RUN_DIR/table.md"
[[ $TOTAL_LOST -eq 0 && $TOTAL_DUPLICATED -eq 0 && $BROKEN -eq 0 ]]
