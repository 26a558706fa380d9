#!/usr/bin/env bash
# Measures POSTs/s with publisher confirms for both publish modes (one publish to the ingress
# fanout vs. one to each sharded exchange), alternating the modes to spread machine noise.
set -euo pipefail

usage() {
  cat <<USAGE
Usage: purchase-api/bench/publish-modes.sh [--rounds N] [--duration 20s] [--warmup 10s] [--connections 64] [--persistent true|false]

Starts purchase-api (target/purchase-api-0.1.0-SNAPSHOT.jar, build it first with
./mvnw -pl purchase-api -am package -DskipTests) once per mode and round, each time in a fresh
throw-away vhost of the local RabbitMQ (deleted afterwards, with its messages), warms it up,
then runs wrk with post-purchases.lua (random stores 1..1024, 5 items) and prints requests/s,
p50/p99 latency and the status counts per run. Needs wrk (apt-get install wrk), curl, a JDK 21+
(JAVA_HOME or scripts/find-jdk.sh), and RabbitMQ with the management API on localhost.
USAGE
}

rounds=2 duration=20s warmup=10s connections=64 persistent=true
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --persistent) persistent="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
jar="$root/purchase-api/target/purchase-api-0.1.0-SNAPSHOT.jar"
java="${JAVA_HOME:-$("$root/scripts/find-jdk.sh")}/bin/java"
management="${RABBITMQ_MANAGEMENT_URL:-http://localhost:15672}"
auth="${RABBITMQ_USERNAME:-guest}:${RABBITMQ_PASSWORD:-guest}"
port="${BENCH_PORT:-28480}"
[[ -f "$jar" ]] || { echo "build the jar first: ./mvnw -pl purchase-api -am package -DskipTests" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }

tick=$(getconf CLK_TCK)
broker_pid=$(pgrep -o -f beam.smp || true)
[[ -n "$broker_pid" ]] || { echo "no local RabbitMQ (beam.smp) process found" >&2; exit 1; }
# utime + stime of a process, in clock ticks
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

app_pid="" vhost=""
cleanup() {
  if [[ -n "$app_pid" ]]; then kill "$app_pid" 2>/dev/null || true; wait "$app_pid" 2>/dev/null || true; fi
  if [[ -n "$vhost" ]]; then curl -fsS -u "$auth" -X DELETE "$management/api/vhosts/$vhost" >/dev/null || true; fi
  app_pid="" vhost=""
}
trap cleanup EXIT

run() {
  local mode="$1" round="$2"
  vhost="bench-api-$mode-$RANDOM"
  curl -fsS -u "$auth" -X PUT "$management/api/vhosts/$vhost" >/dev/null
  curl -fsS -u "$auth" -X PUT -H 'content-type: application/json' \
    -d '{"configure":".*","write":".*","read":".*"}' "$management/api/permissions/$vhost/${auth%%:*}" >/dev/null
  RABBITMQ_VHOST="$vhost" SERVER_PORT="$port" PUBLISH_MODE="$mode" PUBLISH_PERSISTENT="$persistent" LOG_FORMAT= \
    "$java" -jar "$jar" >"/tmp/purchase-api-bench-$mode-$round.log" 2>&1 &
  app_pid=$!
  for _ in $(seq 1 120); do
    curl -fs "http://127.0.0.1:$port/actuator/health/readiness" >/dev/null 2>&1 && break
    sleep 1
  done
  # the plugin creates the shard queues asynchronously after the policy
  sleep 3
  wrk -t2 -c"$connections" -d"$warmup" -s "$here/post-purchases.lua" "http://127.0.0.1:$port" >/dev/null
  local out app_before broker_before app_after broker_after requests
  app_before=$(cpu_ticks "$app_pid") broker_before=$(cpu_ticks "$broker_pid")
  out="$(wrk -t2 -c"$connections" -d"$duration" -s "$here/post-purchases.lua" "http://127.0.0.1:$port")"
  app_after=$(cpu_ticks "$app_pid") broker_after=$(cpu_ticks "$broker_pid")
  requests=$(grep -Eo '^ *[0-9]+ requests' <<<"$out" | awk '{print $1}')
  # CPU per request is steadier than requests/s on a machine shared with other work; the
  # broker's share includes whatever else the shared broker did meanwhile.
  printf '%s round %s persistent=%s: %s req/s; %s; %s; CPU ms/1000 req: api %s, broker %s\n' "$mode" "$round" "$persistent" \
    "$(grep 'Requests/sec' <<<"$out" | awk '{print $2}')" \
    "$(grep '^p50' <<<"$out")" "$(grep '^status' <<<"$out" | tr '\n' ' ')" \
    "$(( (app_after - app_before) * 1000 * 1000 / tick / requests ))" \
    "$(( (broker_after - broker_before) * 1000 * 1000 / tick / requests ))"
  cleanup
}

for round in $(seq 1 "$rounds"); do
  run FANOUT "$round"
  run TWICE "$round"
done
