#!/usr/bin/env bash
# Issues, rotates and revokes till keys for purchase-api's till authentication, and writes the
# Kubernetes Secrets that carry them (docs/operations.md, "Till authentication").
#
# Usage: scripts/till-keys.sh COMMAND --dir DIR [options]
#   issue   --stores LIST [--tills N] [--managers N]
#           new keys for every store of LIST (e.g. 1-256 or 1,3,10-12), N per store (default 1,
#           labelled till-1..N), plus N manager keys (default 0); refuses an existing DIR/till-keys.txt
#   rotate  --stores LIST [--grace DURATION]
#           a new key for each store of LIST (the word manager rotates the manager keys); the
#           old keys stay valid until now + DURATION (default 24h; 30m, 12h, 7d, 0 = at once)
#   revoke  --stores LIST
#           drops every key of the stores of LIST at once (a lost or stolen till)
#   prune   drops hash lines whose grace period is over
#   secret  [--name NAME] [--namespace NS] [--test-store N --test-name NAME]
#           prints the Secret of the hashes (default name supermarket-till-keys, the chart's
#           <release>-till-keys) for kubectl apply -f -, and with --test-store the Secret of that
#           store's key for helm test (default name supermarket-till-test-key)
#   -h, --help  this help
# Files in DIR (created with mode 600):
#   till-keys.txt        "<store or manager> <key> <label>": the plain keys, for the tills and the
#                        load client (--till-keys); kept only here, hand each till its line
#   till-key-hashes.txt  "<store or manager> <sha-256 of the key> [until=...] label=...": what
#                        purchase-api reads (API_AUTH_KEYS_FILE), the content of the Secret
# A key is "tk_" + 44 base64url characters (264 random bits from /dev/urandom). The API keeps only
# the SHA-256; rotation and revocation take effect when the API rereads the file (every
# API_AUTH_RELOAD_INTERVAL, 10s; on Kubernetes after kubelet refreshes the mounted Secret,
# about a minute), without a restart.
set -euo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
die() { echo "till-keys: $*" >&2; exit 2; }

[[ $# -gt 0 ]] || { usage >&2; exit 2; }
command="$1"; shift
case "$command" in
  -h|--help) usage; exit 0 ;;
  issue|rotate|revoke|prune|secret) ;;
  *) usage >&2; exit 2 ;;
esac

dir="" stores="" tills=1 managers=0 grace=24h name=supermarket-till-keys namespace="" test_store="" test_name=supermarket-till-test-key
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --stores) stores="$2"; shift 2 ;;
    --tills) tills="$2"; shift 2 ;;
    --managers) managers="$2"; shift 2 ;;
    --grace) grace="$2"; shift 2 ;;
    --name) name="$2"; shift 2 ;;
    --namespace) namespace="$2"; shift 2 ;;
    --test-store) test_store="$2"; shift 2 ;;
    --test-name) test_name="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
[[ -n "$dir" ]] || die "--dir DIR is required"
keys="$dir/till-keys.txt"
hashes="$dir/till-key-hashes.txt"
umask 077

# "1-3,7,manager" -> one scope per line
scopes() {
  local part
  for part in ${1//,/ }; do
    if [[ "$part" == manager ]]; then
      echo manager
    elif [[ "$part" =~ ^([0-9]+)-([0-9]+)$ ]] && (( BASH_REMATCH[1] >= 1 && BASH_REMATCH[1] <= BASH_REMATCH[2] )); then
      seq "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
    elif [[ "$part" =~ ^[1-9][0-9]*$ ]]; then
      echo "$part"
    else
      die "bad store list element '$part' (store ids from 1, ranges a-b, or manager)"
    fi
  done
}

seconds() {
  [[ "$1" =~ ^([0-9]+)([smhd]?)$ ]] || die "bad duration '$1' (e.g. 30m, 24h, 7d, 0)"
  local n="${BASH_REMATCH[1]}"
  case "${BASH_REMATCH[2]}" in
    m) echo $(( n * 60 )) ;; h) echo $(( n * 3600 )) ;; d) echo $(( n * 86400 )) ;; *) echo "$n" ;;
  esac
}

# $1 keys wanted; prints that many keys, one a line (33 random bytes -> 44 base64url characters each)
new_keys() {
  head -c $(( 33 * $1 )) /dev/urandom | base64 -w0 | tr '+/' '-_' | fold -w44 | sed 's/^/tk_/'
}

sha256() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

# reads "<scope> <label>" lines on stdin; appends a key per line to the keys file and its hash to the hashes file
issue_lines() {
  local wanted scope label key
  local -a lines
  mapfile -t lines
  wanted=${#lines[@]}
  [[ $wanted -gt 0 ]] || return 0
  local -a fresh
  mapfile -t fresh < <(new_keys "$wanted")
  for i in "${!lines[@]}"; do
    read -r scope label <<<"${lines[$i]}"
    key="${fresh[$i]}"
    [[ ${#key} -eq 47 ]] || die "key generation failed"
    printf '%s %s %s\n' "$scope" "$key" "$label" >>"$keys"
    printf '%s %s label=%s\n' "$scope" "$(sha256 "$key")" "$label" >>"$hashes"
  done
}

now=$(date -u +%s)
# drops hash lines whose until= lies in the past
prune() {
  local tmp
  tmp=$(mktemp "$dir/.hashes.XXXXXX")
  # until= is always written as YYYY-MM-DDTHH:MM:SSZ, so the strings compare like the times
  awk -v now="$(date -u -d "@$now" +%Y-%m-%dT%H:%M:%SZ)" '
    { keep = 1
      for (i = 3; i <= NF; i++) if ($i ~ /^until=/ && substr($i, 7) < now) keep = 0
      if (keep) print }' "$hashes" >"$tmp"
  mv "$tmp" "$hashes"
}

case "$command" in
  issue)
    [[ -n "$stores" ]] || die "issue needs --stores LIST"
    [[ "$tills" =~ ^[1-9][0-9]*$ && "$managers" =~ ^[0-9]+$ ]] || die "--tills and --managers take a count"
    mkdir -p "$dir"
    [[ ! -e "$keys" && ! -e "$hashes" ]] || die "$dir already holds keys; use rotate, or another --dir"
    echo "# till keys issued $(date -u +%FT%TZ): <store or manager> <key> <label>; hand each till its line, keep this file secret" >"$keys"
    echo "# till key hashes ($(date -u +%FT%TZ)): <store or manager> <sha-256 of the key> [until=...] label=...; for API_AUTH_KEYS_FILE" >"$hashes"
    {
      while read -r scope; do
        [[ "$scope" != manager ]] || die "issue manager keys with --managers N"
        for t in $(seq 1 "$tills"); do echo "$scope till-$t"; done
      done < <(scopes "$stores")
      for m in $(seq 1 "$managers"); do echo "manager manager-$m"; done
    } | issue_lines
    echo "issued $(grep -vc '^#' "$keys") keys: $keys (plain, for the tills) and $hashes (hashes, for the API)"
    ;;
  rotate)
    [[ -n "$stores" ]] || die "rotate needs --stores LIST"
    [[ -f "$keys" && -f "$hashes" ]] || die "no keys in $dir (issue first)"
    until=$(date -u -d "@$(( now + $(seconds "$grace") ))" +%Y-%m-%dT%H:%M:%SZ)
    prune
    selected=$(scopes "$stores" | sort -u | tr '\n' ' ')
    tmp=$(mktemp "$dir/.rotate.XXXXXX")
    # every current key of a rotated scope gets its end of grace; the plain keys leave till-keys.txt
    awk -v sel=" $selected" -v until="$until" '
      BEGIN { n = split(sel, s, " "); for (i = 1; i <= n; i++) want[s[i]] = 1 }
      /^#/ || !($1 in want) || /until=/ { print; next }
      { print $0 " until=" until }' "$hashes" >"$tmp" && mv "$tmp" "$hashes"
    tmp=$(mktemp "$dir/.rotate.XXXXXX")
    awk -v sel=" $selected" -v rotated="$tmp.rotated" '
      BEGIN { n = split(sel, s, " "); for (i = 1; i <= n; i++) want[s[i]] = 1; printf "" > rotated }
      /^#/ || !($1 in want) { print; next }
      { print $1 " " $3 > rotated }' "$keys" >"$tmp"
    mv "$tmp" "$keys"
    # a scope that had no key in till-keys.txt gets one (label till-1)
    for scope in $selected; do
      grep -q "^$scope " "$tmp.rotated" || echo "$scope till-1" >>"$tmp.rotated"
    done
    issue_lines <"$tmp.rotated"
    rm -f "$tmp.rotated"
    echo "rotated $(wc -w <<<"$selected") scopes; old keys valid until $until; new keys in $keys, hashes in $hashes"
    ;;
  revoke)
    [[ -n "$stores" ]] || die "revoke needs --stores LIST"
    [[ -f "$keys" && -f "$hashes" ]] || die "no keys in $dir"
    selected=$(scopes "$stores" | sort -u | tr '\n' ' ')
    for file in "$keys" "$hashes"; do
      tmp=$(mktemp "$dir/.revoke.XXXXXX")
      awk -v sel=" $selected" 'BEGIN { n = split(sel, s, " "); for (i = 1; i <= n; i++) drop[s[i]] = 1 }
        /^#/ || !($1 in drop)' "$file" >"$tmp" && mv "$tmp" "$file"
    done
    echo "revoked every key of: $selected"
    ;;
  prune)
    [[ -f "$hashes" ]] || die "no $hashes"
    prune
    echo "$(grep -vc '^#' "$hashes") key hashes in force in $hashes"
    ;;
  secret)
    [[ -f "$hashes" ]] || die "no $hashes"
    ns=""
    [[ -z "$namespace" ]] || ns=$'\n'"  namespace: $namespace"
    printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s%s\ntype: Opaque\ndata:\n  till-key-hashes: %s\n' \
      "$name" "$ns" "$(base64 -w0 "$hashes")"
    if [[ -n "$test_store" ]]; then
      key=$(awk -v s="$test_store" '$1 == s { print $2; exit }' "$keys")
      [[ -n "$key" ]] || die "no key of store $test_store in $keys"
      printf -- '---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: %s%s\ntype: Opaque\ndata:\n  key: %s\n' \
        "$test_name" "$ns" "$(printf '%s' "$key" | base64 -w0)"
    fi
    ;;
esac
