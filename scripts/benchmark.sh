#!/usr/bin/env bash
# Benchmarks the local pipeline with the standard load profile at 32, 64, 128 and 256 stores:
# builds if needed, ensures RabbitMQ and MariaDB run, starts the three services once, runs the
# load client per store count (checking after each that every accepted purchase was stored and
# counted exactly once), then writes the comparison table and charts. Everything (each
# run's JSON, the service logs, report.md and the PNG charts) lands in one folder,
# runs/benchmark-<UTC time>/. Stops what it started, even on Ctrl-C or failure.
#
# Usage: scripts/benchmark.sh [options] [-- extra load-client run options]
#   --stores "N ..."        store counts (default "32 64 128 256")
#   --purchases-per-hour N  POSTs per store per hour (default 300: 2,700 per store)
#   --label TEXT            label of the series, e.g. the machine or instance size
#                           (default local-mysql or local-dynamodb)
#   --dynamodb              purchases-service with the dynamodb profile against DynamoDB Local
#   --stub                  measure the load client alone, against its stub API
#   --restart-each          restart the services before each store count (fresh state)
#   --cluster               on a local 3-node RabbitMQ cluster (scripts/rabbitmq-cluster.sh,
#                           started here and stopped afterwards), replicated topology mode
#   --topology-mode MODE    with --cluster: replicated (default) or sharded
#   --run-dir DIR           output folder (default runs/benchmark-<UTC time>)
#   -h, --help              this help
# Environment: as scripts/run-local.sh (API_PORT, SERVICE_JAVA_OPTS, ...).
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
cluster=false
topology_mode=replicated
run_dir=""
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --stores) store_counts="$2"; shift 2 ;;
    --purchases-per-hour) per_hour="$2"; shift 2 ;;
    --label) label="$2"; shift 2 ;;
    --dynamodb) profile=dynamodb; shift ;;
    --stub) stub=true; shift ;;
    --restart-each) restart_each=true; shift ;;
    --cluster) cluster=true; shift ;;
    --topology-mode) topology_mode="$2"; shift 2 ;;
    --run-dir) run_dir="$2"; shift 2 ;;
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
# shellcheck source=lib/platform.sh
source "$ROOT/scripts/lib/platform.sh"

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  stop_started
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

if [[ "$stub" == true ]]; then build_if_needed load-client; else build_if_needed "${SERVICE_MODULES[@]}" load-client; fi
[[ "$stub" == true ]] || "$ROOT/scripts/local-services.sh"
[[ "$cluster" == true ]] && start_cluster "$topology_mode"
start
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB"
  echo "profile: $profile  stub: $stub  purchases/hour: $per_hour  stores: $store_counts"
  echo "broker: $([[ "$cluster" == true ]] && echo "3-node cluster, topology $topology_mode" || echo "the machine's broker")"
  echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
} >"$RUN_DIR/environment.txt"

results=()
first=true
for stores in $store_counts; do
  if [[ "$restart_each" == true && "$first" == false ]]; then
    stop_started
    # Keep the previous services' logs; the restarted ones write fresh files.
    mkdir -p "$RUN_DIR/logs-before-$stores"
    mv "$RUN_DIR"/*.log "$RUN_DIR/logs-before-$stores/"
    start
  fi
  first=false
  result="$RUN_DIR/$label-$stores.json"
  log "run: $stores stores, $per_hour purchases/hour/store"
  [[ "$stub" == true ]] || { stored_before="$(stored_purchases)"; counted_before="$(counted_purchases)"; }
  cpu_seconds >"$RUN_DIR/cpu-before-$stores.txt"
  echo "load average before $stores stores: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RUN_DIR/environment.txt"
  "$JAVA" -jar "$(jar_of load-client)" run --base-url "http://127.0.0.1:$API_PORT" --max-stores "$stores" \
    --purchases-per-hour "$per_hour" --label "$label" --out "$result" --progress lines "${extra[@]}" \
    | tee "$RUN_DIR/$label-$stores.txt"
  cpu_seconds | cpu_used "$RUN_DIR/cpu-before-$stores.txt" | tee "$RUN_DIR/cpu-$stores.txt"
  [[ "$stub" == true ]] || check_every_purchase_arrived_once "$result" "$stored_before" "$counted_before"
  results+=("$result")
done

"$JAVA" -jar "$(jar_of load-client)" report --out-dir "$RUN_DIR" "${results[@]}"
