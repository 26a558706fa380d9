# Shared by scripts/faults.sh and scripts/soak.sh (sourced, not run): the platform's links through
# fault proxies (the tools jar's fault-proxy, one process per link, steered over a control port),
# the run's throw-away RabbitMQ vhost and MySQL database, inject (one fault, while load runs) and
# restore_servers (sets back what db-read-only and broker-alarm change on the local servers;
# idempotent, so a script calls it whenever a run ends).
# Expects, by the time a function is called: scripts/lib/platform.sh sourced, ROOT, RUN_DIR, JAVA,
# NAME (names the database user of db-read-only). inject reads the fault parameters below, which
# a script's options may change after sourcing this file.
# Environment: FAULTS_PROXY_PORT (default 17670): the proxies listen on it and the next five ports
# (broker link, its control port, database link, its control port, idempotency store link, its
# control port); PROXY_JAVA_OPTS; FAULTS_REDIS_DB (default 0), the idempotency store's Redis database.

# The fault parameters: seconds a killed service stays down, a link stays cut or frozen (or a
# server setting changed, or a cluster node down), loss or latency lasts; the fraction of chunks
# held by *-loss; the milliseconds added by *-latency.
down_for=3
outage_for=8
degrade_for=10
loss=0.05
latency_ms=50

PROXY_PORT="${FAULTS_PROXY_PORT:-17670}"
BROKER_PROXY_PORT="$PROXY_PORT"
BROKER_CONTROL_PORT=$((PROXY_PORT + 1))
DB_PROXY_PORT=$((PROXY_PORT + 2))
DB_CONTROL_PORT=$((PROXY_PORT + 3))
REDIS_PROXY_PORT=$((PROXY_PORT + 4))
REDIS_CONTROL_PORT=$((PROXY_PORT + 5))
# A small JVM for each proxy: it only copies bytes.
PROXY_JAVA_OPTS="${PROXY_JAVA_OPTS:--Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}"
# MariaDB's greeting now comes through the proxy's JVM, which a busy machine may not schedule
# within the default 3 s at purchases-service's start.
export MYSQL_CONNECTION_TIMEOUT_MS="${MYSQL_CONNECTION_TIMEOUT_MS:-10000}"

VHOST=""
DATABASE=""
DB_USER=""
root_sql() { mysql -uroot -h127.0.0.1 -e "$1"; }
drop_sandbox() {
  [[ -z "$VHOST" ]] || broker_ctl -q delete_vhost "$VHOST" >/dev/null 2>&1 || true
  [[ -z "$DATABASE" ]] || root_sql "DROP DATABASE IF EXISTS \`$DATABASE\`" >/dev/null 2>&1 || true
  [[ -z "$DB_USER" ]] || root_sql "DROP USER IF EXISTS '$DB_USER'@'%'" >/dev/null 2>&1 || true
  VHOST="" DATABASE="" DB_USER=""
}

# $1 = vhost, $2 = database: what an interrupted earlier run left under these names goes first
# (drop_sandbox forgets the names), then the vhost is created for the services (RABBITMQ_VHOST);
# purchases-service creates the database.
open_sandbox() {
  VHOST="$1" DATABASE="$2"
  drop_sandbox
  VHOST="$1" DATABASE="$2"
  broker_ctl -q add_vhost "$VHOST" >/dev/null
  broker_ctl -q set_permissions -p "$VHOST" guest ".*" ".*" ".*" >/dev/null
  export RABBITMQ_VHOST="$VHOST"
}

# read_only spares users with SUPER, such as root: for db-read-only purchases-service writes as a
# user of the run's own with the rights it needs (SELECT, INSERT), root only migrates. Creates
# DATABASE first.
restrict_database_user() {
  DB_USER="h_${NAME//-/_}"
  local password; password="$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  root_sql "CREATE DATABASE \`$DATABASE\`; DROP USER IF EXISTS '$DB_USER'@'%';
    CREATE USER '$DB_USER'@'%' IDENTIFIED BY '$password';
    GRANT SELECT, INSERT ON \`$DATABASE\`.* TO '$DB_USER'@'%'"
  export MYSQL_USERNAME="$DB_USER" MYSQL_PASSWORD="$password" MYSQL_MIGRATION_USERNAME=root MYSQL_MIGRATION_PASSWORD=
}

# The settings db-read-only and broker-alarm change on the local servers, set back at the
# end of the fault and whenever a run ends (restore_servers is idempotent).
BROKER_WATERMARK=""
restore_servers() {
  root_sql "SET GLOBAL read_only = OFF" >/dev/null 2>&1 || true
  if [[ -n "$BROKER_WATERMARK" ]]; then
    broker_ctl -q set_vm_memory_high_watermark "$BROKER_WATERMARK" >/dev/null 2>&1 || true
    BROKER_WATERMARK=""
  fi
}

pid_of() { # $1 = name given to start_process: its latest pid
  local i pid=""
  for ((i = 0; i < ${#STARTED_NAMES[@]}; i++)); do
    [[ "${STARTED_NAMES[$i]}" == "$1" ]] && pid="${STARTED_PIDS[$i]}"
  done
  echo "$pid"
}

# $1 = name, $2 = listen port, $3 = target host:port, $4 = control port: a fault-proxy process.
start_proxy() {
  require_free_port "$2" "$1"
  require_free_port "$4" "$1's control"
  # shellcheck disable=SC2086 # options are words
  start_process "$1" "$RUN_DIR/$1.log" "$JAVA" $PROXY_JAVA_OPTS -jar "$(jar_of tools)" fault-proxy "$2" "$3" "$4"
  wait_until "$1" 30 port_in_use "$4"
}

# The services reach the local broker through the broker link's proxy ...
proxy_broker_link() {
  start_proxy broker-proxy "$BROKER_PROXY_PORT" "127.0.0.1:$LOCAL_BROKER_AMQP_PORT" "$BROKER_CONTROL_PORT"
  unset RABBITMQ_ADDRESSES
  export RABBITMQ_HOST=127.0.0.1 RABBITMQ_PORT="$BROKER_PROXY_PORT"
}

# ... the database (DATABASE) through the database link's proxy ...
proxy_database_link() {
  start_proxy db-proxy "$DB_PROXY_PORT" 127.0.0.1:3306 "$DB_CONTROL_PORT"
  MYSQL_URL="jdbc:mysql://127.0.0.1:$DB_PROXY_PORT/$DATABASE?createDatabaseIfNotExist=true&connectTimeout=10000"
}

# ... and the idempotency store ($1 = its port, default the machine's Redis) through its link's proxy.
proxy_redis_link() {
  start_proxy redis-proxy "$REDIS_PROXY_PORT" "127.0.0.1:${1:-6379}" "$REDIS_CONTROL_PORT"
  export API_IDEMPOTENCY_REDIS_URL="redis://127.0.0.1:$REDIS_PROXY_PORT/${FAULTS_REDIS_DB:-0}"
}

# $1 = control port, rest = one command (see tools fault-proxy --help): sends it, logs the proxy's answer.
proxy_ctl() {
  local port="$1" answer; shift
  answer="$(exec 3<>"/dev/tcp/127.0.0.1/$port" && echo "$*" >&3 && read -r -t 10 line <&3 && echo "$line")" \
    || die "the fault proxy on control port $port did not answer '$*'"
  log "fault proxy :$port: $* -> $answer"
  [[ "$answer" == ok* ]] || die "the fault proxy refused '$*': $answer"
}

# $1 = file. Until killed: both GETs through the API every 0.2 s, each answer's HTTP status (000:
# no answer within 5 s) a line of the file.
probe_gets() {
  local path
  while :; do
    for path in /items/store/1 /items/top10/1; do
      curl -s -o /dev/null -w '%{http_code}\n' --max-time 5 "http://127.0.0.1:$API_PORT$path" >>"$1" || true
    done
    sleep 0.2
  done
}

# $1 = fault. Strikes while the load client runs; returns once the platform is whole again.
inject() {
  local service pid port node control=""
  case "$1" in
    broker-*) control="$BROKER_CONTROL_PORT" ;;
    db-*) control="$DB_CONTROL_PORT" ;;
    redis-*) control="$REDIS_CONTROL_PORT" ;;
  esac
  case "$1" in
    none | late-retry) return 0 ;;
    kill-store-copy | lose-store-disk)
      # Copy 1 of partition 0 (the platform runs with STORE_COPIES=2); copy 0 answers every GET meanwhile.
      service="$(store_name 0 1)"
      pid="$(pid_of "$service")"
      log "fault: kill -9 $service (pid $pid), down for ${outage_for}s"
      kill -KILL "$pid"
      wait "$pid" 2>/dev/null || true
      if [[ "$1" == lose-store-disk ]]; then
        log "fault: $service's state directory $(store_state_dir 0 1) deleted while it is down"
        rm -rf "$(store_state_dir 0 1)"
      fi
      sleep "$outage_for"
      mv "$RUN_DIR/$service.log" "$RUN_DIR/$service-killed-$(date +%s).log"
      start_store_service 0 1
      wait_ready "$service" "$(store_management_port 0 1)" "${STARTED_PIDS[-1]}"
      log "fault: $service is back$([[ "$1" != lose-store-disk ]] || echo ", rebuilt: $(grep -ho 'Rebuilt the empty state directory.*' "$RUN_DIR/$service.log" | cut -c1-200)")"
      ;;
    kill-*)
      service="${1#kill-}"
      pid="$(pid_of "$service")"
      log "fault: kill -9 $service (pid $pid)"
      kill -KILL "$pid"
      wait "$pid" 2>/dev/null || true
      sleep "$down_for"
      mv "$RUN_DIR/$service.log" "$RUN_DIR/$service-killed-$(date +%s).log"
      case "$service" in
        purchase-api) start_purchase_api; port="$API_MANAGEMENT_PORT" ;;
        store-service) start_store_service; port="$STORE_MANAGEMENT_PORT" ;;
        purchases-service) start_purchases_service mysql; port="$PURCHASES_MANAGEMENT_PORT" ;;
      esac
      wait_ready "$service" "$port" "${STARTED_PIDS[-1]}"
      log "fault: $service is back"
      ;;
    broker-restart | db-outage)
      log "fault: every ${1%%-*} link cut, new ones refused for ${outage_for}s"
      proxy_ctl "$control" cut "$outage_for"
      sleep "$outage_for"
      ;;
    node-loss)
      node="$("$CLUSTER" most-leaders 2>/dev/null || echo 1)"
      cluster_connections "$RUN_DIR/node-loss-connections.txt"
      log "fault: cluster node $node killed, down for ${outage_for}s"
      "$CLUSTER" stop-node "$node"
      sleep "$outage_for"
      "$CLUSTER" start-node "$node" >>"$RUN_DIR/cluster.log" 2>&1 \
        || die "cluster node $node did not start again; see $RUN_DIR/cluster.log"
      log "fault: node $node is back"
      ;;
    node-partition) partition_a_node ;;
    db-read-only)
      log "fault: the database refuses every write (read_only) for ${outage_for}s"
      root_sql "SET GLOBAL read_only = ON"
      sleep "$outage_for"
      restore_servers
      ;;
    broker-alarm)
      # The broker's own setting, read back so that exactly it is restored (e.g. 0.4).
      BROKER_WATERMARK="$(broker_ctl -q eval 'vm_memory_monitor:get_vm_memory_high_watermark().' | tr -d '\r\n')"
      [[ "$BROKER_WATERMARK" =~ ^[0-9.]+$ ]] || die "cannot read the broker's memory watermark (got '$BROKER_WATERMARK')"
      log "fault: a memory alarm on the broker (watermark $BROKER_WATERMARK -> 0.000001) for ${outage_for}s"
      broker_ctl -q set_vm_memory_high_watermark 0.000001 >/dev/null
      sleep "$outage_for"
      restore_servers
      ;;
    redis-freeze)
      log "fault: the idempotency store's link frozen for ${outage_for}s"
      proxy_ctl "$control" freeze
      sleep "$outage_for"
      proxy_ctl "$control" restore
      ;;
    *-loss | *-latency)
      if [[ "$1" == *-loss ]]; then proxy_ctl "$control" loss "$loss"; else proxy_ctl "$control" latency "$latency_ms"; fi
      sleep "$degrade_for"
      proxy_ctl "$control" restore
      ;;
  esac
}

# The clients of every cluster node ($1 = file): the connections the cluster lists, by node,
# with their client-side name and port (which service a port is: the services' logs).
cluster_connections() {
  local n
  for n in 1 2 3; do
    curl -sf -m 5 -u guest:guest "$("$CLUSTER" management-url "$n")/api/connections?columns=node,name,user_provided_name" \
      | tools connections >"$1" && return 0
  done
  log "no cluster node listed its connections"
}

# node-partition: the node leading most quorum queues is cut off the other two (its clients on
# this machine still reach it). It stops serving once it sees no majority, after net_ticktime: on
# RabbitMQ 4 its clients stay connected and its publishes to quorum queues are nacked (3.x nodes
# pause, pause_minority); it is kept apart
# --outage-for s more, then healed, and waited for until it serves again. Timeline in
# $RUN_DIR/node-partition-timeline.txt.
partition_a_node() {
  local node t0 clients stopped="" serving="" timeline="$RUN_DIR/node-partition-timeline.txt"
  node="$("$CLUSTER" most-leaders 2>/dev/null || echo 1)"
  cluster_connections "$RUN_DIR/node-partition-connections.txt"
  log "fault: cluster node $node partitioned from the other two (its clients stay connected to it)"
  t0=$SECONDS
  clients="$(grep -c "^$("$CLUSTER" node-name "$node") " "$RUN_DIR/node-partition-connections.txt" || true)"
  echo "$(date -u +%T.%3N) node $node partitioned, $clients client connections on it" >"$timeline"
  "$CLUSTER" partition "$node"
  until [[ -n "$stopped" || $((SECONDS - t0)) -ge 60 ]]; do
    "$CLUSTER" is-serving "$node" || stopped=$((SECONDS - t0))
    sleep 0.5
  done
  if [[ -z "$stopped" ]]; then
    "$CLUSTER" heal "$node" || true
    die "cluster node $node went on serving 60 s into the partition (it should see no majority)"
  fi
  echo "$(date -u +%T.%3N) node $node stopped serving (no majority), ${stopped}s into the partition" >>"$timeline"
  log "fault: node $node stopped serving after ${stopped}s; kept apart ${outage_for}s more"
  sleep "$outage_for"
  "$CLUSTER" heal "$node"
  echo "$(date -u +%T.%3N) node $node healed" >>"$timeline"
  t0=$SECONDS
  until [[ -n "$serving" || $((SECONDS - t0)) -ge 120 ]]; do
    "$CLUSTER" is-serving "$node" && serving=$((SECONDS - t0))
    sleep 0.5
  done
  [[ -n "$serving" ]] || die "cluster node $node did not serve again within 120 s of the heal"
  echo "$(date -u +%T.%3N) node $node serving again, ${serving}s after the heal" >>"$timeline"
  log "fault: node $node serves again (${serving}s after the heal)"
}

# $1 = a cluster fault, after its run (the services still up): what the clients saw, from the
# fault's timeline and connections list, the services' metrics, the load client's summary and
# the services' logs.
what_the_clients_saw() {
  local fault="$1" service
  echo "# What the clients saw: $fault"
  if [[ -f "$RUN_DIR/$fault-timeline.txt" ]]; then
    echo; echo "## Timeline (UTC)"; cat "$RUN_DIR/$fault-timeline.txt"
  fi
  echo; echo "## Broker connections when the fault struck (node, connection, client name)"
  cat "$RUN_DIR/$fault-connections.txt" 2>/dev/null || true
  echo; echo "## purchase-api: purchases answered 503, by reason (api_purchases_refused_total)"
  curl -sf "http://127.0.0.1:$API_MANAGEMENT_PORT/actuator/prometheus" | tools metric api_purchases_refused_total --lines --positive || true
  echo; echo "## Consumers: purchases delivered again after they were stored or counted"
  curl -sf "http://127.0.0.1:$PURCHASES_MANAGEMENT_PORT/actuator/prometheus" | tools metric purchases_duplicates_total --lines || true
  curl -sf "http://127.0.0.1:$STORE_MANAGEMENT_PORT/actuator/prometheus" | tools metric store_purchases_duplicates_total --lines || true
  echo; echo "## Load client"
  grep -iE 'fail|retr|status|error' "$RUN_DIR/$fault.txt" | tail -n 12 || true
  echo; echo "## The services' broker events, warnings and errors (count, first and last time, the line;"
  echo "## grouped once connection ids, consumer tags and shard numbers are masked)"
  for service in purchase-api store-service purchases-service; do
    echo "### $service"
    cat "$RUN_DIR/$service"*.log 2>/dev/null | tools log-summary || true
  done
}
