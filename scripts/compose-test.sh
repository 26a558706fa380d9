#!/usr/bin/env bash
# docker-compose.yml end to end on this machine's Docker engine, with the README's compose
# commands: builds the images (the third-party ones as local stand-ins from scripts/images.sh
# unless --images official), writes a throw-away env file with random passwords, builds our
# images, `up -d`, waits until every service is healthy, checks that our containers run as uid
# 10001 on a read-only root and that two purchase-api replicas run, runs the load client's
# container against nginx (a few stores, seconds), checks that both replicas took purchases,
# runs the load client's exactly-once `verify` from inside the compose network, asks the GETs
# and the sales page through nginx, then `down -v` and checks that no container, network or volume of the project
# is left. Each step has a timeout and prints its time; the project is torn down even on
# failure or Ctrl-C (its logs are kept in the run folder). Exits non-zero on any failure.
#
# Usage: scripts/compose-test.sh [options]
#   --profile mysql|dynamodb  the store of purchases-service (default mysql)
#   --images local|official   local: the stand-ins scripts/images.sh builds (no registry needed;
#                             needs root); official: the files' defaults, pulled (default local)
#   --project NAME            compose project name (default supermarket-test-<profile>)
#   --lb-port PORT            host port of nginx (default 18080)
#   --management-port PORT    host port of RabbitMQ's management UI, on 127.0.0.1 (default 25690)
#   --stores N                stores of the load run (default 4)
#   --skip-package            use the jars already built (scripts/test.sh has just built them)
#   --run-dir DIR             logs and results (default runs/compose-<profile>)
#   -h, --help                this help
# Compose: `docker compose` (v2) when installed, else docker-compose 1.29 with --compatibility
# (which honours deploy.replicas and the resource limits as v2 does).
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

profile=mysql
images=local
project=""
lb_port=18080
management_port=25690
stores=4
package=true
run_dir=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --profile) profile="$2"; shift 2 ;;
    --images) images="$2"; shift 2 ;;
    --project) project="$2"; shift 2 ;;
    --lb-port) lb_port="$2"; shift 2 ;;
    --management-port) management_port="$2"; shift 2 ;;
    --stores) stores="$2"; shift 2 ;;
    --skip-package) package=false; shift ;;
    --run-dir) run_dir="$2"; shift 2 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$profile" == mysql || "$profile" == dynamodb ]] || { echo "--profile mysql|dynamodb" >&2; exit 2; }
[[ "$images" == local || "$images" == official ]] || { echo "--images local|official" >&2; exit 2; }

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
SCRIPT_NAME=compose-test
RUN_DIR="${run_dir:-runs/compose-$profile}"
project="${project:-supermarket-test-$profile}"
purchases_service=purchases-service
[[ "$profile" == dynamodb ]] && purchases_service=purchases-service-dynamodb
rm -rf "$RUN_DIR" && mkdir -p "$RUN_DIR"
ENV_FILE="$RUN_DIR/compose.env"
export JAVA_HOME="${JAVA_HOME:-$("$ROOT/scripts/find-jdk.sh")}"
JAVA="$JAVA_HOME/bin/java"
# shellcheck source=lib/platform.sh
source "$ROOT/scripts/lib/platform.sh"

if docker compose version >/dev/null 2>&1; then
  COMPOSE_COMMAND="docker compose"
elif [[ "$(docker-compose version --short 2>/dev/null)" == 1.* ]]; then
  # v1 ignores deploy: (replicas, resource limits) unless asked to translate it.
  COMPOSE_COMMAND="docker-compose --compatibility"
elif command -v docker-compose >/dev/null 2>&1; then
  COMPOSE_COMMAND="docker-compose"
else
  die "neither docker compose (v2) nor docker-compose is installed"
fi
# Our images are built with the legacy builder: BuildKit's frontends cannot be pulled without a registry.
export DOCKER_BUILDKIT=0 COMPOSE_DOCKER_CLI_BUILD=0
export COMPOSE_COMMAND ENV_FILE project profile purchases_service stores lb_port RUN_DIR SCRIPT_NAME ROOT JAVA
# shellcheck disable=SC2086 # COMPOSE_COMMAND is two words for v1
compose() { $COMPOSE_COMMAND --env-file "$ENV_FILE" -p "$project" "$@"; }

# The steps, each a function run by step() in a bash of its own, so that timeout stops it with
# everything it started.

# quietly LOG COMMAND...: COMMAND's output to $RUN_DIR/LOG.log, its end shown if it fails.
quietly() {
  local file="$RUN_DIR/$1.log"; shift
  "$@" >"$file" 2>&1 || { tail -n 40 "$file" >&2; return 1; }
}

# Our images; the load client's is in the profile "load", built only when named.
build_images() {
  quietly build compose build
  quietly build-load-client compose build load-client
}

# Every container of the project healthy (the one-off migrations: exited 0).
wait_healthy() {
  local id state waiting=()
  while true; do
    waiting=()
    for id in $(compose ps -q); do
      state="$(docker inspect -f '{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}} {{.State.ExitCode}}' "$id")"
      case "$state" in
        *" running healthy "*) ;;
        *-migrations[-_]1" exited none 0") ;;
        *" exited "* | *" dead "* | *" unhealthy "*) die "not healthy: $state" ;;
        *) waiting+=("${state%% *}") ;;
      esac
    done
    [[ ${#waiting[@]} -eq 0 ]] && return 0
    sleep 2
  done
}

# Our services as the Helm chart runs them: uid 10001 on a read-only root; two API replicas.
check_containers() {
  local id line api=0
  for id in $(compose ps -q store-service "$purchases_service" purchase-api); do
    line="$(docker inspect -f '{{.Name}} user={{.Config.User}} read-only={{.HostConfig.ReadonlyRootfs}}' "$id")"
    log "  $line"
    [[ "$line" == *" user=10001:10001 read-only=true" ]] || die "not uid 10001 on a read-only root: $line"
    [[ "$line" == *purchase-api* ]] && api=$((api + 1))
  done
  [[ $api -eq 2 ]] || die "$api purchase-api replicas run, not 2"
}

# The README's load run (-T: no terminal here), its results copied out, the container removed.
load_run() {
  compose run -T --name "$project-load-run" load-client run --base-url http://lb:8080 --max-stores "$stores" \
    --purchases-per-hour 50 --label "compose-$profile" --out /results/compose.json
  docker cp "$project-load-run:/results/." "$RUN_DIR/"
  docker rm "$project-load-run" >/dev/null
}

# nginx spread the purchases over both replicas: each one's POST count (its actuator, asked from
# the lb container, which has wget) is above zero.
check_replicas_served() {
  local id address posts
  for id in $(compose ps -q purchase-api); do
    address="$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$id")"
    posts="$(compose exec -T lb wget -q -O - "http://$address:9080/actuator/prometheus" \
      | tools metric http_server_requests_seconds_count --label method=POST)" || posts=0
    log "  $(docker inspect -f '{{.Name}}' "$id"): $posts POSTs"
    [[ "$posts" -gt 0 ]] || die "replica $id took no purchase"
  done
}

# The load client's exactly-once check, from inside the compose network.
verify_exactly_once() {
  compose run -T --rm load-client verify /results/compose.json \
    --purchases-url "http://$purchases_service:8082" \
    --purchases-metrics-url "http://$purchases_service:9082/actuator/prometheus" \
    --store-metrics-url http://store-service:9081/actuator/prometheus | tee "$RUN_DIR/verify.txt"
}

gets() {
  query_both_gets "http://127.0.0.1:$lb_port" 60 || die "the GETs through nginx must answer with items and stores"
  curl -sf "http://127.0.0.1:$lb_port/sales/" | grep -q '<script type="module"' \
    || die "the sales page is not served through nginx at /sales/"
  log "the sales page answers through nginx: http://127.0.0.1:$lb_port/sales/"
}

# down -v, then nothing of the project is left.
down() {
  quietly down compose down -v --remove-orphans
  local left
  left="$(project_leftovers)"
  [[ -z "$left" ]] || die "left after down -v: $left"
}

project_leftovers() {
  local filter="label=com.docker.compose.project=$project"
  docker ps -aq --filter "$filter"
  docker network ls -q --filter "$filter"
  docker volume ls -q --filter "$filter"
}
export -f compose log die quietly query_both_gets tools jar_of build_images wait_healthy check_containers load_run check_replicas_served \
  verify_exactly_once gets down project_leftovers

SUMMARY=()
STEP_PID=""
# step NAME SECONDS COMMAND...: runs COMMAND within SECONDS, prints and records how long it took.
# In the background, waited for, so that Ctrl-C is handled at once (see the traps below).
step() {
  local name="$1" seconds="$2" started=$SECONDS status=0; shift 2
  log "$name (at most ${seconds}s)"
  timeout "$seconds" bash -c 'set -euo pipefail; "$@"' "$name" "$@" &
  STEP_PID=$!
  wait "$STEP_PID" || status=$?
  STEP_PID=""
  local took=$((SECONDS - started))
  [[ $status -ne 124 ]] || die "$name timed out after ${seconds}s"
  [[ $status -eq 0 ]] || die "$name failed (exit $status) after ${took}s"
  SUMMARY+=("$(printf '%-8s %4d s' "$name" "$took")")
  log "$name: ok in ${took}s"
}

# Nothing to tear down until this run may have started something of the project.
torn_down=true
teardown() {
  local status=$?
  if [[ "$torn_down" != true ]]; then
    log "tearing down after a failure; the services' logs are in $RUN_DIR/compose.log"
    compose ps >"$RUN_DIR/ps.txt" 2>&1 || true
    compose logs --no-color --tail=300 >"$RUN_DIR/compose.log" 2>&1 || true
    docker rm -f "$project-load-run" >/dev/null 2>&1 || true
    timeout 180 bash -c 'compose down -v --remove-orphans' >/dev/null 2>&1 || true
  fi
  rm -f "$ENV_FILE"
  exit "$status"
}
trap teardown EXIT
# timeout passes the signal on to the step and everything it started.
stop_step() {
  [[ -z "$STEP_PID" ]] || { kill -TERM "$STEP_PID" 2>/dev/null; wait "$STEP_PID" 2>/dev/null; }
  exit 130
}
trap stop_step INT TERM

# --- the images and the jars --------------------------------------------------------------
step engine 300 scripts/docker-engine.sh
image_variables=()
if [[ "$images" == local ]]; then
  step images 1800 scripts/images.sh
  mapfile -t image_variables <runs/images.env
fi
if [[ "$package" == true ]]; then
  step jars 900 ./mvnw -B -ntp -q package -DskipTests
fi

# A throw-away env file in place of the README's .env: random passwords for this run only,
# readable by this user only, deleted at the end.
password() { tr -dc 'A-Za-z0-9' </dev/urandom | head -c 24 || true; }
(
  umask 077
  {
    echo "COMPOSE_PROFILES=$profile"
    for name in RABBITMQ_PURCHASE_API_PASSWORD RABBITMQ_STORE_SERVICE_PASSWORD RABBITMQ_PURCHASES_SERVICE_PASSWORD \
                MYSQL_ROOT_PASSWORD MYSQL_PASSWORD MYSQL_PURCHASES_PASSWORD; do
      echo "$name=$(password)"
    done
    echo "LB_PORT=$lb_port"
    echo "RABBITMQ_MANAGEMENT_PORT=$management_port"
    printf '%s\n' "${image_variables[@]}"
  } >"$ENV_FILE"
)
require_free_port "$lb_port" "nginx (--lb-port)"
require_free_port "$management_port" "RabbitMQ's management UI (--management-port)"
[[ -z "$(project_leftovers)" ]] || die "compose project $project exists already; remove it first"
torn_down=false
log "$COMPOSE_COMMAND -p $project, profile $profile, images $images, nginx on :$lb_port"

# --- the run --------------------------------------------------------------------------------
step build 900 build_images
# up -d starts each container once what it depends on is healthy (or, migrations, done).
step up 600 quietly up compose up -d
step healthy 300 wait_healthy
compose ps
step runtime 30 check_containers
step load 180 load_run
step spread 30 check_replicas_served
step verify 240 verify_exactly_once
step gets 60 gets
step down 180 down
torn_down=true

log "passed: profile $profile, $COMPOSE_COMMAND"
printf '  %s\n' "${SUMMARY[@]}" >&2
