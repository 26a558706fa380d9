#!/usr/bin/env bash
# Measures POST /purchase throughput, latency and CPU per request of purchase-api and of the
# broker, publish-only (no consumers), each run in a fresh vhost of the local RabbitMQ.
set -euo pipefail

usage() {
  cat <<USAGE
Usage: purchase-api/bench/post-bench.sh [--jar PATH]... [--connections 64,256] [--duration 15s]
                                        [--warmup 10s] [--rounds 1] [--jfr DIR] [--auth off|on|both]
                                        [--keyed] [-- ENV=VALUE...]

Starts each purchase-api jar (default: purchase-api/target/purchase-api-0.1.0-SNAPSHOT.jar; give
--jar several times to compare builds side by side, alternating them each round) in a fresh
throw-away vhost of the local RabbitMQ (topology and policies applied by the API itself, no
consumers; deleted afterwards with its messages), warms it up, then runs
  wrk -t1 -c<connections> -d<duration> -s purchase-api/bench/post-purchases.lua
and prints one line per run: requests/s, p50/p99/max, status counts, the 1-minute load average,
the mean purchases per message, and CPU milliseconds per request of the API process and of the broker (utime+stime from
/proc/<pid>/stat over the measured run; the broker's share includes whatever else the shared
broker did meanwhile). Settings after -- are passed to the API's environment (e.g.
API_PUBLISH_PERSISTENT=false). --jfr DIR records a JFR file per run (profile settings).
--auth on runs the API with till authentication (keys for stores 1..1024 issued once into a
temporary folder by scripts/till-keys.sh, the hashes file given as API_AUTH_KEYS_FILE, each request
signed by post-purchases.lua with its store's key); --auth both runs every jar without and with
it, back to back (label suffix -auth), to show the cost of authentication side by side.
--keyed sends a new Idempotency-Key with every request (IDEMPOTENCY_KEYS=1 for the lua script);
give the API its idempotency store after --, e.g. API_IDEMPOTENCY_REDIS_URL=redis://127.0.0.1:6379/5
(a build without one ignores it), and the line also shows the CPU ms per request of the local
redis-server.
Needs wrk, curl, a JDK 21+ (JAVA_HOME or scripts/find-jdk.sh), RabbitMQ with the management
API. Ports: BENCH_PORT (default 18200) for the API, BENCH_MANAGEMENT_PORT (default BENCH_PORT+1)
for its actuator; vhosts are named BENCH_VHOST_PREFIX-<n> (default bench-api).
USAGE
}

jars=() connections=64,256 duration=15s warmup=10s rounds=1 jfr="" auth_mode=off keyed=0 env=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --jar) jars+=("$2"); shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --jfr) jfr="$2"; shift 2 ;;
    --auth) auth_mode="$2"; shift 2 ;;
    --keyed) keyed=1; shift ;;
    --) shift; env=("$@"); break ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
[[ ${#jars[@]} -gt 0 ]] || jars=("$root/purchase-api/target/purchase-api-0.1.0-SNAPSHOT.jar")
java="${JAVA_HOME:-$("$root/scripts/find-jdk.sh")}/bin/java"
# The local broker (scripts/lib/local-broker.sh), started if it is not: the services' RABBITMQ_* settings.
ROOT="$root"
log() { printf '[post-bench] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=../../scripts/lib/local-broker.sh
source "$root/scripts/lib/local-broker.sh"
local_broker_start
management="$RABBITMQ_MANAGEMENT_URL"
auth="${RABBITMQ_USERNAME:-guest}:${RABBITMQ_PASSWORD:-guest}"
port="${BENCH_PORT:-18200}"
management_port="${BENCH_MANAGEMENT_PORT:-$(( port + 1 ))}"
for jar in "${jars[@]}"; do
  [[ -f "$jar" ]] || { echo "no jar $jar: ./mvnw -B -ntp -pl purchase-api -am package -DskipTests" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }
[[ -z "$jfr" ]] || mkdir -p "$jfr"
case "$auth_mode" in off) modes=(off) ;; on) modes=(on) ;; both) modes=(off on) ;; *) usage >&2; exit 2 ;; esac
keys_dir=""
if [[ "$auth_mode" != off ]]; then
  keys_dir=$(mktemp -d /tmp/post-bench-keys.XXXXXX)
  "$root/scripts/till-keys.sh" issue --dir "$keys_dir/keys" --stores "1-${MAX_STORES:-1024}" >/dev/null
fi
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  echo "port $port is already in use (another run?); set BENCH_PORT" >&2; exit 1
fi
if (exec 3<>"/dev/tcp/127.0.0.1/$management_port") 2>/dev/null; then
  echo "port $management_port is already in use (another run?); set BENCH_PORT" >&2; exit 1
fi

tick=$(getconf CLK_TCK)
broker_pid=$(pgrep -o -f beam.smp || true)
[[ -n "$broker_pid" ]] || { echo "no local RabbitMQ (beam.smp) process found" >&2; exit 1; }
redis_pid=$(pgrep -o -x redis-server || true)
# utime + stime of a process, in clock ticks (0 without a process)
cpu_ticks() { if [[ -n "$1" ]]; then awk '{print $14 + $15}' "/proc/$1/stat"; else echo 0; fi; }

app_pid="" vhost=""
finish() {
  cleanup
  [[ -z "$keys_dir" ]] || rm -rf "$keys_dir"
}
cleanup() {
  if [[ -n "$app_pid" ]]; then kill "$app_pid" 2>/dev/null || true; wait "$app_pid" 2>/dev/null || true; fi
  if [[ -n "$vhost" ]]; then curl -fsS -u "$auth" -X DELETE "$management/api/vhosts/$vhost" >/dev/null || true; fi
  app_pid="" vhost=""
}
trap finish EXIT

run() {
  local jar="$1" label="$2" round="$3" conns="$4" mode="$5"
  local auth_env=() till_keys=""
  if [[ "$mode" == on ]]; then
    label="$label-auth"
    auth_env=(API_AUTH_ENABLED=true API_AUTH_KEYS_FILE="$keys_dir/keys/till-key-hashes.txt")
    till_keys="$keys_dir/keys/till-keys.txt"
  fi
  vhost="${BENCH_VHOST_PREFIX:-bench-api}-$RANDOM"
  curl -fsS -u "$auth" -X PUT "$management/api/vhosts/$vhost" >/dev/null
  curl -fsS -u "$auth" -X PUT -H 'content-type: application/json' \
    -d '{"configure":".*","write":".*","read":".*"}' "$management/api/permissions/$vhost/${auth%%:*}" >/dev/null
  local jvm=()
  [[ -z "$jfr" ]] || jvm=("-XX:StartFlightRecording=filename=$jfr/$label-c$conns-r$round.jfr,settings=profile")
  env RABBITMQ_VHOST="$vhost" SERVER_PORT="$port" MANAGEMENT_PORT="$management_port" LOG_FORMAT= "${auth_env[@]}" "${env[@]}" \
    "$java" "${jvm[@]}" -jar "$jar" >"/tmp/purchase-api-bench-$label-c$conns-$round.log" 2>&1 &
  app_pid=$!
  for _ in $(seq 1 120); do
    curl -fs "http://127.0.0.1:$management_port/actuator/health/readiness" >/dev/null 2>&1 && break
    sleep 1
  done
  # the plugin creates the shard queues asynchronously after the policy
  sleep 3
  TILL_KEYS="$till_keys" IDEMPOTENCY_KEYS=$keyed wrk -t1 -c"$conns" -d"$warmup" -s "$here/post-purchases.lua" "http://127.0.0.1:$port" >/dev/null
  local out app_before broker_before redis_before app_after broker_after redis_after requests
  app_before=$(cpu_ticks "$app_pid") broker_before=$(cpu_ticks "$broker_pid") redis_before=$(cpu_ticks "$redis_pid")
  out="$(TILL_KEYS="$till_keys" IDEMPOTENCY_KEYS=$keyed wrk -t1 -c"$conns" -d"$duration" --latency -s "$here/post-purchases.lua" "http://127.0.0.1:$port")"
  app_after=$(cpu_ticks "$app_pid") broker_after=$(cpu_ticks "$broker_pid") redis_after=$(cpu_ticks "$redis_pid")
  requests=$(grep -Eo '^ *[0-9]+ requests' <<<"$out" | awk '{print $1}')
  # mean purchases per message over the whole life of the process (warm-up included)
  batch=$(curl -fs "http://127.0.0.1:$management_port/actuator/prometheus" | awk '
    /^api_purchases_batch_size_purchases_sum/ {s=$2} /^api_purchases_batch_size_purchases_count/ {c=$2}
    END {if (c > 0) printf "%.1f", s/c; else print "n/a"}')
  local keys=""
  [[ $keyed -eq 0 ]] || keys=", redis $(awk -v t="$(( redis_after - redis_before ))" -v k="$tick" -v n="$requests" 'BEGIN{printf "%.3f", t*1000/k/n}')"
  printf '%s%s c%s round %s: %s req/s; %s; %s; load %s; purchases/message %s; CPU ms/req: api %s, broker %s%s\n' \
    "$label" "$([[ $keyed -eq 0 ]] || echo ' keyed')" "$conns" "$round" \
    "$(grep 'Requests/sec' <<<"$out" | awk '{print $2}')" \
    "$(grep '^p50' <<<"$out")" "$(grep '^status' <<<"$out" | tr '\n' ' ')" "$(cut -d' ' -f1 /proc/loadavg)" "$batch" \
    "$(awk -v t="$(( app_after - app_before ))" -v k="$tick" -v n="$requests" 'BEGIN{printf "%.3f", t*1000/k/n}')" \
    "$(awk -v t="$(( broker_after - broker_before ))" -v k="$tick" -v n="$requests" 'BEGIN{printf "%.3f", t*1000/k/n}')" \
    "$keys"
  cleanup
}

for round in $(seq 1 "$rounds"); do
  for conns in ${connections//,/ }; do
    for jar in "${jars[@]}"; do
      for mode in "${modes[@]}"; do
        run "$jar" "$(basename "$jar" .jar)" "$round" "$conns" "$mode"
      done
    done
  done
done
