#!/usr/bin/env bash
# Compares commits side by side, in one sitting on this machine: builds each REF in a worktree of
# its own, then runs that commit's own scripts/benchmark.sh with the same options for each REF in
# turn, round after round, every other round in reverse (REF1 REF2 REF3, REF3 REF2 REF1, ...), so
# that the machine's drift, which a sitting shows as much as a quarter, falls on all of them alike.
# Beside each benchmark a sampler from this checkout (tools pipeline-sampler)
# records from outside it, every 250 ms, the purchases stored and counted, the messages
# purchase-api published, and each process's CPU, so that commits whose own scripts measure
# differently are measured the same way. Then one table (tools compare-report): per run, each
# commit's mean over its rounds of req/s, POST p50/p99, the stored rate over run and drain, the
# drain's length after the last answer, the backlog's peak, purchases per message, the purchase
# shard queues' balance (where the commit's benchmark reports it), CPU ms per purchase per
# process over run and drain, and each ratio to the first REF; then every round.
# Every performance claim is such a table against a named commit (docs/performance.md).
#
# Usage: scripts/compare.sh [options] REF... [-- benchmark.sh options]
#   --rounds N     rounds (default 2)
#   --run-dir DIR  output folder (default runs/compare-<UTC time>): compare.md, and per commit
#                  and round the benchmark's own folder with pipeline.csv beside its files
#   --build-only   build each REF's worktree (what a later comparison reuses) and stop
#   -h, --help     this help
# REF: anything git names a commit by (a hash, a branch, HEAD~3); the working tree's uncommitted
# changes are not part of any REF. REF+NAME=VALUE[+NAME=VALUE...] runs that commit's benchmark
# with those environment variables (e.g. another broker image), labelled as written. The benchmark options (default --stores 256
# --purchases-per-hour 60) must be ones every REF's benchmark.sh takes.
# Examples:
#   scripts/compare.sh 4c51802 main                                    # closed loop, 256 stores
#   scripts/compare.sh --rounds 3 4c51802 main -- --rates 1000 --rate-stores 256 --purchases-per-hour 40
#   scripts/compare.sh main+RABBITMQ_IMAGE=supermarket-local/rabbitmq:3.10.8 main     # two brokers
# Environment: COMPARE_WORKTREES (default /var/cache/supermarket-compare: one worktree and build
# per commit, kept for the next comparison), BROKER_PROCESS (regular expression of the broker's
# command line, default a RabbitMQ node's VM: the one broker a quiet machine runs), and benchmark.sh's own (API_PORT,
# *_MANAGEMENT_PORT, ...). Nothing else may load the machine meanwhile: the table is only as
# good as the sitting.
set -euo pipefail

SCRIPT_NAME=compare
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

rounds=2
run_dir=""
build_only=false
refs=()
bench=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --run-dir) run_dir="$2"; shift 2 ;;
    --build-only) build_only=true; shift ;;
    --) shift; bench=("$@"); break ;;
    -*) echo "unknown option: $1 (see --help)" >&2; exit 1 ;;
    *) refs+=("$1"); shift ;;
  esac
done
[[ ${#bench[@]} -gt 0 ]] || bench=(--stores 256 --purchases-per-hour 60)

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
RUN_DIR="${run_dir:-$ROOT/runs/compare-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$RUN_DIR"
RUN_DIR="$(cd "$RUN_DIR" && pwd)"
JAVA_HOME="$("$ROOT/scripts/find-jdk.sh")"
export JAVA_HOME
JAVA="$JAVA_HOME/bin/java"
# shellcheck source=lib/platform.sh
source "$ROOT/scripts/lib/platform.sh"

[[ ${#refs[@]} -ge 1 ]] || die "name at least one commit (see --help)"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || die "--rounds: $rounds is not a count"
WORKTREES="${COMPARE_WORKTREES:-/var/cache/supermarket-compare}"
for ((i = 0; i < ${#bench[@]}; i++)); do
  [[ "${bench[$i]}" == --store-partitions ]] && STORE_PARTITIONS="${bench[$((i + 1))]}"
done

SAMPLER_PID=""
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  [[ -z "$SAMPLER_PID" ]] || kill "$SAMPLER_PID" 2>/dev/null || true
  log "results in $RUN_DIR"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The environment variables of a label (REF+NAME=VALUE[+NAME=VALUE...]) into the array variables.
variables_of() {
  variables=()
  [[ "$1" != *+* ]] || IFS='+' read -r -a variables <<<"${1#*+}"
}

# A label per REF as given, and its commit's worktree, built once.
build_if_needed tools
shas=()
for label in "${refs[@]}"; do
  ref="${label%%+*}"
  variables_of "$label"
  for variable in "${variables[@]}"; do
    [[ "$variable" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] \
      || die "$label: '$variable' is not NAME=VALUE (the variables are split at '+', so a value cannot hold one)"
  done
  sha="$(git -C "$ROOT" rev-parse --verify --quiet "$ref^{commit}")" || die "$ref names no commit"
  tree="$WORKTREES/$sha"
  if [[ ! -d "$tree" ]]; then
    mkdir -p "$WORKTREES"
    git -C "$ROOT" worktree add --detach "$tree" "$sha" >/dev/null 2>&1 || die "could not add a worktree for $ref at $tree"
  fi
  if [[ ! -f "$tree/.compare-built" ]]; then
    log "building $ref ($sha) in $tree"
    (cd "$tree" && ./mvnw -B -ntp -q -DskipTests package) >"$RUN_DIR/build-${sha:0:10}.log" 2>&1 \
      || { tail -n 30 "$RUN_DIR/build-${sha:0:10}.log" >&2; die "building $ref failed; see $RUN_DIR/build-${sha:0:10}.log"; }
    touch "$tree/.compare-built"
  fi
  shas+=("$sha")
done
[[ "$build_only" == false ]] || { log "built: ${refs[*]}"; exit 0; }
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm), $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  for ((i = 0; i < ${#refs[@]}; i++)); do echo "commit ${refs[$i]}: ${shas[$i]} $(git -C "$ROOT" log -1 --format=%s "${shas[$i]}")"; done
  echo "rounds: $rounds; benchmark options: ${bench[*]}"
} >"$RUN_DIR/environment.txt"
cat "$RUN_DIR/environment.txt" >&2

# Each process's CPU is summed over every process matching its pattern: another broker or database
# running (a test's container) would be counted in.
for name in beam.smp mariadbd redis-server; do
  [[ "$(pgrep -c -x "$name" || true)" -le 1 ]] || log "WARNING: more than one $name runs; their CPU is summed: stop the others"
done
report_runs=()
for ((round = 1; round <= rounds; round++)); do
  for ((k = 0; k < ${#refs[@]}; k++)); do
    # Even rounds in reverse: a drift that slows every run after the first favours none of them.
    i=$(( round % 2 == 1 ? k : ${#refs[@]} - 1 - k ))
    ref="${refs[$i]}" tree="$WORKTREES/${shas[$i]}"
    variables_of "$ref"
    out="$RUN_DIR/$(printf '%s' "$ref" | tr -c 'A-Za-z0-9._-' '_')-r$round"
    mkdir -p "$out"
    log "round $round of $rounds: $ref"
    mapfile -t sampling < <(pipeline_sampler_options "$tree")
    "$JAVA" -jar "$(jar_of tools)" pipeline-sampler --out "$out/pipeline.csv" "${sampling[@]}" 2>"$out/sampler.log" &
    SAMPLER_PID=$!
    # The commit's own benchmark samples nothing itself (a newer one would, into the same file).
    env "${variables[@]}" BENCHMARK_SAMPLER=off "$tree/scripts/benchmark.sh" --run-dir "$out" "${bench[@]}" >"$out/benchmark.log" 2>&1 \
      || { tail -n 30 "$out/benchmark.log" >&2; die "the benchmark of $ref failed (round $round); see $out/benchmark.log"; }
    kill "$SAMPLER_PID" 2>/dev/null || true
    wait "$SAMPLER_PID" 2>/dev/null || true
    SAMPLER_PID=""
    report_runs+=(--run "$ref=$out")
  done
done
tools compare-report --ticks-per-second "$(getconf CLK_TCK)" "${report_runs[@]}" >"$RUN_DIR/compare.md"
cat "$RUN_DIR/compare.md"
