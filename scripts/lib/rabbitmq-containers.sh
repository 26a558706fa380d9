# Shared by the scripts that run RabbitMQ as containers (the local broker of
# scripts/lib/local-broker.sh, scripts/rabbitmq-cluster.sh; sourced, not run): which image, the
# configuration every such node gets, its Erlang VM's process id.
# Expects: ROOT (repository root), and a Docker engine by the time a function is called.

# shellcheck source=rabbitmq-version.sh
source "$ROOT/scripts/lib/rabbitmq-version.sh" || exit 1

# The RabbitMQ image to run: RABBITMQ_IMAGE when set; else the official image of the project's
# version when the engine has it or can pull it; else the local stand-in of that version
# (scripts/images.sh, built here when missing, about two minutes the first time).
rabbitmq_image() {
  if [[ -n "${RABBITMQ_IMAGE:-}" ]]; then
    echo "$RABBITMQ_IMAGE"
  elif docker image inspect "$RABBITMQ_OFFICIAL_IMAGE" >/dev/null 2>&1 \
      || docker pull -q "$RABBITMQ_OFFICIAL_IMAGE" >/dev/null 2>&1; then
    echo "$RABBITMQ_OFFICIAL_IMAGE"
  else
    local standin="supermarket-local/rabbitmq:$RABBITMQ_VERSION"
    docker image inspect "$standin" >/dev/null 2>&1 || "$ROOT/scripts/images.sh" rabbitmq >&2 || return 1
    echo "$standin"
  fi
}

# rabbitmq_container_config IMAGE [CONF]: a node's configuration as a tar stream for
# `docker cp - CONTAINER:/etc/rabbitmq`: enabled_plugins (management, Prometheus, sharding) and
# conf.d/20-supermarket.conf: guest may log in from the host; on RabbitMQ 4 (IMAGE's version)
# every deprecated feature denied as in the tests
# (broker/src/test/resources/rabbitmq/deny-deprecated-features.conf) but
# management_metrics_collection, whose message_stats scripts/benchmark.sh's shard balance reads
# (3.x knows no deprecated features, and refuses a configuration that names them); and CONF
# (lines of rabbitmq.conf, default none).
rabbitmq_container_config() {
  local image="$1" dir version
  version="$(docker run --rm --entrypoint rabbitmqctl "$image" version 2>/dev/null | tail -n 1)"
  [[ "$version" =~ ^[0-9]+\. ]] || { echo "cannot tell the RabbitMQ version of $image" >&2; return 1; }
  dir="$(mktemp -d)"
  mkdir "$dir/conf.d"
  {
    echo 'loopback_users = none'
    if ((${version%%.*} >= 4)); then
      grep -v -e '^#' -e 'management_metrics_collection' "$ROOT/broker/src/test/resources/rabbitmq/deny-deprecated-features.conf"
    fi
    [[ -z "${2:-}" ]] || printf '%s\n' "$2"
  } >"$dir/conf.d/20-supermarket.conf"
  echo '[rabbitmq_management,rabbitmq_prometheus,rabbitmq_sharding].' >"$dir/enabled_plugins"
  chmod 755 "$dir/conf.d" && chmod 644 "$dir/conf.d/20-supermarket.conf" "$dir/enabled_plugins"
  tar -C "$dir" --owner=0 --group=0 -c conf.d enabled_plugins
  rm -rf "$dir"
}

# The process id, on this machine, of the Erlang VM in the container $1; fails when none runs.
container_beam_pid() {
  docker top "$1" -eo pid,comm 2>/dev/null | awk '$2 == "beam.smp" { print $1; found = 1; exit } END { exit !found }'
}
