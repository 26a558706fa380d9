#!/usr/bin/env bash
# A real three-node RabbitMQ cluster on this machine, beside (not joined to) the machine's own
# broker: nodes sm1@localhost, sm2@localhost, sm3@localhost, each with its own AMQP, management,
# Prometheus and distribution port and its own data folder, the plugins rabbitmq_sharding,
# rabbitmq_management and rabbitmq_prometheus enabled, sm2 and sm3 joined to sm1. For the
# replicated-shard tests and `scripts/run-local.sh --cluster`. Needs root and the Debian
# rabbitmq-server package (scripts/local-services.sh installs it); nodes run as user rabbitmq.
#
# Usage: scripts/rabbitmq-cluster.sh COMMAND [N]
#   start        start the three nodes (those not running) and join them; idempotent
#   stop         stop every node and delete the cluster's data (the machine's broker is untouched)
#   status       each node's ports and whether it runs
#   addresses    the AMQP addresses, comma separated (RABBITMQ_ADDRESSES for the services)
#   most-leaders the node number (1..3) leading most quorum queues (asked of a running node)
#   stop-node N  stop node N (1..3) abruptly, as a node loss (kill -9 of its Erlang VM)
#   start-node N start node N again; it rejoins the cluster with its data
#   -h, --help   this help
# Ports (node N = 1..3): AMQP 5680+N, management 15680+N, Prometheus 15690+N, distribution
# 25680+N. Environment: CLUSTER_DIR (default /var/lib/rabbitmq/supermarket-cluster).
set -euo pipefail

if [[ "${1:-}" == "" || "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

CLUSTER_DIR="${CLUSTER_DIR:-/var/lib/rabbitmq/supermarket-cluster}"
NODES=(1 2 3)

log() { printf '[rabbitmq-cluster] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=lib/rabbitmq-node.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rabbitmq-node.sh"

node_name() { echo "sm$1@localhost"; }
amqp_port() { echo $((5680 + $1)); }
ctl() { local n="$1"; shift; rmq_ctl "$(node_name "$n")" "$@"; }
running() { rmq_running "$(node_name "$1")"; }

start_node() {
  local n="$1"
  rmq_start_node "$(node_name "$n")" "$CLUSTER_DIR/sm$n" "$(amqp_port "$n")" $((15680 + n)) $((25680 + n)) $((15690 + n))
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

cmd="$1"
case "$cmd" in
  start)
    command -v rabbitmq-server >/dev/null || die "rabbitmq-server is not installed (scripts/local-services.sh installs it)"
    [[ $EUID -eq 0 ]] || die "run as root: the nodes run as user rabbitmq"
    for n in "${NODES[@]}"; do start_node "$n"; done
    for n in 2 3; do join "$n"; done
    log "cluster up: $(ctl 1 cluster_status --formatter json | python3 -c 'import json,sys; print(", ".join(json.load(sys.stdin)["running_nodes"]))')"
    ;;
  stop)
    for n in 3 2 1; do
      if running "$n"; then log "stopping $(node_name "$n")"; ctl "$n" stop || true; fi
    done
    rm -rf "$CLUSTER_DIR"
    log "stopped; data deleted ($CLUSTER_DIR)"
    ;;
  status)
    for n in "${NODES[@]}"; do
      state=down; running "$n" && state=running
      echo "$(node_name "$n") amqp=$(amqp_port "$n") management=$((15680 + n)) prometheus=$((15690 + n)) dist=$((25680 + n)) $state"
    done
    ;;
  addresses)
    echo "127.0.0.1:$(amqp_port 1),127.0.0.1:$(amqp_port 2),127.0.0.1:$(amqp_port 3)"
    ;;
  most-leaders)
    for n in "${NODES[@]}"; do
      running "$n" || continue
      curl -sf -u guest:guest "http://127.0.0.1:$((15680 + n))/api/queues?columns=type,leader" | python3 -c '
import collections, json, sys
leaders = collections.Counter(q["leader"] for q in json.load(sys.stdin) if q.get("type") == "quorum" and "leader" in q)
if not leaders: sys.exit("no quorum queue")
print(leaders.most_common(1)[0][0].split("@")[0][2:])' && exit 0
    done
    die "no running node could tell"
    ;;
  stop-node)
    n="${2:?stop-node needs a node number 1..3}"
    pid="$(cat "$CLUSTER_DIR/sm$n/pid" 2>/dev/null)" || die "no pid file for $(node_name "$n")"
    log "killing $(node_name "$n") (pid $pid) with SIGKILL"
    kill -9 "$pid"
    ;;
  start-node)
    n="${2:?start-node needs a node number 1..3}"
    start_node "$n"
    ;;
  *) die "unknown command: $cmd (see --help)" ;;
esac
