# The broker of the local runs (scripts/local-services.sh starts it; run-local.sh, benchmark.sh,
# faults.sh, soak.sh and rolling-restart.sh run the platform on it; sourced, not run). Two kinds,
# chosen by LOCAL_BROKER:
#   container  (default) the project's RabbitMQ (scripts/lib/rabbitmq-version.sh) as a container,
#              LOCAL_BROKER_NAME (default supermarket-rabbitmq), published on 127.0.0.1: AMQP
#              LOCAL_BROKER_AMQP_PORT (5673), management LOCAL_BROKER_MANAGEMENT_PORT (15673),
#              Prometheus LOCAL_BROKER_PROMETHEUS_PORT (15679); plugins and settings as the
#              cluster's nodes (scripts/lib/rabbitmq-containers.sh). Like the machine's services it
#              outlives a run; `docker rm -f -v supermarket-rabbitmq` removes it and its data.
#              RABBITMQ_IMAGE runs another version (e.g. supermarket-local/rabbitmq:3.10.8 of
#              scripts/images.sh): a broker container of another image is replaced (its data
#              with it), so runs on two versions can alternate.
#   host       the machine's own rabbitmq-server on 5672/15672 (Debian's package, 3.10 on bookworm),
#              e.g. to measure the platform on it beside the project's version.
# Sets RABBITMQ_HOST, RABBITMQ_PORT and RABBITMQ_MANAGEMENT_URL (the services' settings) to it
# unless they are set.
# Expects: ROOT (repository root), log and die functions.

# shellcheck source=rabbitmq-containers.sh
source "$ROOT/scripts/lib/rabbitmq-containers.sh"

LOCAL_BROKER="${LOCAL_BROKER:-container}"
LOCAL_BROKER_NAME="${LOCAL_BROKER_NAME:-supermarket-rabbitmq}"
case "$LOCAL_BROKER" in
  container)
    LOCAL_BROKER_AMQP_PORT="${LOCAL_BROKER_AMQP_PORT:-5673}"
    LOCAL_BROKER_MANAGEMENT_PORT="${LOCAL_BROKER_MANAGEMENT_PORT:-15673}"
    LOCAL_BROKER_PROMETHEUS_PORT="${LOCAL_BROKER_PROMETHEUS_PORT:-15679}"
    ;;
  host)
    LOCAL_BROKER_AMQP_PORT=5672
    LOCAL_BROKER_MANAGEMENT_PORT=15672
    ;;
  *) die "LOCAL_BROKER is container or host, not '$LOCAL_BROKER'" ;;
esac
export RABBITMQ_HOST="${RABBITMQ_HOST:-127.0.0.1}" RABBITMQ_PORT="${RABBITMQ_PORT:-$LOCAL_BROKER_AMQP_PORT}"
export RABBITMQ_MANAGEMENT_URL="${RABBITMQ_MANAGEMENT_URL:-http://127.0.0.1:$LOCAL_BROKER_MANAGEMENT_PORT}"

# rabbitmqctl ARGS... against the local broker (in its container, or the machine's own).
broker_ctl() {
  if [[ "$LOCAL_BROKER" == container ]]; then docker exec "$LOCAL_BROKER_NAME" rabbitmqctl "$@"; else rabbitmqctl "$@"; fi
}

# The process id, on this machine, of the local broker's Erlang VM (for CPU accounting and pinning).
broker_pid() {
  if [[ "$LOCAL_BROKER" == container ]]; then
    container_beam_pid "$LOCAL_BROKER_NAME"
  else
    rabbitmqctl -q eval 'list_to_integer(os:getpid()).' 2>/dev/null | tr -d '\r\n'
  fi
}

# The process id of Docker's proxy for the container broker's AMQP port (it relays every byte the
# services send the broker, so its CPU is the broker's too); nothing for the host kind.
broker_proxy_pid() {
  [[ "$LOCAL_BROKER" == container ]] || return 1
  pgrep -o -f -- "docker-proxy .*-host-port $LOCAL_BROKER_AMQP_PORT " 2>/dev/null
}

# The local broker's RabbitMQ version, e.g. 4.3.6.
broker_version() {
  broker_ctl -q eval 'rabbit_misc:version().' 2>/dev/null | tr -d '"\r\n'
}

# Starts the local broker unless it runs and waits until its management API answers (the
# container kind: created from scripts/lib/rabbitmq-containers.sh's image and configuration on
# the first start, started again if stopped; the host kind: the machine's rabbitmq-server, which
# scripts/local-services.sh installs and starts itself).
local_broker_start() {
  [[ "$LOCAL_BROKER" == container ]] || return 0
  docker info >/dev/null 2>&1 || "$ROOT/scripts/docker-engine.sh" \
    || die "no Docker engine for the broker container; LOCAL_BROKER=host runs on the machine's rabbitmq-server instead"
  local image running
  image="$(rabbitmq_image)" || die "no RabbitMQ image (scripts/images.sh rabbitmq builds the local one)"
  running="$(docker container inspect -f '{{.Config.Image}}' "$LOCAL_BROKER_NAME" 2>/dev/null || true)"
  if [[ -n "$running" && "$running" != "$image" ]]; then
    log "replacing the broker container $LOCAL_BROKER_NAME ($running) with one of $image"
    docker rm -f -v "$LOCAL_BROKER_NAME" >/dev/null
    running=""
  fi
  if [[ -z "$running" ]]; then
    log "creating the broker container $LOCAL_BROKER_NAME from $image (AMQP $LOCAL_BROKER_AMQP_PORT, management $LOCAL_BROKER_MANAGEMENT_PORT)"
    docker create --name "$LOCAL_BROKER_NAME" --hostname "$LOCAL_BROKER_NAME" --label supermarket.broker=local \
      -p "127.0.0.1:$LOCAL_BROKER_AMQP_PORT:5672" -p "127.0.0.1:$LOCAL_BROKER_MANAGEMENT_PORT:15672" \
      -p "127.0.0.1:$LOCAL_BROKER_PROMETHEUS_PORT:15692" "$image" >/dev/null
    rabbitmq_container_config "$image" | docker cp - "$LOCAL_BROKER_NAME:/etc/rabbitmq"
  fi
  if [[ "$(docker container inspect -f '{{.State.Running}}' "$LOCAL_BROKER_NAME")" != true ]]; then
    log "starting the broker container $LOCAL_BROKER_NAME"
    docker start "$LOCAL_BROKER_NAME" >/dev/null
  fi
  local t
  for ((t = 0; t < 240; t++)); do
    curl -sf -m 2 -u guest:guest "$RABBITMQ_MANAGEMENT_URL/api/overview" 2>/dev/null | grep -q '"x-modulus-hash"' && return 0
    sleep 0.5
  done
  die "the broker container $LOCAL_BROKER_NAME did not answer at $RABBITMQ_MANAGEMENT_URL within 2 minutes (docker logs $LOCAL_BROKER_NAME)"
}
