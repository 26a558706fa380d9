#!/usr/bin/env bash
# One-command local run of the whole pipeline: builds the jars if needed, makes sure RabbitMQ
# (sharding + management plugins), MariaDB and Redis run (scripts/local-services.sh), starts
# purchase-api :8080, store-service :8081 and purchases-service :8082 from their jars (logs in
# runs/local-<time>/), waits until each is ready, runs the load client (32 stores by default),
# prints its summary, checks that every accepted purchase was stored and counted exactly once,
# checks the GETs (and every store-service copy's counts) exact against an SQL count over the
# purchases database (load-client check-gets; MySQL profile), queries them, and stops what it
# started, even on Ctrl-C or failure. The managers' sales page is at the address it prints
# (http://127.0.0.1:8080/sales/).
#
# Usage: scripts/run-local.sh [options] [-- extra load-client run options]
#   --stores N              stores (default 32)
#   --purchases-per-hour N  POSTs per store per hour, 9 hours per store (default 300)
#   --label TEXT            label of the result (default local)
#   --csv                   also write one record per attempt to the run folder
#   --threshold EXPR        fail the run unless EXPR holds at the end (load-client run --threshold,
#                           e.g. 'failed<1%' 'POST.p99<500ms'); repeatable. A crossed threshold
#                           still gets the pipeline check and both GETs, then exit status 99
#   --dynamodb              run purchases-service with the dynamodb profile, against a
#                           DynamoDB Local (in memory, port 8000) that this script starts
#   --cluster               run on a local 3-node RabbitMQ cluster (scripts/rabbitmq-cluster.sh,
#                           started here and stopped afterwards) in the replicated topology mode;
#                           as containers of the project's RabbitMQ (CLUSTER_RUNTIME=processes:
#                           the machine's rabbitmq-server)
#   --topology-mode MODE    with --cluster: replicated (default) or sharded
#   --kill-node-after S     with --cluster: kill the node leading most queues S seconds into
#                           the load, start it again 15 s later (the check must still pass)
#   --store-partitions N    run store-service as N partitions, one process each (default 1;
#                           STORE_PARTITIONS); the storeX shard count must be a multiple of N
#   --store-copies C        and C copies of each partition (default 1; STORE_COPIES): N x C
#                           processes, partition p of copy c on STORE_PORT and
#                           STORE_MANAGEMENT_PORT + p x 100 + c x 10 (STORE_PARTITION_PORT_STEP,
#                           STORE_COPY_PORT_STEP), its peers (STORE_REBUILD_PEERS) the other copies of p;
#                           the check covers every copy and that the copies agree
#   --auth                  till authentication on: keys for stores 1..N and a manager key issued
#                           into the run folder (scripts/till-keys.sh: keys/till-keys.txt, sign in
#                           to the sales page with the manager key), sent by the load client and
#                           the checks
#   --page-test             then the sales page's browser test (Debian's chromium driven by
#                           playwright-core; implies --auth, MySQL profile): its views against the
#                           GETs and the database's count, live refresh, sign-in; screenshots in
#                           the run folder's screenshots/ (PAGE_SCREENSHOTS=DIR elsewhere)
#   --keep-running          leave the services up afterwards (prints how to stop them)
#   --stub                  try the script without the services: the load client's stub API
#   --run-dir DIR           folder for logs and results (default runs/local-<UTC time>)
#   -h, --help              this help
# Exit status: 0 all held; 99 a --threshold was crossed; 1 anything else failed (130/143 on
# Ctrl-C or SIGTERM).
# Environment: API_PORT, STORE_PORT, PURCHASES_PORT (8080..8082), API_MANAGEMENT_PORT,
#   STORE_MANAGEMENT_PORT, PURCHASES_MANAGEMENT_PORT (actuator: 9080..9082), DYNAMODB_LOCAL_PORT (8000),
#   SERVICE_JAVA_OPTS (-Xms768m -Xmx768m), MYSQL_URL (jdbc:mysql://127.0.0.1:3306/purchases_local?
#   createDatabaseIfNotExist=true), STORE_DURABILITY_STATE_DIR (store-service's counts on disk; default
#   <run folder>/store-state, -p<n> appended per partition, -c<n> per copy from 1), API_IDEMPOTENCY_REDIS_URL (purchase-api's idempotency store, default
#   redis://127.0.0.1:6379/0; empty: none), API_IDEMPOTENCY_TTL (1h here), and the services' own
#   variables (RABBITMQ_HOST, ...).
set -euo pipefail

SCRIPT_NAME=run-local
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

stores=32
per_hour=300
label=local
csv=false
profile=mysql
keep_running=false
stub=false
auth=false
page_test=false
cluster=false
topology_mode=replicated
kill_after=""
run_dir=""
thresholds=()
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --stores) stores="$2"; shift 2 ;;
    --purchases-per-hour) per_hour="$2"; shift 2 ;;
    --label) label="$2"; shift 2 ;;
    --csv) csv=true; shift ;;
    --threshold) thresholds+=(--threshold "$2"); shift 2 ;;
    --dynamodb) profile=dynamodb; shift ;;
    --cluster) cluster=true; shift ;;
    --topology-mode) topology_mode="$2"; shift 2 ;;
    --kill-node-after) kill_after="$2"; shift 2 ;;
    --store-partitions) export STORE_PARTITIONS="$2"; shift 2 ;;
    --store-copies) export STORE_COPIES="$2"; shift 2 ;;
    --auth) auth=true; shift ;;
    --page-test) page_test=true; auth=true; shift ;;
    --keep-running) keep_running=true; shift ;;
    --stub) stub=true; shift ;;
    --run-dir) run_dir="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 1 ;;
  esac
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUN_DIR="${run_dir:-$ROOT/runs/local-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$RUN_DIR"
RUN_DIR="$(cd "$RUN_DIR" && pwd)"
JAVA_HOME="$("$ROOT/scripts/find-jdk.sh")"
export JAVA_HOME
JAVA="$JAVA_HOME/bin/java"
# shellcheck source=lib/platform.sh
source "$ROOT/scripts/lib/platform.sh"

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [[ "$keep_running" == true && $status -eq 0 ]]; then
    log "left running: ${STARTED_NAMES[*]:-nothing} (pids ${STARTED_PIDS[*]:-none}); stop with: kill ${STARTED_PIDS[*]:-}"
    log "the sales page: http://127.0.0.1:$API_PORT/sales/${keys_file:+ (sign in with the manager key in $keys_file)}"
  else
    stop_started
    stop_cluster
  fi
  log "logs and results in $RUN_DIR"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[[ "$stub" == true && "$auth" == true ]] && die "--auth and --page-test need the services, not --stub"
[[ "$page_test" == true && "$profile" == dynamodb ]] && die "--page-test checks the chain against the purchases database with SQL: the MySQL profile only"
if [[ "$stub" == true ]]; then build_if_needed load-client; else build_if_needed "${SERVICE_MODULES[@]}" load-client; fi
keys_file=""
if [[ "$auth" == true ]]; then
  "$ROOT/scripts/till-keys.sh" issue --dir "$RUN_DIR/keys" --stores "1-$stores" --managers 1 >/dev/null
  keys_file="$RUN_DIR/keys/till-keys.txt"
  export API_AUTH_ENABLED=true API_AUTH_KEYS_FILE="$RUN_DIR/keys/till-key-hashes.txt"
  GET_AUTHORIZATION="Authorization: Bearer $(awk '$1 == "manager" { print $2; exit }' "$keys_file")"
  log "till authentication on: keys in $keys_file"
fi
if [[ "$stub" == true ]]; then
  start_stub
else
  "$ROOT/scripts/local-services.sh"
  [[ "$cluster" == true ]] && start_cluster "$topology_mode"
  # check-gets counts the database's purchases from here on: this run's store-service starts empty.
  platform_started_us="$(date +%s%6N)"
  start_platform "$profile"
  log "the sales page: http://127.0.0.1:$API_PORT/sales/"
fi

# purchases-service's database outlives a run: the check below compares what this run added.
[[ "$stub" == true ]] || save_pipeline_baseline "$RUN_DIR/counts-before"

client_args=(run --base-url "http://127.0.0.1:$API_PORT" --max-stores "$stores" --purchases-per-hour "$per_hour"
  --label "$label" --out "$RUN_DIR/result.json")
[[ "$csv" == true ]] && client_args+=(--csv "$RUN_DIR/requests.csv")
[[ -n "$keys_file" ]] && client_args+=(--till-keys "$keys_file")
client_args+=("${thresholds[@]}")
log "load client: ${client_args[*]} ${extra[*]:-}"
[[ -n "$kill_after" && "$cluster" == true ]] && kill_a_node_after "$kill_after"
status=0
"$JAVA" -jar "$(jar_of load-client)" "${client_args[@]}" "${extra[@]}" || status=$?
# 99: a threshold crossed, the run itself complete: checked like any other run, then reported.
[[ $status -eq 0 || $status -eq 99 ]] \
  || die "the load client failed (exit $status: 1 no request succeeded, 2 bad options, 130 interrupted)"

[[ "$stub" == true ]] || check_every_purchase_arrived_once "$RUN_DIR/result.json" "$RUN_DIR/counts-before"

if [[ "$stub" == true ]]; then
  :
elif [[ "$profile" == dynamodb ]]; then
  log "GETs check skipped: check-gets sums the purchases with SQL (MySQL profile only)"
elif [[ -n "${STORE_DURABILITY_STATE_DIR:-}" ]]; then
  log "GETs check skipped: STORE_DURABILITY_STATE_DIR keeps store-service's counts across runs, the database's purchases since this start are not all they hold"
else
  gets_status=0
  gets_args=(--top-items-out "$RUN_DIR/top-items.json")
  [[ -n "$keys_file" ]] && gets_args+=(--till-keys "$keys_file")
  check_gets_exact "$platform_started_us" "${gets_args[@]}" >"$RUN_DIR/check-gets.txt" || gets_status=$?
  while IFS= read -r line; do log "GETs check: $line"; done <"$RUN_DIR/check-gets.txt"
  [[ $gets_status -eq 0 ]] || die "GETs check FAILED (exit $gets_status): $RUN_DIR/check-gets.txt"
fi

echo
if [[ "$stub" == true ]]; then
  query_both_gets "http://127.0.0.1:$API_PORT" 1 || true
else
  query_both_gets "http://127.0.0.1:$API_PORT" 60 || die "the GETs must answer with items and stores"
fi
if [[ "$page_test" == true ]]; then
  [[ -f "$RUN_DIR/top-items.json" ]] || die "--page-test needs the GETs check's count of the chain (not run: see above)"
  log "sales page browser test: $(node --version 2>/dev/null || echo 'no node') $(chromium --version 2>/dev/null | tail -n 1)"
  (cd "$ROOT/purchase-api" && npm ci --no-audit --no-fund --prefer-offline --ignore-scripts >"$RUN_DIR/npm-ci.log" 2>&1) \
    || die "npm ci failed in purchase-api; see $RUN_DIR/npm-ci.log"
  page_status=0
  SALES_PAGE_URL="http://127.0.0.1:$API_PORT/sales/" TILL_KEYS="$keys_file" TOP_ITEMS="$RUN_DIR/top-items.json" \
    SCREENSHOTS="${PAGE_SCREENSHOTS:-$RUN_DIR/screenshots}" \
    node --test --test-reporter=spec "$ROOT/purchase-api/src/test/browser/sales-page.test.js" >"$RUN_DIR/page-test.txt" 2>&1 \
    || page_status=$?
  while IFS= read -r line; do log "page test: $line"; done < <(grep -E '^\s*(✔|✖|ℹ (tests|pass|fail|skipped))' "$RUN_DIR/page-test.txt")
  [[ $page_status -eq 0 ]] || die "the sales page's browser test FAILED: $RUN_DIR/page-test.txt"
  grep -qE '^ℹ (skipped|todo) [1-9]' "$RUN_DIR/page-test.txt" && die "the sales page's browser test skipped tests: $RUN_DIR/page-test.txt"
  log "the sales page's browser test passed; screenshots in ${PAGE_SCREENSHOTS:-$RUN_DIR/screenshots}"
fi
if [[ $status -eq 99 ]]; then
  log "FAILED: a threshold was crossed (the load client's summary says which)"
  exit 99
fi
