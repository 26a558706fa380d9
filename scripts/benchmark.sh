#!/usr/bin/env bash
# Benchmarks the local pipeline with the standard load profile at 32, 64, 128 and 256 stores:
# builds if needed, ensures RabbitMQ and MariaDB run, starts the three services once, runs the
# load client per store count (checking after each that every accepted purchase was stored and
# counted exactly once), then writes the comparison table and charts. Every run records the CPU
# seconds each process spent over it (the client, each service, the broker beam.smp, the
# database mariadbd, purchase-api's idempotency store redis-server), and the report tables CPU
# milliseconds per purchase by process.
# After each run it also reads from the management API how many messages each shard queue of
# both sharded exchanges received, and reports the balance (max/min) per exchange.
# Everything (each run's JSON, the service logs, report.md, the PNG charts and report.html, a single
# file with the tables and the charts inline) lands in one folder, runs/benchmark-<UTC time>/.
# Stops what it started, even on Ctrl-C or failure.
#
# Usage: scripts/benchmark.sh [options] [-- extra load-client run options]
#   --stores "N ..."        store counts (default "32 64 128 256")
#   --purchases-per-hour N  POSTs per store per hour (default 300: 2,700 per store)
#   --label TEXT            label of the series, e.g. the machine or instance size
#                           (default local-mysql or local-dynamodb)
#   --dynamodb              purchases-service with the dynamodb profile against DynamoDB Local
#   --stub                  measure the load client alone, against its stub API
#   --restart-each          restart the services before each store count (fresh state)
#   --cpus "N ..."          one series per size: the services run on cores 0..N-1 only
#                           (taskset at launch, so each JVM sizes itself for N cores), restarted
#                           per size, labelled <label>-<N>cpu; the client is not limited
#   --cpus-shared           with --cpus, also pin the running broker (beam.smp) and database
#                           (mariadbd) to those cores for the runs, restoring their affinity
#                           after: only on a machine nobody else uses, they are shared services
#   --duration TIME         each measured run lasts TIME (e.g. 2m, 90s; load-client run --duration:
#                           the time zones scaled into it) instead of 9 hours of --purchases-per-hour;
#                           the warm-up run stays a count
#   --rates "R ..."         paced runs instead of closed-loop ones: --rate R at each R, at
#                           --rate-stores stores; the report draws p50/p99 against offered load
#   --rate-stores N         stores of the paced runs (default 256); without --duration a run lasts
#                           about 2,700 x N / R s at 300 purchases/hour: give --duration instead
#   --threshold EXPR        every measured run must hold EXPR at its end (load-client run --threshold,
#                           e.g. 'POST.p99<50ms' 'failed<0.1%' 'rps>5000'); repeatable. A crossed one
#                           fails that run; the others still run, the report is written, and the
#                           script exits 99
#   --metrics-port PORT     each run (the warm-up too) serves live metrics for Prometheus on PORT
#                           at /metrics while it goes (load-client run --metrics-port), labelled
#                           run=<its series>; default: none
#   --kill-api-after S      crash test: S seconds into each run, kill purchase-api with SIGKILL,
#                           start it again --down-for seconds later (default 3), and fail unless
#                           the run ends with 0 final failures (the tills retry) and the
#                           pipeline check passes
#   --cluster               on a local 3-node RabbitMQ cluster (scripts/rabbitmq-cluster.sh,
#                           started here and stopped afterwards), replicated topology mode;
#                           containers (CLUSTER_RUNTIME=processes: the machine's rabbitmq-server)
#   --topology-mode MODE    with --cluster: replicated (default) or sharded
#   --store-partitions N    store-service as N partitions, one process each, as in
#                           scripts/run-local.sh (default 1)
#   --store-copies C        and C copies of each partition (default 1): N x C processes, each
#                           with its own line in the CPU table
#   --warmup-per-hour N     after each start of the services, first a warm-up run at the
#                           largest store count with N purchases/hour/store (default 90: 207,360
#                           POSTs at 256 stores, and the GETs of any --get-ratio), pipeline-checked
#                           like the others but left out of the report, so the runs measure warm
#                           JVMs rather than the JIT compiling them (a first run on fresh JVMs
#                           spends about twice the API's steady CPU per purchase; after a warm-up
#                           of 30, with 6,912 GETs in it, the closed loop with 10 % GETs still
#                           ran 11-13 % below its warm rate); 0: no warm-up
#   --run-dir DIR           output folder (default runs/benchmark-<UTC time>)
#   -h, --help              this help
# Each run's result JSON has the run's environment (commit, host, cores, JVM, the client's options,
# and, passed with --environment, this script's settings and the services' settings); an HdrHistogram
# interval log (.hlog) lies beside it. Ctrl-C or SIGTERM stops the run going cleanly: the client
# writes its summary and files, marked interrupted.
# Exit status: 0 every run held; 99 a --threshold was crossed; 1 anything else failed (130/143 on
# Ctrl-C or SIGTERM).
# Environment: as scripts/run-local.sh (API_PORT, SERVICE_JAVA_OPTS, ...), except that the MySQL
# profile uses a database of its own, purchases_benchmark, dropped at the start, unless MYSQL_URL
# is set.
set -euo pipefail

SCRIPT_NAME=benchmark
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

store_counts="32 64 128 256"
per_hour=300
label=""
profile=mysql
stub=false
restart_each=false
cpu_sizes=""
cpus_shared=false
rates=""
rate_stores=256
kill_api_after=""
down_for=3
cluster=false
topology_mode=replicated
run_dir=""
warmup_per_hour=90
duration=""
thresholds=()
metrics_options=()
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --stores) store_counts="$2"; shift 2 ;;
    --purchases-per-hour) per_hour="$2"; shift 2 ;;
    --label) label="$2"; shift 2 ;;
    --dynamodb) profile=dynamodb; shift ;;
    --stub) stub=true; shift ;;
    --restart-each) restart_each=true; shift ;;
    --cpus) cpu_sizes="$2"; shift 2 ;;
    --cpus-shared) cpus_shared=true; shift ;;
    --rates) rates="$2"; shift 2 ;;
    --rate-stores) rate_stores="$2"; shift 2 ;;
    --kill-api-after) kill_api_after="$2"; shift 2 ;;
    --down-for) down_for="$2"; shift 2 ;;
    --cluster) cluster=true; shift ;;
    --topology-mode) topology_mode="$2"; shift 2 ;;
    --store-partitions) export STORE_PARTITIONS="$2"; shift 2 ;;
    --store-copies) export STORE_COPIES="$2"; shift 2 ;;
    --run-dir) run_dir="$2"; shift 2 ;;
    --warmup-per-hour) warmup_per_hour="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --threshold) thresholds+=(--threshold "$2"); shift 2 ;;
    --metrics-port) metrics_options=(--metrics-port "$2"); shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 1 ;;
  esac
done
if [[ -z "$label" ]]; then
  if [[ "$stub" == true ]]; then label=stub; else label="local-$profile"; fi
fi

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUN_DIR="${run_dir:-$ROOT/runs/benchmark-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$RUN_DIR"
RUN_DIR="$(cd "$RUN_DIR" && pwd)"
JAVA_HOME="$("$ROOT/scripts/find-jdk.sh")"
export JAVA_HOME
JAVA="$JAVA_HOME/bin/java"
# A database of its own, emptied before the runs: MariaDB's cost per purchase grows with the
# table (the till's keyed purchases have name-based ids, which land at random places of the
# primary key; from empty to 4 million rows its share here went from 0.02 to 0.18 ms), so
# benchmarks compare only from the same start. A MYSQL_URL given is used as it is.
fresh_database=""
if [[ -z "${MYSQL_URL:-}" && "$profile" == mysql && "$stub" == false ]]; then
  fresh_database=purchases_benchmark
  MYSQL_URL="jdbc:mysql://127.0.0.1:3306/$fresh_database?createDatabaseIfNotExist=true"
fi
# shellcheck source=lib/platform.sh
source "$ROOT/scripts/lib/platform.sh"

for size in $cpu_sizes; do
  [[ "$size" =~ ^[1-9][0-9]*$ && "$size" -le "$(nproc)" ]] || die "--cpus: $size is not a core count between 1 and $(nproc)"
done
[[ "$cpus_shared" == false || -n "$cpu_sizes" ]] || die "--cpus-shared needs --cpus"
[[ -z "$kill_api_after" || "$stub" == false ]] || die "--kill-api-after needs the services, not --stub"
[[ "$warmup_per_hour" =~ ^[0-9]+$ ]] || die "--warmup-per-hour: $warmup_per_hour is not a count"

# The shared broker and database, pinned only with --cpus-shared; their affinity is restored.
SHARED_AFFINITY=()
pin_shared() { # $1 = core list
  local name pid
  for name in beam.smp mariadbd; do
    if [[ "$name" == beam.smp ]]; then pid="$(broker_pid || true)"; else pid="$(pgrep -o -x "$name" || true)"; fi
    [[ -n "$pid" ]] || die "--cpus-shared: no $name process to pin"
    SHARED_AFFINITY+=("$pid:$(taskset -p "$pid" | awk '{ print $NF }')")
    taskset -a -p -c "$1" "$pid" >/dev/null
    log "pinned $name (pid $pid, all threads) to cores $1"
  done
}
unpin_shared() {
  local entry
  for entry in "${SHARED_AFFINITY[@]}"; do
    taskset -a -p "${entry#*:}" "${entry%%:*}" >/dev/null 2>&1 || true
  done
  SHARED_AFFINITY=()
}

# The load client running, if any: on Ctrl-C or SIGTERM it gets a TERM of its own and the time to
# write its summary and files (a background job of this script does not see the terminal's Ctrl-C).
CLIENT_PID=""
stop_client() {
  [[ -n "$CLIENT_PID" ]] && kill -0 "$CLIENT_PID" 2>/dev/null || return 0
  log "stopping the load client (pid $CLIENT_PID); it writes what it measured"
  kill -TERM "$CLIENT_PID" 2>/dev/null || true
  for ((t = 0; t < 40; t++)); do kill -0 "$CLIENT_PID" 2>/dev/null || return 0; sleep 0.5; done
  kill -KILL "$CLIENT_PID" 2>/dev/null || true
}

SAMPLER_PID=""
stop_sampler() {
  [[ -n "$SAMPLER_PID" ]] || return 0
  kill "$SAMPLER_PID" 2>/dev/null || true
  wait "$SAMPLER_PID" 2>/dev/null || true
  SAMPLER_PID=""
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  stop_client
  stop_sampler
  stop_started
  unpin_shared
  stop_cluster
  log "results in $RUN_DIR"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start() {
  if [[ "$stub" == true ]]; then start_stub; else start_platform "$profile"; fi
}

if [[ "$stub" == true ]]; then build_if_needed load-client; else build_if_needed "${SERVICE_MODULES[@]}" load-client tools; fi
[[ "$stub" == true ]] || "$ROOT/scripts/local-services.sh"
[[ -z "$fresh_database" ]] || mariadb --protocol=tcp -h 127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS $fresh_database" \
  || die "could not empty the benchmark's database $fresh_database"
[[ "$cluster" == true ]] && start_cluster "$topology_mode"
# What the pipeline sustained, sampled from outside the runs (tools pipeline-sampler):
# the report's "Sustained" table (stored rate and CPU per purchase over run and drain, the drain,
# the backlog's peak). BENCHMARK_SAMPLER=off: none (scripts/compare.sh samples on its own).
if [[ "$stub" == false && "${BENCHMARK_SAMPLER:-on}" != off ]]; then
  mapfile -t sampling < <(pipeline_sampler_options)
  "$JAVA" -jar "$(jar_of tools)" pipeline-sampler --out "$RUN_DIR/pipeline.csv" "${sampling[@]}" 2>"$RUN_DIR/sampler.log" &
  SAMPLER_PID=$!
fi

# The services' settings (the ${NAME:default} variables of their application*.yml) that this
# environment sets, one NAME=value a line (a password, secret, token or key as NAME=<set>):
# a run folder says what it ran with, not only at which commit.
service_settings() {
  local name
  for name in $(grep -ho '\${[A-Z][A-Z0-9_]*:' "$ROOT"/{purchase-api,store-service,purchases-service}/src/main/resources/application*.yml \
                | tr -d '${:' | sort -u); do
    printenv "$name" >/dev/null || continue
    if [[ "$name" =~ PASSWORD|SECRET|TOKEN|KEY ]]; then echo "$name=<set>"; else echo "$name=$(printenv "$name")"; fi
  done
}

# The broker the runs measure: its kind and RabbitMQ version.
broker_description() {
  if [[ "$stub" == true ]]; then
    echo "none (the stub API)"
  elif [[ "$cluster" == true ]]; then
    echo "3-node cluster (${CLUSTER_RUNTIME:-containers}), topology $topology_mode"
  elif [[ "$LOCAL_BROKER" == container ]]; then
    echo "RabbitMQ $(broker_version), container $LOCAL_BROKER_NAME ($(docker container inspect -f '{{.Config.Image}}' "$LOCAL_BROKER_NAME"))"
  else
    echo "RabbitMQ $(broker_version), the machine's own"
  fi
}

# What the client cannot see for itself, for its result's environment: this script's settings
# and the services' settings, as load-client run --environment options.
ENVIRONMENT_OPTIONS=()
while IFS= read -r setting; do
  [[ -n "$setting" ]] && ENVIRONMENT_OPTIONS+=(--environment "service.$setting")
done < <(service_settings)
ENVIRONMENT_OPTIONS+=(--environment "benchmark.profile=$profile" --environment "benchmark.stub=$stub"
  --environment "benchmark.cpus=${cpu_sizes:-all}" --environment "benchmark.cpus-shared=$cpus_shared"
  --environment "benchmark.broker=$(broker_description)"
  --environment "benchmark.run-dir=$RUN_DIR")

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB"
  echo "profile: $profile  stub: $stub  purchases/hour: $per_hour  stores: $store_counts  warm-up: $warmup_per_hour purchases/hour"
  echo "cpus: ${cpu_sizes:-all} (shared broker and database pinned: $cpus_shared)  rates: ${rates:-closed loop}  duration: ${duration:-9 hours of purchases}"
  echo "thresholds: ${thresholds[*]:-none}"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "broker: $(broker_description)"
  echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(
    git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ', with uncommitted changes')"
  settings="$(service_settings | tr '\n' ' ')"
  echo "service settings from the environment: ${settings:-none}"
} >"$RUN_DIR/environment.txt"

# $1 = series label, $2 = stores, $3 = offered rate (0 = closed loop), $4 = purchases per hour,
# $5 = measured or warmup (a warm-up run is checked but neither crashed, timed by --duration,
# judged by the thresholds nor reported)
crossed=()
run_once() {
  local series="$1" stores="$2" rate="$3" per_hour="$4" kind="$5" name result n=2 measured_options=() status=0
  name="$series-$stores"
  [[ "$rate" == 0 ]] || name="$name-rate$rate"
  [[ "$kind" == measured ]] || name="$name-warmup"
  # The same store count twice in one series: a file per run, not one overwritten.
  if [[ -e "$RUN_DIR/$name.json" ]]; then
    while [[ -e "$RUN_DIR/$name-$n.json" ]]; do n=$((n + 1)); done
    name="$name-$n"
  fi
  result="$RUN_DIR/$name.json"
  log "$([[ "$kind" == measured ]] && echo run || echo warm-up run): $stores stores, $([[ "$kind" == measured && -n "$duration" ]] && echo "for $duration" || echo "$per_hour purchases/hour/store"), ${series}, $([[ "$rate" == 0 ]] && echo closed loop || echo "paced at $rate req/s")"
  [[ "$stub" == true ]] || save_pipeline_baseline "$RUN_DIR/$name.counts-before"
  [[ "$stub" == true || "$kind" != measured ]] || save_shard_counts "$RUN_DIR/$name.shards-before" \
    || die "could not read the shard queues' message counts from the management API"
  if [[ "$kind" == measured ]]; then
    [[ -z "$duration" ]] || measured_options+=(--duration "$duration")
    measured_options+=("${thresholds[@]}")
  fi
  # shellcheck disable=SC2046 # watch_pid_options prints words
  "$JAVA" -jar "$(jar_of load-client)" run --base-url "http://127.0.0.1:$API_PORT" --max-stores "$stores" \
    --purchases-per-hour "$per_hour" --label "$series" --rate "$rate" --out "$result" --progress lines \
    $(watch_pid_options) "${ENVIRONMENT_OPTIONS[@]}" "${metrics_options[@]}" "${measured_options[@]}" "${extra[@]}" >"$RUN_DIR/$name.txt" &
  CLIENT_PID=$!
  [[ -z "$kill_api_after" || "$kind" != measured ]] || crash_and_restart_api "$CLIENT_PID"
  wait "$CLIENT_PID" || status=$?
  CLIENT_PID=""
  cat "$RUN_DIR/$name.txt"
  [[ -f "$result" ]] || die "the load client wrote no result (exit $status); see $RUN_DIR/$name.txt"
  case "$status" in
    0) ;;
    99) log "$name: a threshold was crossed (see its summary above)"; crossed+=("$name") ;;
    *) die "the load client failed (exit $status: 1 no request succeeded, 130 interrupted); see $RUN_DIR/$name.txt" ;;
  esac
  echo "$name: load average after the run $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RUN_DIR/environment.txt"
  [[ "$stub" == true ]] || check_every_purchase_arrived_once "$result" "$RUN_DIR/$name.counts-before"
  [[ "$kind" == measured ]] || return 0
  if [[ "$stub" == false ]]; then
    save_shard_counts "$RUN_DIR/$name.shards-after" || die "could not read the shard queues' message counts"
    { echo "### $name"; echo; echo '```'; shard_balance "$RUN_DIR/$name.shards-before" "$RUN_DIR/$name.shards-after"; echo '```'
      echo; } | tee "$RUN_DIR/$name.shards.md"
  fi
  if [[ -n "$kill_api_after" ]]; then
    local final
    final="$(sed -n 's/^ *"failed" *: *\([0-9][0-9]*\).*/\1/p' "$result" | head -n 1)"
    [[ "$final" == 0 ]] || die "crash test: the run had $final final failures after purchase-api's restart"
    log "crash test: 0 final failures across purchase-api's kill -9 and restart"
  fi
  results+=("$result")
}

# $1 = the client's pid. Kills purchase-api with SIGKILL kill_api_after seconds into the run and
# starts it again down_for seconds later, while the client keeps going.
crash_and_restart_api() {
  local i api_pid=""
  sleep "$kill_api_after"
  kill -0 "$1" 2>/dev/null || die "crash test: the run ended before the crash; lower --kill-api-after"
  for ((i = 0; i < ${#STARTED_NAMES[@]}; i++)); do
    [[ "${STARTED_NAMES[$i]}" == purchase-api ]] && api_pid="${STARTED_PIDS[$i]}"
  done
  log "crash test: killing purchase-api (pid $api_pid) with SIGKILL"
  kill -KILL "$api_pid"
  sleep "$down_for"
  mv "$RUN_DIR/purchase-api.log" "$RUN_DIR/purchase-api-killed-$(date +%s).log"
  start_purchase_api
  wait_ready purchase-api "$API_MANAGEMENT_PORT" "${STARTED_PIDS[-1]}"
  log "crash test: purchase-api is back"
}

# Starts the services, then warms them up (--warmup-per-hour) at the largest store count.
start_warm() {
  local largest=0 stores
  start
  [[ "$warmup_per_hour" -gt 0 && "$stub" == false ]] || return 0
  if [[ -n "$rates" ]]; then largest="$rate_stores"; else
    for stores in $store_counts; do [[ "$stores" -le "$largest" ]] || largest="$stores"; done
  fi
  run_once "$1" "$largest" 0 "$warmup_per_hour" warmup
}

# $1 = series label: starts the platform, runs every store count (or rate), stops it.
run_series() {
  local series="$1" first=true stores rate
  start_warm "$series"
  if [[ -n "$rates" ]]; then
    for rate in $rates; do run_once "$series" "$rate_stores" "$rate" "$per_hour" measured; done
  else
    for stores in $store_counts; do
      if [[ "$restart_each" == true && "$first" == false ]]; then
        stop_started
        # Keep the previous services' logs; the restarted ones write fresh files.
        mkdir -p "$RUN_DIR/logs-before-$series-$stores"
        mv "$RUN_DIR"/*.log "$RUN_DIR/logs-before-$series-$stores/"
        start_warm "$series"
      fi
      first=false
      run_once "$series" "$stores" 0 "$per_hour" measured
    done
  fi
  stop_started
  mkdir -p "$RUN_DIR/logs-$series"
  mv "$RUN_DIR"/*.log "$RUN_DIR/logs-$series/" 2>/dev/null || true
}

results=()
if [[ -z "$cpu_sizes" ]]; then
  run_series "$label"
else
  for size in $cpu_sizes; do
    cores="0-$((size - 1))"
    LAUNCH_PREFIX="taskset -c $cores"
    [[ "$cpus_shared" == false ]] || pin_shared "$cores"
    log "size $size cpu: services on cores $cores"
    run_series "$label-${size}cpu"
    unpin_shared
  done
  LAUNCH_PREFIX=""
fi

appended=()
if compgen -G "$RUN_DIR/*.shards.md" >/dev/null; then
  { echo "## Messages per shard queue"; echo
    echo "Batch messages each shard queue of both sharded exchanges received during each run (the management"
    echo "API's publish counts), and the balance over the shards, max/min."; echo
    cat "$RUN_DIR"/*.shards.md; } >"$RUN_DIR/shards.md"
  appended=(--append "$RUN_DIR/shards.md")
fi
# report.md and report.html (one file, the charts inline) beside the PNG charts.
"$JAVA" -jar "$(jar_of load-client)" report --out-dir "$RUN_DIR" "${appended[@]}" "${results[@]}"
if [[ -n "$SAMPLER_PID" ]]; then
  stop_sampler
  { echo; echo "## Sustained"; echo; tools compare-report --ticks-per-second "$(getconf CLK_TCK)" --run "$label=$RUN_DIR"; } \
    | tee -a "$RUN_DIR/report.md"
fi
if [[ ${#crossed[@]} -gt 0 ]]; then
  log "FAILED: thresholds crossed in ${crossed[*]}"
  exit 99
fi
