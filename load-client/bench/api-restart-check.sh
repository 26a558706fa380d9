#!/usr/bin/env bash
# Checks that retrying tills ride out a purchase-api crash: starts the platform (as
# scripts/run-local.sh does), runs the load client with its default retries, kills purchase-api
# with SIGKILL a while into the run, starts it again after a pause, and when the run ends checks
# that it had no final failures and that every accepted purchase was stored and counted exactly
# once (retries carry the purchase's Idempotency-Key, so a purchase accepted before the crash and
# sent again after it is still one purchase). Results and logs land in runs/api-restart-<time>/.
#
# Usage: load-client/bench/api-restart-check.sh [options] [-- extra load-client run options]
#   --stores N              stores (default 32)
#   --purchases-per-hour N  POSTs per store per hour (default 100)
#   --kill-after S          seconds into the run when purchase-api is killed (default 10)
#   --down-for S            seconds it stays down before it is started again (default 3;
#                           its start takes a few more)
#   --run-dir DIR           output folder (default runs/api-restart-<UTC time>)
#   -h, --help              this help
# Environment: as scripts/run-local.sh (API_PORT, RABBITMQ_VHOST, MYSQL_URL, ...).
# Exit status: 0 when the run had no final failure and the pipeline check passed.
set -euo pipefail

SCRIPT_NAME=api-restart-check
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

stores=32
per_hour=100
kill_after=10
down_for=3
run_dir=""
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --stores) stores="$2"; shift 2 ;;
    --purchases-per-hour) per_hour="$2"; shift 2 ;;
    --kill-after) kill_after="$2"; shift 2 ;;
    --down-for) down_for="$2"; shift 2 ;;
    --run-dir) run_dir="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 1 ;;
  esac
done

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
RUN_DIR="${run_dir:-$ROOT/runs/api-restart-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$RUN_DIR"
RUN_DIR="$(cd "$RUN_DIR" && pwd)"
JAVA_HOME="$("$ROOT/scripts/find-jdk.sh")"
export JAVA_HOME
JAVA="$JAVA_HOME/bin/java"
# shellcheck source=../../scripts/lib/platform.sh
source "$ROOT/scripts/lib/platform.sh"
trap 'stop_started; log "results in $RUN_DIR"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

build_if_needed "${SERVICE_MODULES[@]}" load-client
"$ROOT/scripts/local-services.sh"
start_platform mysql
stored_before="$(stored_purchases)"
counted_before="$(counted_purchases)"

result="$RUN_DIR/api-restart-$stores.json"
"$JAVA" -jar "$(jar_of load-client)" run --base-url "http://127.0.0.1:$API_PORT" --max-stores "$stores" \
  --purchases-per-hour "$per_hour" --label api-restart --out "$result" --progress lines "${extra[@]}" \
  >"$RUN_DIR/client.txt" 2>"$RUN_DIR/client.err" &
client_pid=$!

sleep "$kill_after"
for ((i = 0; i < ${#STARTED_NAMES[@]}; i++)); do
  [[ "${STARTED_NAMES[$i]}" == purchase-api ]] && api_pid="${STARTED_PIDS[$i]}"
done
kill -0 "$client_pid" 2>/dev/null || die "the run ended before the crash; raise --purchases-per-hour or lower --kill-after"
log "killing purchase-api (pid $api_pid) with SIGKILL, $kill_after s into the run"
kill -KILL "$api_pid"
sleep "$down_for"
mv "$RUN_DIR/purchase-api.log" "$RUN_DIR/purchase-api-before-kill.log"
SERVER_PORT="$API_PORT" start_process purchase-api "$RUN_DIR/purchase-api.log" \
  "$JAVA" $SERVICE_JAVA_OPTS -jar "$(jar_of purchase-api)"
wait_ready purchase-api "$API_PORT" "${STARTED_PIDS[-1]}"
log "purchase-api is back; waiting for the run to end"

wait "$client_pid" || true
cat "$RUN_DIR/client.txt"
final="$(sed -n 's/^ *"failed" *: *\([0-9][0-9]*\).*/\1/p' "$result" | head -n 1)"
[[ "$final" == 0 ]] || die "the run had $final final failures (see $RUN_DIR/client.txt)"
log "no final failures"
check_every_purchase_arrived_once "$result" "$stored_before" "$counted_before"
