#!/usr/bin/env bash
# Measures the load client against wrk, side by side: starts the load client's stub API, then
# alternately runs wrk and the load client against it with the same connection count (wrk -c N,
# the client's -s N stores, one connection each) and the same kind of body (a 5-item purchase
# POST), and prints both rates, their ratio, and the CPU each spends per request (the client's,
# wrk's, and the stub's in each case; from user + system time of each process). The client runs its standard profile (staggered phases,
# closed loop), so its first quarter runs on a quarter of the connections: on a CPU-bound
# machine that changes little, and it is what a benchmark run really does.
#
# Usage: load-client/bench/client-vs-wrk.sh [options]
#   --connections N        wrk -c N and the client's -s N (default 256)
#   --duration S           seconds of each wrk run (default 15)
#   --purchases-per-hour N the client's -p (default 300: N x 2,700 requests)
#   --threads N            wrk -t N and the client's --io-threads N (default 1)
#   --stub-threads N       the stub's --io-threads (default 1)
#   --rounds N             wrk + client pairs (default 2; this machine is noisy)
#   --port P               the stub's port (default $STUB_PORT or 8090)
#   --jar PATH             load-client jar to measure (default: this tree's, built if needed;
#                          the stub always comes from this tree's jar)
#   -h, --help             this help
# Environment: CLIENT_JAVA_OPTS, JVM options of the client (e.g. -Dio.netty.transport.noNative=true
# to measure Netty's NIO transport instead of epoll); CLIENT_RUN_OPTS, more options of the client's
# run (e.g. "--metrics-port 9404" to measure the cost of its live metrics).
# Needs wrk (Debian: apt-get install wrk). Target: the client at >= 0.8x wrk's rate.
set -euo pipefail

SCRIPT_NAME=client-vs-wrk
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

connections=256
duration=15
per_hour=300
threads=1
stub_threads=1
rounds=2
port="${STUB_PORT:-8090}"
jar=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --connections) connections="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --purchases-per-hour) per_hour="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --stub-threads) stub_threads="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --jar) jar="$2"; shift 2 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 1 ;;
  esac
done
command -v wrk >/dev/null || { echo "wrk is not installed (Debian: apt-get install wrk)" >&2; exit 1; }

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
RUN_DIR="$(mktemp -d /tmp/client-vs-wrk.XXXXXX)"
JAVA_HOME="$("$ROOT/scripts/find-jdk.sh")"
export JAVA_HOME
JAVA="$JAVA_HOME/bin/java"
API_PORT="$port"
# shellcheck source=../../scripts/lib/platform.sh
source "$ROOT/scripts/lib/platform.sh"
trap 'stop_started; rm -rf "$RUN_DIR"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

build_if_needed load-client
jar="${jar:-$(jar_of load-client)}"
require_free_port "$port" "the stub API"
start_process stub-api "$RUN_DIR/stub-api.log" "$JAVA" -jar "$(jar_of load-client)" stub --port "$port" \
  --io-threads "$stub_threads"
stub_pid="${STARTED_PIDS[-1]}"
wait_until stub-api 30 port_in_use "$port"

body='{"items":[{"ItemID":"101","numberOfItems":1},{"ItemID":"20202","numberOfItems":1},{"ItemID":"30303","numberOfItems":1},{"ItemID":"40404","numberOfItems":1},{"ItemID":"99999","numberOfItems":1}]}'
cat >"$RUN_DIR/post.lua" <<EOF
wrk.method = "POST"
wrk.path = "/purchase/1/customer/1000/date/20210101"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '$body'
EOF
url="http://127.0.0.1:$port"
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }   # user + system, 1/100 s
json_number() { sed -n "s/^ *\"$1\" *: *\([0-9.eE+-]*\).*/\1/p" "$2" | head -n 1; }

log "warming up the stub (wrk, 5 s)"
wrk -t"$threads" -c"$connections" -d5s -s "$RUN_DIR/post.lua" "$url" >/dev/null

# $1 = tool, $2 = req/s, $3 = its CPU seconds, $4 = requests, $5 = the stub's CPU ticks meanwhile
row() {
  awk -v r="$round" -v tool="$1" -v rate="$2" -v cpu="$3" -v n="$4" -v stub="$5" -v loadavg="$(cut -d' ' -f1 /proc/loadavg)" \
    'BEGIN { printf "%-6s %-12s %12.0f %14.1f %14.1f %10s\n", r, tool, rate, cpu * 1e6 / n, stub * 1e4 / n, loadavg }'
}

wrk_rates=() client_rates=()
printf '%-6s %-12s %12s %14s %14s %10s\n' round tool "req/s" "tool CPU µs/req" "stub CPU µs/req" "load avg"
for ((round = 1; round <= rounds; round++)); do
  stub_before="$(ticks "$stub_pid")"
  TIMEFORMAT='%U %S'
  { time wrk -t"$threads" -c"$connections" -d"${duration}s" -s "$RUN_DIR/post.lua" "$url" >"$RUN_DIR/wrk.txt"; } 2>"$RUN_DIR/wrk-time.txt"
  stub_after="$(ticks "$stub_pid")"
  requests="$(awk '/requests in/ { print $1 }' "$RUN_DIR/wrk.txt")"
  rate="$(awk '/Requests\/sec/ { print $2 }' "$RUN_DIR/wrk.txt")"
  wrk_cpu="$(awk '{ print $1 + $2 }' "$RUN_DIR/wrk-time.txt")"
  row wrk "$rate" "$wrk_cpu" "$requests" "$((stub_after - stub_before))"
  wrk_rates+=("$rate")

  # The client's CPU as wrk's: the whole process, user + system (JVM start-up included, about
  # 1-2 s of CPU); the in-run figure without start-up is in the client's own summary.
  stub_before="$(ticks "$stub_pid")"
  # shellcheck disable=SC2086 # the options are words
  { time "$JAVA" ${CLIENT_JAVA_OPTS:-} -jar "$jar" run --base-url "$url" --max-stores "$connections" \
      --purchases-per-hour "$per_hour" $([[ "$threads" == 1 ]] || echo "--io-threads $threads") --progress off \
      --label client-vs-wrk --out "$RUN_DIR/client.json" ${CLIENT_RUN_OPTS:-} >"$RUN_DIR/client.txt"; } 2>"$RUN_DIR/client-time.txt"
  stub_after="$(ticks "$stub_pid")"
  rate="$(json_number throughput "$RUN_DIR/client.json")"
  requests="$(json_number successful "$RUN_DIR/client.json")"
  client_cpu="$(tail -n 1 "$RUN_DIR/client-time.txt" | awk '{ print $1 + $2 }')"
  row load-client "$rate" "$client_cpu" "$requests" "$((stub_after - stub_before))"
  grep 'client CPU' "$RUN_DIR/client.txt" | sed 's/^ */       in-run /' || true
  client_rates+=("$rate")
done

awk -v w="${wrk_rates[*]}" -v c="${client_rates[*]}" 'BEGIN {
  n = split(w, ws, " "); split(c, cs, " ")
  for (i = 1; i <= n; i++) { wsum += ws[i]; csum += cs[i] }
  ratio = csum / wsum
  printf "wrk %.0f req/s, load client %.0f req/s (means of %d rounds): the client reaches %.2fx wrk (target >= 0.8)\n",
    wsum / n, csum / n, n, ratio
}'
log "CPU per request: each tool's whole process (the client's JVM start-up included), user + system"
