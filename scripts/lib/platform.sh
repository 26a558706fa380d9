# Shared by scripts/run-local.sh and scripts/benchmark.sh (sourced, not run): builds the jars if
# they are missing or older than their sources, starts the three services (and DynamoDB Local
# for the dynamodb profile) from their jars with logs in a run folder, waits for readiness, and
# stops exactly what it started.
# Expects: ROOT (repository root), RUN_DIR (folder for logs and results), JAVA (java binary).

SERVICE_MODULES=(purchase-api store-service purchases-service)
API_PORT="${API_PORT:-8080}"
STORE_PORT="${STORE_PORT:-8081}"
PURCHASES_PORT="${PURCHASES_PORT:-8082}"
# Actuator (health, metrics) listens on a management port of its own (MANAGEMENT_PORT).
API_MANAGEMENT_PORT="${API_MANAGEMENT_PORT:-9080}"
STORE_MANAGEMENT_PORT="${STORE_MANAGEMENT_PORT:-9081}"
PURCHASES_MANAGEMENT_PORT="${PURCHASES_MANAGEMENT_PORT:-9082}"
DYNAMODB_LOCAL_PORT="${DYNAMODB_LOCAL_PORT:-8000}"
# store-service's partitions and copies of each, one process each (docs/architecture.md, "Store partitions
# and copies"); every service reads both. Partition p, copy c listens on STORE_PORT and
# STORE_MANAGEMENT_PORT plus p x STORE_PARTITION_PORT_STEP + c x STORE_COPY_PORT_STEP, and copy c
# rebuilds a lost state directory from the partition's other copies (STORE_REBUILD_PEERS).
export STORE_PARTITIONS="${STORE_PARTITIONS:-1}" STORE_COPIES="${STORE_COPIES:-1}"
STORE_PARTITION_PORT_STEP="${STORE_PARTITION_PORT_STEP:-100}"
STORE_COPY_PORT_STEP="${STORE_COPY_PORT_STEP:-10}"
# Services share two cores with the client on a laptop-sized machine; cap their heaps. The
# whole heap from the start: G1 then gives the young generation room at once; in a benchmark
# run purchase-api paused 37 times instead of 128 and spent ~9 % less CPU per purchase
# (docs/performance.md).
SERVICE_JAVA_OPTS="${SERVICE_JAVA_OPTS:--Xms768m -Xmx768m}"
# A database of its own, so a run never meets a schema left by a development build in the
# default "purchases" database (Flyway would refuse to start on a checksum mismatch).
MYSQL_URL="${MYSQL_URL:-jdbc:mysql://127.0.0.1:3306/purchases_local?createDatabaseIfNotExist=true}"
STARTED_PIDS=()
STARTED_NAMES=()

log() { printf '[%s] %s\n' "${SCRIPT_NAME:-platform}" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# The broker of the local runs and the services' settings for it (RABBITMQ_HOST, ...).
# shellcheck source=local-broker.sh
source "$ROOT/scripts/lib/local-broker.sh"

# A module's runnable jar; the tools module's is its -exec jar (its plain jar is a test library).
jar_of() {
  if [[ "$1" == tools ]]; then echo "$ROOT/tools/target/tools-0.1.0-SNAPSHOT-exec.jar"; else echo "$ROOT/$1/target/$1-0.1.0-SNAPSHOT.jar"; fi
}

# A command of the tools jar (java -jar ... --help lists them): the fault proxy, and what the
# scripts read from Prometheus scrapes and the broker's management API. A script that calls it
# names tools in its build_if_needed.
tools() { "$JAVA" -jar "$(jar_of tools)" "$@"; }

# $@ = modules. Builds them (and what they need) when a jar is missing or any source or pom
# is newer than it.
build_if_needed() {
  local stale="" modules
  modules="$(IFS=,; echo "$*")"
  for module in "$@"; do
    local jar; jar="$(jar_of "$module")"
    if [[ ! -f "$jar" ]]; then stale="$module (no jar)"; break; fi
    if [[ -n "$(find "$ROOT/$module/src/main" "$ROOT/$module/pom.xml" "$ROOT/contract/src/main" "$ROOT/broker/src/main" "$ROOT/pom.xml" \
                  -newer "$jar" -type f -print -quit 2>/dev/null)" ]]; then
      stale="$module (sources changed)"; break
    fi
  done
  if [[ -z "$stale" ]]; then
    log "jars are up to date"
    return 0
  fi
  log "building $modules ($stale): ./mvnw -B -ntp -DskipTests package -pl $modules -am"
  (cd "$ROOT" && ./mvnw -B -ntp -q -DskipTests package -pl "$modules" -am) >"$RUN_DIR/build.log" 2>&1 \
    || { tail -n 40 "$RUN_DIR/build.log" >&2; die "the build failed; see $RUN_DIR/build.log"; }
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

require_free_port() { # $1 = port, $2 = who needs it
  if port_in_use "$1"; then
    die "port $1 (for $2) is already in use; stop what runs there, or set the *_PORT variables"
  fi
}

# $1 = name, $2 = log file, rest = command (run with the environment already exported by the caller)
# LAUNCH_PREFIX (words, default none) goes before every command, e.g. "taskset -c 0": that is how
# scripts/benchmark.sh --cpus runs the platform on fewer cores.
start_process() {
  local name="$1" logfile="$2"; shift 2
  # shellcheck disable=SC2086 # the prefix is words
  ${LAUNCH_PREFIX:-} "$@" >"$logfile" 2>&1 &
  STARTED_PIDS+=("$!")
  STARTED_NAMES+=("$name")
  log "started $name (pid $!), log $logfile"
}

# Stops what start_process started, last first; TERM, then KILL after 20 s.
stop_started() {
  local i pid
  for ((i = ${#STARTED_PIDS[@]} - 1; i >= 0; i--)); do
    pid="${STARTED_PIDS[$i]}"
    if kill -0 "$pid" 2>/dev/null; then
      log "stopping ${STARTED_NAMES[$i]} (pid $pid)"
      kill -TERM "$pid" 2>/dev/null || true
    fi
  done
  for ((i = ${#STARTED_PIDS[@]} - 1; i >= 0; i--)); do
    pid="${STARTED_PIDS[$i]}"
    for ((t = 0; t < 40; t++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "${STARTED_NAMES[$i]} (pid $pid) ignored TERM; killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  STARTED_PIDS=()
  STARTED_NAMES=()
}

# --cluster: the local 3-node cluster of scripts/rabbitmq-cluster.sh (CLUSTER is the script;
# CLUSTER_RUNTIME picks containers or local processes) instead of the local broker; the
# services get every node's address (they fail over) and the topology mode $1 (replicated unless
# told otherwise). stop_cluster stops it and deletes its data.
CLUSTER="$ROOT/scripts/rabbitmq-cluster.sh"
CLUSTER_STARTED=false
start_cluster() {
  local mode="${1:-replicated}"
  "$CLUSTER" start || die "the 3-node cluster did not start (see $CLUSTER --help for what it needs)"
  CLUSTER_STARTED=true
  RABBITMQ_ADDRESSES="$("$CLUSTER" addresses)"
  RABBITMQ_MANAGEMENT_URL="$("$CLUSTER" management-url 1)"
  RABBITMQ_VHOST="${RABBITMQ_VHOST:-/}"
  BROKER_TOPOLOGY_MODE="$mode"
  # As many replicated shards as the sharded mode has shard queues here (4 per node x 3), so that
  # the two modes compare like for like.
  BROKER_REPLICATED_SHARDS="${BROKER_REPLICATED_SHARDS:-12}"
  export RABBITMQ_ADDRESSES RABBITMQ_MANAGEMENT_URL RABBITMQ_VHOST BROKER_TOPOLOGY_MODE BROKER_REPLICATED_SHARDS
  log "platform on the 3-node cluster ($RABBITMQ_ADDRESSES, ${CLUSTER_RUNTIME:-containers}), topology mode $mode"
}

stop_cluster() {
  if [[ "$CLUSTER_STARTED" == true ]]; then
    "$CLUSTER" stop || true
    CLUSTER_STARTED=false
  fi
}

# $1 = seconds: in the background, after $1 s kills the cluster node leading most quorum queues
# (or node 1 in sharded mode), starts it again 15 s later. A node loss under load.
kill_a_node_after() {
  local delay="$1"
  (
    sleep "$delay"
    local n
    n="$("$CLUSTER" most-leaders 2>/dev/null || echo 1)"
    log "killing cluster node $n mid-run"
    "$CLUSTER" stop-node "$n"
    sleep 15
    log "starting cluster node $n again"
    "$CLUSTER" start-node "$n" >/dev/null 2>&1 && log "node $n is back"
  ) &
  STARTED_PIDS+=("$!")
  STARTED_NAMES+=("node-killer")
}

# DynamoDB Local in memory, through scripts/dynamodb-local.sh (the first start resolves DynamoDB
# Local from Maven Central, which can take a minute; later ones take seconds).
start_dynamodb_local() {
  require_free_port "$DYNAMODB_LOCAL_PORT" "DynamoDB Local"
  start_process dynamodb-local "$RUN_DIR/dynamodb-local.log" "$ROOT/scripts/dynamodb-local.sh" "$DYNAMODB_LOCAL_PORT"
  wait_until dynamodb-local 300 port_in_use "$DYNAMODB_LOCAL_PORT"
}

# $1 = the name start_process was given, $2 = seconds, rest = probe. Fails at once, with the end
# of the process's log, if the process dies while it is waited for.
wait_until() {
  local name="$1" seconds="$2" pid="" i; shift 2
  for ((i = 0; i < ${#STARTED_NAMES[@]}; i++)); do
    [[ "${STARTED_NAMES[$i]}" == "$name" ]] && pid="${STARTED_PIDS[$i]}"
  done
  for ((t = 0; t < seconds * 2; t++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
      tail -n 30 "$RUN_DIR/$name.log" | cut -c1-600 >&2 || true
      die "$name exited before it was ready; see $RUN_DIR/$name.log"
    fi
    sleep 0.5
  done
  die "$name was not ready within ${seconds}s; see $RUN_DIR/$name.log"
}

# $1 = name, $2 = management port, $3 = pid: waits for /actuator/health/readiness to be UP, or the process to die.
wait_ready() {
  local name="$1" port="$2" pid="$3" url="http://127.0.0.1:$2/actuator/health/readiness"
  for ((t = 0; t < 360; t++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 8 "$RUN_DIR/$name.log" | cut -c1-600 >&2 || true
      die "$name exited during startup; see $RUN_DIR/$name.log"
    fi
    if curl -sf "$url" 2>/dev/null | grep -q '"status":"UP"'; then
      log "$name is ready ($url)"
      return 0
    fi
    sleep 0.5
  done
  die "$name did not report UP at $url within 180s; see $RUN_DIR/$name.log"
}

# $1 = mysql|dynamodb. Starts store-service, purchases-service, purchase-api and waits for each.
start_platform() {
  local profile="$1"
  for module in purchase-api store-service purchases-service; do
    [[ -f "$(jar_of "$module")" ]] || die "$(jar_of "$module") is missing; is $module merged and built?"
  done
  require_free_port "$API_PORT" purchase-api
  require_free_port "$PURCHASES_PORT" purchases-service
  require_free_port "$API_MANAGEMENT_PORT" "purchase-api's management"
  require_free_port "$PURCHASES_MANAGEMENT_PORT" "purchases-service's management"
  local partition copy
  for ((partition = 0; partition < STORE_PARTITIONS; partition++)); do
    for ((copy = 0; copy < STORE_COPIES; copy++)); do
      require_free_port "$(store_port "$partition" "$copy")" "$(store_name "$partition" "$copy")"
      require_free_port "$(store_management_port "$partition" "$copy")" "$(store_name "$partition" "$copy")'s management"
    done
  done
  if [[ "$profile" == dynamodb ]]; then
    start_dynamodb_local
  fi
  # Any start order works (each service declares the topology); readiness is checked per service.
  local store_pids=()
  for ((partition = 0; partition < STORE_PARTITIONS; partition++)); do
    for ((copy = 0; copy < STORE_COPIES; copy++)); do
      start_store_service "$partition" "$copy"
      store_pids+=("${STARTED_PIDS[-1]}")
    done
  done
  start_purchases_service "$profile"
  local purchases_pid="${STARTED_PIDS[-1]}"
  start_purchase_api
  local api_pid="${STARTED_PIDS[-1]}"
  local i=0
  for ((partition = 0; partition < STORE_PARTITIONS; partition++)); do
    for ((copy = 0; copy < STORE_COPIES; copy++)); do
      wait_ready "$(store_name "$partition" "$copy")" "$(store_management_port "$partition" "$copy")" "${store_pids[$i]}"
      i=$((i + 1))
    done
  done
  wait_ready purchases-service "$PURCHASES_MANAGEMENT_PORT" "$purchases_pid"
  wait_ready purchase-api "$API_MANAGEMENT_PORT" "$api_pid"
}

# Partition $1's copy $2's (default 0) process name (and log file name): store-service when
# there is one partition of one copy; -p<partition> with partitions, -c<copy> with copies.
store_name() {
  local name=store-service
  ((STORE_PARTITIONS == 1)) || name="$name-p$1"
  ((STORE_COPIES == 1)) || name="$name-c${2:-0}"
  echo "$name"
}
store_port() { echo $((STORE_PORT + $1 * STORE_PARTITION_PORT_STEP + ${2:-0} * STORE_COPY_PORT_STEP)); }
store_management_port() { echo $((STORE_MANAGEMENT_PORT + $1 * STORE_PARTITION_PORT_STEP + ${2:-0} * STORE_COPY_PORT_STEP)); }
# Partition $1's copy $2's state directory: in the run folder (STORE_DURABILITY_STATE_DIR), one per
# partition and copy, so each run starts empty and a restart finds what the killed process wrote.
store_state_dir() {
  local state="${STORE_DURABILITY_STATE_DIR:-$RUN_DIR/store-state}"
  ((STORE_PARTITIONS == 1)) || state="$state-p$1"
  ((STORE_COPIES == 1)) || state="$state-c${2:-0}"
  echo "$state"
}

# Starts store-service partition $1 (default 0), copy $2 (default 0) (also again after a fault
# test killed it); the caller waits for it. With copies, STORE_REBUILD_PEERS names the partition's other
# copies, from which an empty state directory is rebuilt.
start_store_service() {
  local partition="${1:-0}" copy="${2:-0}" other peers=""
  for ((other = 0; other < STORE_COPIES; other++)); do
    ((other == copy)) || peers="${peers:+$peers,}http://127.0.0.1:$(store_port "$partition" "$other")"
  done
  SERVER_PORT="$(store_port "$partition" "$copy")" MANAGEMENT_PORT="$(store_management_port "$partition" "$copy")" \
    STORE_PARTITION_INDEX="$partition" STORE_PARTITION_COPY="$copy" STORE_REBUILD_PEERS="$peers" STORE_DURABILITY_STATE_DIR="$(store_state_dir "$partition" "$copy")" \
    start_process "$(store_name "$partition" "$copy")" "$RUN_DIR/$(store_name "$partition" "$copy").log" \
    "$JAVA" $SERVICE_JAVA_OPTS -jar "$(jar_of store-service)"
}

# $1 = mysql|dynamodb. Starts purchases-service (also again after a fault test killed it).
start_purchases_service() {
  if [[ "$1" == dynamodb ]]; then
    # DynamoDB Local accepts any key pair; these are placeholders, not credentials.
    SERVER_PORT="$PURCHASES_PORT" MANAGEMENT_PORT="$PURCHASES_MANAGEMENT_PORT" SPRING_PROFILES_ACTIVE=dynamodb \
      PURCHASES_DYNAMODB_ENDPOINT="http://127.0.0.1:$DYNAMODB_LOCAL_PORT" PURCHASES_DYNAMODB_CREATE_TABLE=true \
      AWS_REGION="${AWS_REGION:-us-east-1}" AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local \
      start_process purchases-service "$RUN_DIR/purchases-service.log" \
        "$JAVA" $SERVICE_JAVA_OPTS -jar "$(jar_of purchases-service)"
  else
    SERVER_PORT="$PURCHASES_PORT" MANAGEMENT_PORT="$PURCHASES_MANAGEMENT_PORT" SPRING_PROFILES_ACTIVE=mysql \
      MYSQL_URL="$MYSQL_URL" \
      start_process purchases-service "$RUN_DIR/purchases-service.log" \
        "$JAVA" $SERVICE_JAVA_OPTS -jar "$(jar_of purchases-service)"
  fi
}

# Starts purchase-api (also again after a crash test killed it); the caller waits for it.
# The idempotency store is the local Redis (scripts/local-services.sh), keys kept 1 h rather
# than the default 24 h, so repeated runs keep it small; API_IDEMPOTENCY_REDIS_URL= (empty) runs
# without it. $1 = process name (default purchase-api), $2 = port, $3 = management port (default
# API_PORT, API_MANAGEMENT_PORT): a second replica beside the first.
start_purchase_api() {
  local name="${1:-purchase-api}"
  SERVER_PORT="${2:-$API_PORT}" MANAGEMENT_PORT="${3:-$API_MANAGEMENT_PORT}" \
    API_IDEMPOTENCY_REDIS_URL="${API_IDEMPOTENCY_REDIS_URL-redis://127.0.0.1:6379/0}" API_IDEMPOTENCY_TTL="${API_IDEMPOTENCY_TTL:-1h}" \
    start_process "$name" "$RUN_DIR/$name.log" "$JAVA" $SERVICE_JAVA_OPTS -jar "$(jar_of purchase-api)"
}

# Starts the load client's built-in stub on API_PORT instead of the services (to try the scripts).
start_stub() {
  require_free_port "$API_PORT" "the stub API"
  start_process stub-api "$RUN_DIR/stub-api.log" "$JAVA" -jar "$(jar_of load-client)" stub --port "$API_PORT"
  wait_until stub-api 30 port_in_use "$API_PORT"
}

# The load client's verify command (load-client/README.md) against the services started here:
# the exactly-once rule is written once, there; these functions only call it.
# With copies, every copy group is checked and the copies must agree (their /state/summary).
verify() {
  local partition copy stores=()
  for ((copy = 0; copy < STORE_COPIES; copy++)); do
    for ((partition = 0; partition < STORE_PARTITIONS; partition++)); do
      stores+=(--store-metrics-url "http://127.0.0.1:$(store_management_port "$partition" "$copy")/actuator/prometheus")
    done
  done
  if ((STORE_COPIES > 1)); then
    stores+=(--store-copies "$STORE_COPIES")
    for ((copy = 0; copy < STORE_COPIES; copy++)); do
      for ((partition = 0; partition < STORE_PARTITIONS; partition++)); do
        stores+=(--store-state-url "http://127.0.0.1:$(store_port "$partition" "$copy")")
      done
    done
  fi
  "$JAVA" -jar "$(jar_of load-client)" verify --purchases-url "http://127.0.0.1:$PURCHASES_PORT" \
    --purchases-metrics-url "http://127.0.0.1:$PURCHASES_MANAGEMENT_PORT/actuator/prometheus" "${stores[@]}" "$@"
}

# $1 = file: the services' counts now (before a run), for check_every_purchase_arrived_once.
save_pipeline_baseline() {
  verify --save-baseline "$1" || die "could not read the services' counts before the run"
}

# The end-to-end promise, checked after a run by the load client's verify command: waits for the
# pipeline to drain, then every purchase the API accepted is stored once by purchases-service and
# counted once by store-service. $1 = the load client's result JSON, $2 = the baseline file
# (save_pipeline_baseline before the run).
check_every_purchase_arrived_once() {
  local line status=0
  line="$(verify --baseline "$2" "$1")" || status=$?
  if [[ $status -eq 0 ]]; then
    log "pipeline check: $line"
  else
    die "pipeline check FAILED: ${line:-the counts could not be read (exit $status)}"
  fi
}

# The GETs checked exact against a brute-force count over purchases-service's database, and
# every store-service copy's state summary against its partition's (the load client's
# check-gets, load-client/README.md; MySQL profile only). Every store with sales and a sample of
# CHECK_GETS_ITEM_SAMPLE items sold (default 5000; 0 = all), plus a few of neither, and the
# chain's top items: each GET through purchase-api must equal the SQL count's top list. $1 =
# epoch microseconds from which the database's purchases count: when this run's store-service
# state started empty; the rest go to check-gets (--till-keys, --top-items-out). Prints the
# check's lines; returns its exit status.
check_gets_exact() {
  local since="$1" partition copy states=() status=0
  shift
  for ((copy = 0; copy < STORE_COPIES; copy++)); do
    for ((partition = 0; partition < STORE_PARTITIONS; partition++)); do
      states+=(--store-state-url "http://127.0.0.1:$(store_port "$partition" "$copy")")
    done
  done
  "$JAVA" -jar "$(jar_of load-client)" check-gets --base-url "http://127.0.0.1:$API_PORT" --jdbc-url "$MYSQL_URL" \
    --db-user "${MYSQL_USERNAME:-root}" --since "$since" --max-stores "${PLATFORM_MAX_STORES:-1024}" \
    --max-item-id "${PLATFORM_MAX_ITEM_ID:-100000}" --item-sample "${CHECK_GETS_ITEM_SAMPLE:-5000}" \
    --store-copies "$STORE_COPIES" "${states[@]}" "$@" || status=$?
  return "$status"
}

# The GETs of the API at $1: polls (up to $2 times, every 0.5 s) until store 1 has sales (the
# counts reach store-service asynchronously through the broker), then asks the top stores of
# one of its items and the chain's top 5 items; prints the answers, and returns 1 unless they
# hold items and stores. GET_AUTHORIZATION (e.g. "Authorization: Bearer <manager key>"), when
# set, goes with each.
query_both_gets() {
  local api="$1" attempts="$2" store_items="" top_stores chain item auth=()
  [[ -z "${GET_AUTHORIZATION:-}" ]] || auth=(-H "$GET_AUTHORIZATION")
  for ((t = 0; t < attempts; t++)); do
    store_items="$(curl -s "${auth[@]}" "$api/items/store/1" || true)"
    [[ "$store_items" == *itemID* ]] && break
    sleep 0.5
  done
  echo "GET /items/store/1"
  echo "  $store_items"
  item=1
  [[ "$store_items" =~ \"itemID\"\ *:\ *([0-9]+) ]] && item="${BASH_REMATCH[1]}"
  top_stores="$(curl -s "${auth[@]}" "$api/items/top10/$item" || true)"
  echo "GET /items/top10/$item"
  echo "  $top_stores"
  chain="$(curl -s "${auth[@]}" "$api/items/top?limit=5" || true)"
  echo "GET /items/top?limit=5"
  echo "  $chain"
  [[ "$store_items" == *itemID* ]] || { log "GET /items/store/1 did not answer with items"; return 1; }
  [[ "$top_stores" == *storeID* ]] || { log "GET /items/top10/$item did not answer with stores"; return 1; }
  [[ "$chain" == *itemID* ]] || { log "GET /items/top did not answer with items"; return 1; }
}

# The messages each shard queue of both sharded exchanges has received so far (the management
# API's message_stats.publish; the plugin's "sharding: <exchange> - ..." queues or the replicated
# "<exchange>.shard.N"), as "<count> <queue>" lines into $1. The API samples its statistics
# every few seconds, so this reads until two readings 6 s apart agree (at most a minute).
save_shard_counts() {
  local url="${RABBITMQ_MANAGEMENT_URL:-http://localhost:15672}" vhost="${RABBITMQ_VHOST:-/}" now last="" t
  vhost="${vhost//%/%25}" vhost="${vhost//\//%2F}"
  for ((t = 0; t < 10; t++)); do
    now="$(curl -sf -u "${RABBITMQ_USERNAME:-guest}:${RABBITMQ_PASSWORD:-guest}" \
      "$url/api/queues/$vhost?columns=name,message_stats.publish" | tools shard-counts)" || return 1
    [[ "$now" == "$last" ]] && break
    last="$now"
    sleep 6
  done
  printf '%s\n' "$now" >"$1"
}

# $1 = counts before a run, $2 = after (save_shard_counts): the messages each shard queue received
# in between, and per sharded exchange the smallest, the largest and max/min, the balance over the
# shards. A shard queue that received nothing is named.
shard_balance() {
  tools shard-balance "$1" "$2"
}

# Where a run's CPU goes: load-client --watch-pid options for every process start_process started
# and for the local broker (beam.smp, in its container or not, and the container's AMQP port
# proxy, docker-proxy), database (mariadbd) and idempotency store (redis-server) when they run on
# this machine.
watch_pid_options() {
  local i name pid
  for ((i = 0; i < ${#STARTED_PIDS[@]}; i++)); do
    printf -- '--watch-pid %s=%s ' "${STARTED_NAMES[$i]}" "${STARTED_PIDS[$i]}"
  done
  pid="$(broker_pid || true)"
  if [[ -n "$pid" && "$CLUSTER_STARTED" != true ]]; then
    printf -- '--watch-pid beam.smp=%s ' "$pid"
    pid="$(broker_proxy_pid || true)"
    [[ -z "$pid" ]] || printf -- '--watch-pid docker-proxy=%s ' "$pid"
  fi
  for name in mariadbd redis-server; do
    pid="$(pgrep -o -x "$name" 2>/dev/null || true)"
    if [[ -n "$pid" ]]; then printf -- '--watch-pid %s=%s ' "$name" "$pid"; fi
  done
  if [[ "$CLUSTER_STARTED" == true ]]; then
    for node in 1 2 3; do
      pid="$("$CLUSTER" pid "$node" 2>/dev/null)" || continue
      printf -- '--watch-pid rabbit-node%s=%s ' "$node" "$pid"
    done
  fi
}

# tools pipeline-sampler's options, one a line, for the services of the checkout at $1 (default
# ROOT) on this machine's ports: what they stored and counted, what purchase-api published, and
# the CPU of each service, the broker (BROKER_PROCESS, a regular expression of its command line,
# default the broker node's own VM, not its command-line tools), the database and Redis; a row a
# second while the load client runs (a row's scrapes cost the services), every 250 ms otherwise.
pipeline_sampler_options() {
  local tree="${1:-$ROOT}" p module
  printf '%s\n' --load "load-client-[^ ]*\\.jar run " --api-metrics "http://127.0.0.1:$API_MANAGEMENT_PORT/actuator/prometheus" \
    --purchases-metrics "http://127.0.0.1:$PURCHASES_MANAGEMENT_PORT/actuator/prometheus"
  for ((p = 0; p < STORE_PARTITIONS; p++)); do
    printf '%s\n' --store-metrics "http://127.0.0.1:$(store_management_port "$p" 0)/actuator/prometheus"
  done
  for module in "${SERVICE_MODULES[@]}"; do
    printf '%s\n' --process "$module=$tree/$module/target/$module-[^ ]*\\.jar"
  done
  printf '%s\n' --process "broker=${BROKER_PROCESS:-beam\\.smp.* -s rabbit boot}" --process "mariadbd=^/usr/sbin/mariadbd" --process "redis=^redis-server"
  # The container broker's AMQP port proxy relays every byte the services send the broker.
  [[ "${LOCAL_BROKER:-}" != container ]] \
    || printf '%s\n' --process "broker-proxy=docker-proxy .*-host-port $LOCAL_BROKER_AMQP_PORT "
}
