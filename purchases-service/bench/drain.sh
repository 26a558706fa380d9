#!/usr/bin/env bash
# Drain benchmark of purchases-service: see --help.
set -euo pipefail

usage() {
  cat <<USAGE
Usage: purchases-service/bench/drain.sh [--purchases N] [--batch B]

Publishes N purchases of 5 items (default 150000) as PurchaseBatch messages of B purchases
(default 20) into a throw-away vhost of the local RabbitMQ, then starts purchases-service (MySQL
profile, a throw-away database on the local MariaDB) and times how fast it stores them all.
Prints purchases/s and the CPU per purchase of the service and of MariaDB (from /proc), then
deletes the vhost and the database. The first start only prepares the broker (topology,
policies, shard queues), so the publish has somewhere to go.

Build first: ./mvnw -B -ntp -pl purchases-service -am package -DskipTests
Environment: BENCH_VHOST (bench-drain), BENCH_DATABASE (purchases_bench_drain), BENCH_PORT (28482,
the lookups), BENCH_MANAGEMENT_PORT (28483, actuator), JAVA_HOME (else scripts/find-jdk.sh).
USAGE
}

purchases=150000 batch=20
while [[ $# -gt 0 ]]; do
  case "$1" in
    --purchases) purchases="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
java="${JAVA_HOME:-$("$root/scripts/find-jdk.sh")}/bin/java"
jar="$root/purchases-service/target/purchases-service-0.1.0-SNAPSHOT.jar"
vhost="${BENCH_VHOST:-bench-drain}" database="${BENCH_DATABASE:-purchases_bench_drain}" port="${BENCH_PORT:-28482}"
management_port="${BENCH_MANAGEMENT_PORT:-28483}"
# The local broker (scripts/lib/local-broker.sh), started if it is not: the service's RABBITMQ_* settings.
ROOT="$root"
log() { printf '[drain] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=../../scripts/lib/local-broker.sh
source "$root/scripts/lib/local-broker.sh"
local_broker_start
management="$RABBITMQ_MANAGEMENT_URL" auth=guest:guest
[[ -f "$jar" ]] || { echo "build the jar first: ./mvnw -B -ntp -pl purchases-service -am package -DskipTests" >&2; exit 1; }
# The broker module's classpath: the contract's classes and jars plus the AMQP client.
classpath="$root/contract/target/classes:$("$root/mvnw" -B -ntp -q -f "$root/pom.xml" -pl broker \
  dependency:build-classpath -Dmdep.outputFile=/dev/stdout)"

pid=""
cleanup() {
  if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  curl -fsS -u "$auth" -X DELETE "$management/api/vhosts/$vhost" >/dev/null 2>&1 || true
  mysql -uroot -e "DROP DATABASE IF EXISTS $database" || true
}
trap cleanup EXIT
cleanup
curl -fsS -u "$auth" -X PUT "$management/api/vhosts/$vhost" >/dev/null
curl -fsS -u "$auth" -X PUT -H 'content-type: application/json' -d '{"configure":".*","write":".*","read":".*"}' \
  "$management/api/permissions/$vhost/${auth%%:*}" >/dev/null

start_service() {
  SERVER_PORT="$port" MANAGEMENT_PORT="$management_port" RABBITMQ_VHOST="$vhost" LOG_FORMAT= \
    MYSQL_URL="jdbc:mysql://localhost:3306/$database?createDatabaseIfNotExist=true" \
    "$java" -Xmx512m -jar "$jar" >"/tmp/purchases-drain-$1.log" 2>&1 &
  pid=$!
}
start_service prepare
until curl -fsS "localhost:$management_port/actuator/health/readiness" >/dev/null 2>&1; do sleep 1; done
kill "$pid"; wait "$pid" || true; pid=""
"$java" -cp "$classpath" "$here/PublishBatches.java" "$vhost" "$purchases" "$batch"
start_service drain

tick=$(getconf CLK_TCK) mysqld=$(pgrep -o mariadbd || pgrep -o mysqld)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
count() { curl -fsS "localhost:$port/purchases/count" 2>/dev/null | tr -dc '0-9'; }
until [[ "$(count)" =~ ^[1-9] ]]; do sleep 0.2; done
t0=$(date +%s.%N) c0=$(cpu "$pid") d0=$(cpu "$mysqld") n0=$(count)
until [[ "$(count)" -ge "$purchases" ]]; do sleep 0.2; done
t1=$(date +%s.%N) c1=$(cpu "$pid") d1=$(cpu "$mysqld") n1=$(count)
awk -v n=$((n1 - n0)) -v t0="$t0" -v t1="$t1" -v c=$((c1 - c0)) -v d=$((d1 - d0)) -v tick="$tick" -v b="$batch" 'BEGIN {
  t = t1 - t0
  printf "batch=%d purchases=%d seconds=%.2f purchases/s=%.0f service-cpu-ms/purchase=%.3f mariadb-cpu-ms/purchase=%.3f\n",
    b, n, t, n / t, c * 1000 / tick / n, d * 1000 / tick / n }'
uptime
