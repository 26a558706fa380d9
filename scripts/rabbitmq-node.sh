#!/usr/bin/env bash
# A single private RabbitMQ node on this machine, beside (not joined to) the machine's broker and
# the cluster of scripts/rabbitmq-cluster.sh, on the ports it is given, with the plugins
# rabbitmq_sharding and rabbitmq_management (and rabbitmq_prometheus when given a port for it). For
# the tests that need a node-wide fault (a memory
# alarm blocks every publishing connection of a node) without touching the shared broker. Needs
# root and the Debian rabbitmq-server package (scripts/local-services.sh installs it); the node
# runs as user rabbitmq.
#
# Usage: scripts/rabbitmq-node.sh COMMAND NAME [PORTS]
#   start NAME AMQP_PORT MANAGEMENT_PORT DIST_PORT [PROMETHEUS_PORT]
#                                                    start node NAME@localhost and wait until it is up
#   stop NAME                                        stop it and delete its data
#   -h, --help                                       this help
# Environment: NODES_DIR (default /var/lib/rabbitmq/supermarket-nodes), the nodes' data folders.
set -euo pipefail

if [[ "${1:-}" == "" || "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

NODES_DIR="${NODES_DIR:-/var/lib/rabbitmq/supermarket-nodes}"

log() { printf '[rabbitmq-node] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=lib/rabbitmq-node.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/rabbitmq-node.sh"

cmd="$1"
name="${2:?$cmd needs a node name (letters, digits, dashes)}"
[[ "$name" =~ ^[A-Za-z0-9-]+$ ]] || die "a node name is letters, digits and dashes: $name"
node="$name@localhost"
case "$cmd" in
  start)
    [[ $# -eq 5 || $# -eq 6 ]] || die "start needs NAME AMQP_PORT MANAGEMENT_PORT DIST_PORT [PROMETHEUS_PORT] (see --help)"
    command -v rabbitmq-server >/dev/null || die "rabbitmq-server is not installed (scripts/local-services.sh installs it)"
    [[ $EUID -eq 0 ]] || die "run as root: the node runs as user rabbitmq"
    rmq_start_node "$node" "$NODES_DIR/$name" "$3" "$4" "$5" "${6:-}"
    ;;
  stop)
    if rmq_running "$node"; then log "stopping $node"; rmq_ctl "$node" stop || true; fi
    rm -rf "${NODES_DIR:?}/$name"
    log "stopped; data deleted ($NODES_DIR/$name)"
    ;;
  *) die "unknown command: $cmd (see --help)" ;;
esac
