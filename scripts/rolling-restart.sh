#!/usr/bin/env bash
# A rolling restart under load drops nothing: runs store-service, purchases-service and two
# purchase-api replicas from their jars, nginx in front of the replicas with the compose
# configuration (deploy/nginx/nginx.conf, only the addresses changed), a paced 256-store load
# with the load client's retries OFF, and mid-run restarts each replica in turn (SIGTERM, wait
# for it to exit, start it again, wait until it is ready). Then the load client's exactly-once
# verify. Passes only with 0 failed requests and verify passing. Logs in runs/rolling-<time>/.
#
# What keeps it at 0: purchase-api drains on SIGTERM (every request it holds is answered, see
# docs/architecture.md, "purchase-api: what a 201 and a 503 mean"); nginx passes a request the stopping
# replica refuses (closed port, kept-alive connection closed unanswered) to the other one, a
# POST only when it carries an Idempotency-Key, whose purchase id makes the resend the same
# purchase (the load client always sends one; deploy/nginx/nginx.conf says why). On EKS the
# chart's preStop drain call and ALB readiness gate do the same (helm/README.md, "Rollouts").
#
# Usage: scripts/rolling-restart.sh [options]
#   --stores N          stores (default 256)
#   --rate R            purchases/s in total, every store open from the start (default 500)
#   --duration SECONDS  length of the load (default 90); both restarts must end within it
#   --restart-after S   seconds into the load before the first restart (default 15)
#   --run-dir DIR       folder for logs and results (default runs/rolling-<UTC time>)
#   -h, --help          this help
# Exit status: 0 passed; 99 a request failed; 1 anything else failed.
# Environment: LB_PORT (nginx, 8080), API_PORT and API_MANAGEMENT_PORT (replica 1, 8180 and
#   9180; replica 2 at +REPLICA_PORT_STEP, 100), STORE_PORT, PURCHASES_PORT, STORE_MANAGEMENT_PORT,
#   PURCHASES_MANAGEMENT_PORT (8081, 8082, 9081, 9082), NGINX_IMAGE (compose's default;
#   scripts/images.sh --print names a local one), and what scripts/run-local.sh reads (MYSQL_URL,
#   API_IDEMPOTENCY_REDIS_URL, RABBITMQ_VHOST, ...).
set -euo pipefail

SCRIPT_NAME=rolling-restart
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

stores=256
rate=500
duration=90
restart_after=15
run_dir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --stores) stores="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --restart-after) restart_after="$2"; shift 2 ;;
    --run-dir) run_dir="$2"; shift 2 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 1 ;;
  esac
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUN_DIR="${run_dir:-$ROOT/runs/rolling-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$RUN_DIR"
RUN_DIR="$(cd "$RUN_DIR" && pwd)"
JAVA_HOME="$("$ROOT/scripts/find-jdk.sh")"
export JAVA_HOME
JAVA="$JAVA_HOME/bin/java"
LB_PORT="${LB_PORT:-8080}"
API_PORT="${API_PORT:-8180}"
API_MANAGEMENT_PORT="${API_MANAGEMENT_PORT:-9180}"
REPLICA_PORT_STEP="${REPLICA_PORT_STEP:-100}"
NGINX_IMAGE="${NGINX_IMAGE:-nginxinc/nginx-unprivileged:1.28.0-alpine}"
NGINX_CONTAINER="rolling-restart-nginx-$$"
# shellcheck source=lib/platform.sh
source "$ROOT/scripts/lib/platform.sh"

REPLICAS=(purchase-api-1 purchase-api-2)
replica_port() { echo $((API_PORT + $1 * REPLICA_PORT_STEP)); }
replica_management_port() { echo $((API_MANAGEMENT_PORT + $1 * REPLICA_PORT_STEP)); }
replica_pids=()
nginx_started=false

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [[ "$nginx_started" == true ]]; then
    docker logs "$NGINX_CONTAINER" >"$RUN_DIR/nginx.log" 2>&1 || true
    docker rm -f "$NGINX_CONTAINER" >/dev/null 2>&1 || true
  fi
  stop_started
  log "logs and results in $RUN_DIR"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# nginx as compose runs it: deploy/nginx/nginx.conf with the replicas' local addresses for
# compose's DNS name, on the host network.
start_nginx() {
  local conf="$RUN_DIR/nginx.conf" servers="" i
  for i in "${!REPLICAS[@]}"; do
    servers+="        server 127.0.0.1:$(replica_port "$i") max_fails=0;\n"
  done
  sed -e "s|^\( *\)server purchase-api:8080 resolve max_fails=0;|${servers%\\n}|" \
      -e "/^ *resolver /d" -e "s|listen 8080;|listen $LB_PORT;|" \
      "$ROOT/deploy/nginx/nginx.conf" >"$conf"
  grep -q "server 127.0.0.1:$(replica_port 1)" "$conf" && grep -q "listen $LB_PORT;" "$conf" \
    || die "deploy/nginx/nginx.conf no longer has the upstream and listen lines this script rewrites"
  chmod 644 "$conf"
  require_free_port "$LB_PORT" nginx
  docker run -d --name "$NGINX_CONTAINER" --network host -v "$conf:/etc/nginx/nginx.conf:ro" "$NGINX_IMAGE" >/dev/null \
    || die "could not start nginx ($NGINX_IMAGE)"
  nginx_started=true
  for ((t = 0; t < 60; t++)); do
    curl -sf "http://127.0.0.1:$LB_PORT/lb-health" >/dev/null 2>&1 && { log "nginx on :$LB_PORT"; return 0; }
    sleep 0.5
  done
  die "nginx did not answer on :$LB_PORT"
}

start_replica() { # $1 = index, $2 = process name
  start_purchase_api "$2" "$(replica_port "$1")" "$(replica_management_port "$1")"
  replica_pids[$1]="${STARTED_PIDS[-1]}"
}

# SIGTERM, wait for the exit, start again, wait until ready: what a rolling update does to a pod.
restart_replica() {
  local i="$1" pid="${replica_pids[$1]}" name="${REPLICAS[$1]}" start t
  start=$(date +%s%N)
  log "$name: SIGTERM (pid $pid)"
  kill -TERM "$pid"
  for ((t = 0; t < 120; t++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -0 "$pid" 2>/dev/null && die "$name did not exit within 60 s of its SIGTERM"
  log "$name exited $(( ($(date +%s%N) - start) / 1000000 )) ms after its SIGTERM; starting it again"
  start_replica "$i" "$name-restarted"
  wait_ready "$name-restarted" "$(replica_management_port "$i")" "${replica_pids[$i]}"
  log "$name is back $(( ($(date +%s%N) - start) / 1000000 )) ms after its SIGTERM"
}

build_if_needed "${SERVICE_MODULES[@]}" load-client tools
"$ROOT/scripts/local-services.sh"
require_free_port "$STORE_PORT" store-service
require_free_port "$PURCHASES_PORT" purchases-service
for i in "${!REPLICAS[@]}"; do
  require_free_port "$(replica_port "$i")" "${REPLICAS[$i]}"
  require_free_port "$(replica_management_port "$i")" "${REPLICAS[$i]}'s management"
done
start_store_service
store_pid="${STARTED_PIDS[-1]}"
start_purchases_service mysql
purchases_pid="${STARTED_PIDS[-1]}"
for i in "${!REPLICAS[@]}"; do start_replica "$i" "${REPLICAS[$i]}"; done
wait_ready store-service "$STORE_MANAGEMENT_PORT" "$store_pid"
wait_ready purchases-service "$PURCHASES_MANAGEMENT_PORT" "$purchases_pid"
for i in "${!REPLICAS[@]}"; do
  wait_ready "${REPLICAS[$i]}" "$(replica_management_port "$i")" "${replica_pids[$i]}"
done
start_nginx
save_pipeline_baseline "$RUN_DIR/counts-before"

client_args=(run --base-url "http://127.0.0.1:$LB_PORT" --max-stores "$stores" --rate "$rate"
  --duration "${duration}s" --all-stores-at-once --retries 0 --threshold 'failed<=0' --progress lines
  --label rolling-restart --out "$RUN_DIR/result.json")
log "load client: ${client_args[*]}"
start_process load-client "$RUN_DIR/load-client.log" "$JAVA" -jar "$(jar_of load-client)" "${client_args[@]}"
client_pid="${STARTED_PIDS[-1]}"
sleep "$restart_after"
for i in "${!REPLICAS[@]}"; do
  kill -0 "$client_pid" 2>/dev/null || die "the load ended before ${REPLICAS[$i]} was restarted; raise --duration"
  restart_replica "$i"
  sleep 3 # the restarted replica takes traffic before the next one stops
done
kill -0 "$client_pid" 2>/dev/null || die "the load ended before the last restart was over; raise --duration"
log "both replicas restarted; the load goes on until its end"
status=0
wait "$client_pid" || status=$?
cat "$RUN_DIR/load-client.log"
[[ $status -eq 0 || $status -eq 99 ]] || die "the load client failed (exit $status); see $RUN_DIR/load-client.log"

check_every_purchase_arrived_once "$RUN_DIR/result.json" "$RUN_DIR/counts-before"
for i in "${!REPLICAS[@]}"; do
  drained="did NOT log its graceful shutdown"
  grep -q 'Graceful shutdown complete' "$RUN_DIR/${REPLICAS[$i]}.log" && drained="drained (graceful shutdown complete)"
  log "${REPLICAS[$i]}: $drained; after its restart it answered $(curl -s \
    "http://127.0.0.1:$(replica_management_port "$i")/actuator/prometheus" | tools metric api_purchases_accepted_total || echo no) purchases 201"
done
docker logs "$NGINX_CONTAINER" >"$RUN_DIR/nginx.log" 2>&1 || true
log "nginx passed to the other replica $(grep -c 'Connection refused' "$RUN_DIR/nginx.log" || true) requests a stopped" \
  "replica's port refused and $(grep -c 'upstream prematurely closed' "$RUN_DIR/nginx.log" || true) keyed POSTs a stopping" \
  "replica closed unanswered (nginx.log)"
if [[ $status -eq 99 ]]; then
  log "FAILED: requests failed during the rolling restart (the load client's summary says which)"
  exit 99
fi
log "PASSED: 0 failed requests through two rolling restarts, every accepted purchase stored and counted once"
