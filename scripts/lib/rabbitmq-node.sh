# Shared by scripts/rabbitmq-cluster.sh and scripts/rabbitmq-node.sh (sourced, not run): starts one
# RabbitMQ node beside the machine's own broker, as user rabbitmq, with its own ports, config,
# plugins and data folder. Needs root and the Debian rabbitmq-server package.
# Expects: log and die functions.

rmq_ctl() { local node="$1"; shift; rabbitmqctl -q -n "$node" "$@"; }
rmq_running() { rmq_ctl "$1" ping >/dev/null 2>&1; }

# rmq_start_node NODE DIR AMQP_PORT MANAGEMENT_PORT DIST_PORT [PROMETHEUS_PORT]
# Starts NODE (unless it runs) with its data, config and logs in DIR and waits until it is up.
# The system's /etc/rabbitmq/rabbitmq.conf fixes the listener to 5672, so each node gets a config
# file of its own. The Prometheus plugin only when PROMETHEUS_PORT is given. RMQ_EXTRA_CONF (lines
# of rabbitmq.conf, default none) is added to the node's config.
rmq_start_node() {
  local node="$1" dir="$2" amqp="$3" management="$4" dist="$5" prometheus="${6:-}"
  if rmq_running "$node"; then
    log "$node already runs"
    return 0
  fi
  mkdir -p "$dir/mnesia" "$dir/log"
  cat >"$dir/rabbitmq.conf" <<CONF
listeners.tcp.local = 127.0.0.1:$amqp
management.tcp.ip = 127.0.0.1
management.tcp.port = $management
loopback_users = none
${RMQ_EXTRA_CONF:-}
CONF
  local plugins="rabbitmq_management,rabbitmq_sharding"
  if [[ -n "$prometheus" ]]; then
    printf 'prometheus.tcp.ip = 127.0.0.1\nprometheus.tcp.port = %s\n' "$prometheus" >>"$dir/rabbitmq.conf"
    plugins="$plugins,rabbitmq_prometheus"
  fi
  echo "[$plugins]." >"$dir/enabled_plugins"
  chown -R rabbitmq:rabbitmq "$dir"
  log "starting $node (AMQP $amqp, management $management)"
  runuser -u rabbitmq -- env RABBITMQ_NODENAME="$node" RABBITMQ_DIST_PORT="$dist" \
    RABBITMQ_MNESIA_BASE="$dir/mnesia" RABBITMQ_LOG_BASE="$dir/log" RABBITMQ_PID_FILE="$dir/pid" \
    RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf" \
    rabbitmq-server -detached
  # The node registers with epmd only after a moment; until then await_startup fails at once.
  for ((t = 0; t < 120; t++)); do
    rmq_running "$node" && break
    sleep 0.5
  done
  rmq_ctl "$node" await_startup --timeout 110 || die "$node did not start; see $dir/log"
}
