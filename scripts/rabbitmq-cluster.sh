#!/usr/bin/env bash
# A real three-node RabbitMQ cluster on this machine, beside (not joined to) the local broker, with
# the plugins rabbitmq_sharding, rabbitmq_management and rabbitmq_prometheus, nodes 2 and 3 joined
# to node 1, each node's AMQP, management and Prometheus port on 127.0.0.1. For the
# replicated-shard tests, `scripts/run-local.sh --cluster` and the cluster faults of
# scripts/faults.sh. Two runtimes, the same commands (CLUSTER_RUNTIME):
#   containers  (default) nodes rabbit@NAME-1..3 as containers of the project's RabbitMQ
#               (RABBITMQ_IMAGE, else scripts/lib/rabbitmq-containers.sh's choice), separate hosts:
#               each on Docker's default bridge, through which its published ports reach it, and
#               on an internal network NAME-nodes that carries all inter-node traffic (Erlang
#               distribution); disconnecting a node from NAME-nodes partitions it from the others
#               while its clients on this machine stay connected to it. Needs a Docker engine.
#               Every deprecated feature is denied on them as in the tests, but the management
#               metrics the benchmark reads.
#   processes   nodes sm1@localhost..sm3@localhost as local processes of the machine's own
#               rabbitmq-server (Debian's package: 3.10 on bookworm), each with its own distribution
#               port and data folder; needs root and that package (scripts/local-services.sh
#               installs it with LOCAL_BROKER=host); nodes run as user rabbitmq
# The metadata store is RabbitMQ's own: Khepri, the only one from 4.3, a Raft system like the
# quorum queues, so a node cut off from the majority stops serving by itself (its clients are
# disconnected and fail over to the majority); 3.10 nodes (processes) keep Mnesia and are given
# cluster_partition_handling = pause_minority for the same effect. Both run with
# net_ticktime = 10 (a silent peer is seen as down within 7.5 to 12.5 s instead of a minute).
#
# Usage: scripts/rabbitmq-cluster.sh COMMAND [N]
#   start          start the three nodes (those not running) and join them; idempotent
#   stop           stop every node and delete the cluster's data (the local broker is untouched)
#   status         each node's ports and whether it runs (running; minority: runs but cut off
#                  from the majority, so it serves nothing; down)
#   addresses      the AMQP addresses, comma separated (RABBITMQ_ADDRESSES for the services)
#   management-url [N]  node N's management API (default 1)
#   node-name N    node N's Erlang node name
#   most-leaders   the node number (1..3) leading most quorum queues (asked of a running node)
#   pid N          the process id of node N's Erlang VM
#   stop-node N    stop node N (1..3) abruptly, as a node loss (kill -9 of its Erlang VM; a
#                  container: docker kill)
#   start-node N   start node N again; it rejoins the cluster with its data
#   partition N    containers: cut node N off the other nodes (docker network disconnect of
#                  NAME-nodes); its published ports stay reachable from this machine
#   heal N         containers: connect node N to the other nodes again
#   is-serving N   exit 0 when node N serves clients (runs and reaches the cluster's majority)
#   logs DIR       copy every node's log into DIR (node-N.log)
#   -h, --help     this help
# Ports (node N = 1..3, O = CLUSTER_PORT_OFFSET, default 0): AMQP 5680+O+N, management
# 15680+O+N, Prometheus 15690+O+N, distribution (processes) 25680+O+N.
# Environment: CLUSTER_RUNTIME (containers or processes), CLUSTER_PORT_OFFSET; containers:
# CLUSTER_NAME (default supermarket-cluster: containers NAME-1..3, network NAME-nodes),
# RABBITMQ_IMAGE (default the official image of the project's version where it can be had, else
# the local stand-in of scripts/images.sh, built when missing); processes: CLUSTER_DIR (default
# /var/lib/rabbitmq/supermarket-cluster).
set -euo pipefail

if [[ "${1:-}" == "" || "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

RUNTIME="${CLUSTER_RUNTIME:-containers}"
PORT_OFFSET="${CLUSTER_PORT_OFFSET:-0}"
CLUSTER_DIR="${CLUSTER_DIR:-/var/lib/rabbitmq/supermarket-cluster}"
NAME="${CLUSTER_NAME:-supermarket-cluster}"
NETWORK="$NAME-nodes"
NODES=(1 2 3)
# What both runtimes add to a node's configuration (see above); the 3.10 processes also pause a
# minority (4.3 accepts the key and ignores it, so it is not given there).
TICK_SETTINGS='net_ticktime = 10'
PROCESS_SETTINGS="$TICK_SETTINGS
cluster_partition_handling = pause_minority"

log() { printf '[rabbitmq-cluster] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=lib/rabbitmq-node.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rabbitmq-node.sh"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/rabbitmq-containers.sh
source "$ROOT/scripts/lib/rabbitmq-containers.sh"
# The tools jar reads the nodes' JSON (built by the scripts that start a cluster, or by
# ./mvnw -B -ntp -pl tools -am package -DskipTests).
tools() {
  local jar="$ROOT/tools/target/tools-0.1.0-SNAPSHOT-exec.jar"
  [[ -f "$jar" ]] || die "$jar is missing: ./mvnw -B -ntp -pl tools -am package -DskipTests"
  "${JAVA:-$("$ROOT/scripts/find-jdk.sh")/bin/java}" -jar "$jar" "$@"
}

amqp_port() { echo $((5680 + PORT_OFFSET + $1)); }
management_port() { echo $((15680 + PORT_OFFSET + $1)); }
prometheus_port() { echo $((15690 + PORT_OFFSET + $1)); }
dist_port() { echo $((25680 + PORT_OFFSET + $1)); }
container() { echo "$NAME-$1"; }

case "$RUNTIME" in
  processes)
    node_name() { echo "sm$1@localhost"; }
    ctl() { local n="$1"; shift; rmq_ctl "$(node_name "$n")" "$@"; }
    running() { rmq_running "$(node_name "$1")"; }
    ;;
  containers)
    node_name() { echo "rabbit@$(container "$1")"; }
    ctl() { local n="$1"; shift; docker exec "$(container "$n")" rabbitmqctl -q "$@"; }
    running() { ctl "$1" ping >/dev/null 2>&1; }
    ;;
  *) die "CLUSTER_RUNTIME is processes or containers, not $RUNTIME" ;;
esac

# A node that runs may still not serve: cut off from the majority, a 4.x node keeps running and
# keeps its clients, but its publishes to quorum queues are nacked (Khepri and the queues need a
# majority); a 3.x node (Mnesia, the processes runtime) is paused by pause_minority, its rabbit
# application stopped. Asked so: on 4.x whether the node reaches a majority of the cluster's
# members over Erlang distribution (a cut-off peer drops out within net_ticktime; the metadata
# store's own view is no help, a cut-off leader goes on answering reads for a while), on 3.x
# whether the rabbit application runs; 20 s at most, for a node that does not answer at all.
serving() {
  local check='case code:is_loaded(khepri) of
    false -> rabbit:is_running();
    _ ->
      Members = rabbit_nodes:list_members(),
      Reachable = [N || N <- Members, N =:= node() orelse lists:member(N, nodes())],
      rabbit:is_running() andalso 2 * length(Reachable) > length(Members)
  end.'
  local answer
  if [[ "$RUNTIME" == containers ]]; then
    answer="$(timeout 20 docker exec "$(container "$1")" rabbitmqctl -q eval "$check" 2>/dev/null || true)"
  else
    answer="$(timeout 20 rabbitmqctl -q -n "$(node_name "$1")" eval "$check" 2>/dev/null || true)"
  fi
  [[ "$(tr -d '\r\n' <<<"$answer")" == true ]]
}

start_process_node() {
  local n="$1"
  RMQ_EXTRA_CONF="$PROCESS_SETTINGS" rmq_start_node "$(node_name "$n")" "$CLUSTER_DIR/sm$n" \
    "$(amqp_port "$n")" "$(management_port "$n")" "$(dist_port "$n")" "$(prometheus_port "$n")"
}

# Creates node N's container (published ports on 127.0.0.1, its configuration copied in, then
# joined to NETWORK), or starts the existing one after a stop-node; waits until the node is up.
start_container_node() {
  local n="$1" c; c="$(container "$n")"
  if running "$n"; then
    log "$(node_name "$n") already runs"
    return 0
  fi
  if ! docker container inspect "$c" >/dev/null 2>&1; then
    local image
    image="$(rabbitmq_image)" || die "no RabbitMQ image (scripts/images.sh rabbitmq builds the local one)"
    log "creating $c from $image (AMQP $(amqp_port "$n"), management $(management_port "$n"))"
    docker create --name "$c" --hostname "$c" --label supermarket.cluster="$NAME" \
      -e RABBITMQ_ERLANG_COOKIE="$(cookie)" -e RABBITMQ_DEFAULT_USER=guest -e RABBITMQ_DEFAULT_PASS=guest \
      -p "127.0.0.1:$(amqp_port "$n"):5672" -p "127.0.0.1:$(management_port "$n"):15672" \
      -p "127.0.0.1:$(prometheus_port "$n"):15692" "$image" >/dev/null
    rabbitmq_container_config "$image" "$TICK_SETTINGS" | docker cp - "$c:/etc/rabbitmq"
    docker network connect "$NETWORK" "$c"
  fi
  log "starting $c"
  docker start "$c" >/dev/null
  for ((t = 0; t < 120; t++)); do
    running "$n" && break
    sleep 0.5
  done
  ctl "$n" await_startup --timeout 110 || die "$(node_name "$n") did not start; see docker logs $c"
}

# The cluster's Erlang cookie: the one a node's existing container has, else a new one.
cookie() {
  local n found=""
  for n in "${NODES[@]}"; do
    found="$(docker container inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$(container "$n")" 2>/dev/null \
      | sed -n 's/^RABBITMQ_ERLANG_COOKIE=//p')"
    [[ -z "$found" ]] || break
  done
  echo "${found:-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
}

start_node() {
  if [[ "$RUNTIME" == containers ]]; then start_container_node "$1"; else start_process_node "$1"; fi
}

join() {
  local n="$1"
  if ctl "$n" cluster_status --formatter json 2>/dev/null | grep -q "\"$(node_name 1)\""; then
    return 0
  fi
  log "joining $(node_name "$n") to $(node_name 1)"
  ctl "$n" stop_app
  ctl "$n" join_cluster "$(node_name 1)"
  ctl "$n" start_app
}

node_number() { # $1 = node number argument: checked
  [[ "${1:-}" =~ ^[123]$ ]] || die "a node number is 1, 2 or 3, not '${1:-}'"
  echo "$1"
}

needs_containers() {
  [[ "$RUNTIME" == containers ]] || die "$1 needs CLUSTER_RUNTIME=containers (local processes share one network)"
}

cmd="$1"
case "$cmd" in
  start)
    if [[ "$RUNTIME" == containers ]]; then
      docker info >/dev/null 2>&1 || die "no Docker engine answers (scripts/docker-engine.sh starts one)"
      docker network inspect "$NETWORK" >/dev/null 2>&1 \
        || docker network create --internal --label supermarket.cluster="$NAME" "$NETWORK" >/dev/null
    else
      command -v rabbitmq-server >/dev/null || die "rabbitmq-server is not installed (scripts/local-services.sh installs it)"
      [[ $EUID -eq 0 ]] || die "run as root: the nodes run as user rabbitmq"
    fi
    for n in "${NODES[@]}"; do start_node "$n"; done
    for n in 2 3; do join "$n"; done
    log "cluster up: $(ctl 1 cluster_status --formatter json | tools running-nodes)"
    ;;
  stop)
    if [[ "$RUNTIME" == containers ]]; then
      for n in 3 2 1; do
        if docker container inspect "$(container "$n")" >/dev/null 2>&1; then
          log "removing $(container "$n")"
          docker rm -f -v "$(container "$n")" >/dev/null
        fi
      done
      docker network rm "$NETWORK" >/dev/null 2>&1 || true
      log "stopped; containers and their data removed"
    else
      for n in 3 2 1; do
        if running "$n"; then log "stopping $(node_name "$n")"; ctl "$n" stop || true; fi
      done
      rm -rf "$CLUSTER_DIR"
      log "stopped; data deleted ($CLUSTER_DIR)"
    fi
    ;;
  status)
    for n in "${NODES[@]}"; do
      state=down
      if running "$n"; then state=minority; serving "$n" && state=running; fi
      echo "$(node_name "$n") amqp=$(amqp_port "$n") management=$(management_port "$n") prometheus=$(prometheus_port "$n") $state"
    done
    ;;
  addresses)
    echo "127.0.0.1:$(amqp_port 1),127.0.0.1:$(amqp_port 2),127.0.0.1:$(amqp_port 3)"
    ;;
  management-url)
    echo "http://127.0.0.1:$(management_port "$(node_number "${2:-1}")")"
    ;;
  node-name)
    node_name "$(node_number "${2:-}")"
    ;;
  most-leaders)
    for n in "${NODES[@]}"; do
      curl -sf -m 5 -u guest:guest "http://127.0.0.1:$(management_port "$n")/api/queues?columns=type,leader" \
        | tools most-leaders --node "$(node_name 1)" --node "$(node_name 2)" --node "$(node_name 3)" && exit 0
    done
    die "no running node could tell"
    ;;
  pid)
    n="$(node_number "${2:-}")"
    if [[ "$RUNTIME" == containers ]]; then
      docker top "$(container "$n")" -eo pid,comm | awk '$2 == "beam.smp" { print $1; found = 1; exit } END { exit !found }' \
        || die "$(node_name "$n") runs no Erlang VM"
    else
      cat "$CLUSTER_DIR/sm$n/pid" 2>/dev/null || die "no pid file for $(node_name "$n")"
    fi
    ;;
  stop-node)
    n="$(node_number "${2:-}")"
    if [[ "$RUNTIME" == containers ]]; then
      log "killing $(container "$n") (docker kill)"
      docker kill "$(container "$n")" >/dev/null
    else
      pid="$(cat "$CLUSTER_DIR/sm$n/pid" 2>/dev/null)" || die "no pid file for $(node_name "$n")"
      log "killing $(node_name "$n") (pid $pid) with SIGKILL"
      kill -9 "$pid"
    fi
    ;;
  start-node)
    n="$(node_number "${2:-}")"
    start_node "$n"
    ;;
  partition)
    needs_containers partition
    n="$(node_number "${2:-}")"
    log "partitioning $(node_name "$n"): disconnected from $NETWORK"
    docker network disconnect "$NETWORK" "$(container "$n")"
    ;;
  heal)
    needs_containers heal
    n="$(node_number "${2:-}")"
    log "healing $(node_name "$n"): connected to $NETWORK again"
    docker network connect "$NETWORK" "$(container "$n")"
    ;;
  logs)
    dir="${2:?logs needs a folder}"
    mkdir -p "$dir"
    for n in "${NODES[@]}"; do
      if [[ "$RUNTIME" == containers ]]; then
        { docker logs "$(container "$n")" 2>&1; docker exec "$(container "$n")" sh -c 'cat /var/log/rabbitmq/*.log 2>/dev/null'; } \
          >"$dir/node-$n.log" || true
      else
        cat "$CLUSTER_DIR/sm$n/log/"*.log >"$dir/node-$n.log" 2>/dev/null || true
      fi
    done
    ;;
  is-serving)
    serving "$(node_number "${2:-}")"
    ;;
  *) die "unknown command: $cmd (see --help)" ;;
esac
