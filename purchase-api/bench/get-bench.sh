#!/usr/bin/env bash
# Sends one GET at a steady rate to a running platform and measures what it costs: the CPU
# milliseconds per request of each process named with --pid, and wrk's latency percentiles.
set -euo pipefail

usage() {
  cat <<USAGE
Usage: purchase-api/bench/get-bench.sh [--url http://127.0.0.1:8080] [--path /items/top]
                                       [--rate 50] [--duration 60] [--connections 5]
                                       [--key-file FILE] [--pid NAME=PID]...

Runs wrk -t1 -c<connections> -d<duration>s --latency -s purchase-api/bench/paced-get.lua against
--url for --path (default the chain's top items, /items/top; e.g. '/items/top?limit=100',
/items/store/7, /items/top10/101), each connection pacing its requests so that together they
send about --rate requests/s, and prints wrk's summary, the rate reached, the status counts, and
for each --pid NAME=PID (repeatable: purchase-api, each store-service partition, the broker's
beam.smp) the CPU it spent over the run (utime+stime from /proc/PID/stat) in all and per request.
Start the platform first (scripts/run-local.sh --keep-running prints the pids; pgrep -o beam.smp);
with till authentication on, --key-file names scripts/till-keys.sh's till-keys.txt, whose first
manager key signs every request. What else the machine does meanwhile counts in the processes'
CPU: measure on a quiet machine, or at two rates and take the difference.
Needs wrk (Debian: apt-get install wrk) and curl.
USAGE
}

url=http://127.0.0.1:8080 path=/items/top rate=50 duration=60 connections=5 key_file="" pids=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --url) url="$2"; shift 2 ;;
    --path) path="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --key-file) key_file="$2"; shift 2 ;;
    --pid) pids+=("$2"); shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null || { echo "get-bench: wrk is missing (Debian: apt-get install wrk)" >&2; exit 2; }
here="$(cd "$(dirname "$0")" && pwd)"
authorization=""
if [[ -n "$key_file" ]]; then
  authorization="Bearer $(awk '$1 == "manager" { print $2; exit }' "$key_file")"
  [[ "$authorization" != "Bearer " ]] || { echo "get-bench: no manager key in $key_file" >&2; exit 2; }
fi
status="$(curl -s -o /dev/null -w '%{http_code}' ${authorization:+-H "Authorization: $authorization"} "$url$path")"
[[ "$status" == 200 ]] || { echo "get-bench: GET $url$path answered $status, not 200" >&2; exit 1; }

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz="$(getconf CLK_TCK)"
declare -A before
for named in "${pids[@]}"; do before["$named"]="$(ticks "${named#*=}")"; done
every=$(( connections * 1000 / rate ))
echo "GET $path at about $rate/s: $connections connections, one request each every $every ms after its answer, ${duration}s"
out="$(PACED_PATH="$path" PACED_EVERY_MS="$every" PACED_AUTHORIZATION="$authorization" \
  wrk -t1 -c"$connections" -d"${duration}s" --latency -s "$here/paced-get.lua" "$url")"
echo "$out"
requests="$(awk '/requests in/ { print $1 }' <<<"$out")"
echo "rate reached: $(awk -v n="$requests" -v d="$duration" 'BEGIN { printf "%.1f", n / d }')/s; non-2xx: $(awk '/Non-2xx/ { print $NF }' <<<"$out" | grep . || echo 0)"
for named in "${pids[@]}"; do
  spent=$(( $(ticks "${named#*=}") - before["$named"] ))
  awk -v name="${named%%=*}" -v t="$spent" -v hz="$hz" -v n="$requests" \
    'BEGIN { printf "%s: %.0f ms CPU, %.3f ms per request\n", name, t * 1000 / hz, t * 1000 / hz / n }'
done
