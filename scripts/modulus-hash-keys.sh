#!/usr/bin/env bash
# Writes the table of routing keys from which purchase-api picks one key per shard queue
# (contract's ModulusHashKeys): candidate keys s0, s1, ... with the hash the sharding plugin's
# x-modulus-hash exchange computes for each. The exchange sends a message to bound queue number
# erlang:phash2(RoutingKeys, 2^27) rem N (0-based) of its N queues, RoutingKeys being the list of
# the message's routing keys ([<<"s0">>] for a message published with routing key s0 and no CC
# header). phash2 is Erlang's portable hash, the same on every machine and ERTS version, but
# Java has no implementation of it, so Erlang computes the table once and the repository keeps
# it. Needs erl (the broker's Erlang runtime does). the broker module's BrokerTopologyIT checks the keys
# on a real broker; ModulusHashKeysTest checks that every queue count up to
# ModulusHashKeys.MAX_QUEUES has a key for each of its queues.
#
# Usage: scripts/modulus-hash-keys.sh [--count N] [--check]
#   --count N   candidate keys (default 1200: a key for every queue of up to 159 queues)
#   --check     compare with the table in the repository instead of writing it; exit 1 if different
#   -h, --help  this help
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

count=1200
check=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --count) count="$2"; shift 2 ;;
    --check) check=true; shift ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 1 ;;
  esac
done
[[ "$count" =~ ^[1-9][0-9]*$ ]] || { echo "--count: $count is not a positive number" >&2; exit 1; }
command -v erl >/dev/null || { echo "erl is not installed (the broker's Erlang runtime provides it)" >&2; exit 1; }

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TABLE="$ROOT/contract/src/main/resources/com/supermarket/contract/modulus-hash-keys.txt"

table() {
  echo "# Routing keys and erlang:phash2([Key], 134217728) of each, one per line:"
  echo "# x-modulus-hash sends a message with routing key Key to bound queue (hash rem N) of N."
  echo "# Written by scripts/modulus-hash-keys.sh; do not edit."
  erl -noshell -eval "
    lists:foreach(fun(I) ->
        Key = <<\"s\", (integer_to_binary(I))/binary>>,
        io:format(\"~s ~b~n\", [Key, erlang:phash2([Key], 134217728)])
      end, lists:seq(0, $count - 1)),
    halt()."
}

if [[ "$check" == true ]]; then
  if diff -q <(table) "$TABLE" >/dev/null; then
    echo "the table matches Erlang's phash2 ($TABLE)"
  else
    echo "the table differs from Erlang's phash2: run scripts/modulus-hash-keys.sh" >&2
    exit 1
  fi
else
  table >"$TABLE"
  echo "wrote $count keys to $TABLE"
fi
