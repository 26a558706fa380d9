#!/usr/bin/env bash
# Builds, without any image registry, local stand-ins for every image the project runs on: Debian
# bases made by debootstrap (bookworm, and forky, Debian's testing, for what bookworm has too old),
# a Java image from the JDK that scripts/find-jdk.sh finds (build and runtime base of the
# services' Dockerfiles), and one image per folder of deploy/images/ (RabbitMQ with its plugins,
# MariaDB for `mysql`, Redis, DynamoDB Local, nginx), from Debian's packages (DynamoDB Local from
# Maven Central; deploy/images/README.md). Each is tagged supermarket-local/NAME:latest, but
# RabbitMQ, which is built twice, each tagged with its version: forky's, the version the project
# names (scripts/lib/rabbitmq-version.sh), and bookworm's 3.10, from which the upgrade test
# (deploy/images/README.md) moves to it. Each is labelled with a hash of what it was built from;
# a second run rebuilds only what changed.
# Prints (and writes to runs/images.env) the variables that point docker-compose.yml, the
# Dockerfiles and the Testcontainers-based tests at these images; their defaults are the
# official images, so where a registry is reachable nothing of this is needed.
# Usage: scripts/images.sh [--print | --check] [NAME...]
#   NAME:    build only these folders of deploy/images (and the bases they need), e.g. rabbitmq
#   --print: only print the variables; build nothing.
#   --check: build, then start each stand-in the way docker-compose.yml and Testcontainers start
#            it and check its contract from the host (about 30 s; prints every check).
# Needs root and a running Docker engine (scripts/docker-engine.sh starts one).
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

cd "$(dirname "$0")/.."
log() { printf '[images] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=lib/rabbitmq-version.sh
source scripts/lib/rabbitmq-version.sh || die "no RabbitMQ version"

mode="" only=()
for arg in "$@"; do
  case "$arg" in
    --print | --check) mode="$arg" ;;
    -*) die "unknown option: $arg (see --help)" ;;
    *) [[ -d "deploy/images/$arg" ]] || die "no folder deploy/images/$arg"; only+=("$arg") ;;
  esac
done
[[ "$mode" != --check || ${#only[@]} -eq 0 ]] || die "--check checks every stand-in: give no NAME with it"

PREFIX=supermarket-local
# The older RabbitMQ, Debian bookworm's: where the upgrade test starts (the official 3.13.7 of the
# chart's first release cannot be had without a registry).
RABBITMQ_UPGRADE_SOURCE_VERSION=3.10.8
CACHE="${IMAGES_CACHE:-/var/cache/supermarket-images}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

# The variables, one per image the project names; runs/images.env holds them for scripts.
variables() {
  cat <<VARS
JAVA_BUILD_IMAGE=$PREFIX/java:latest
JAVA_RUNTIME_IMAGE=$PREFIX/java:latest
RABBITMQ_IMAGE=$PREFIX/rabbitmq:$RABBITMQ_VERSION
RABBITMQ_UPGRADE_SOURCE_IMAGE=$PREFIX/rabbitmq:$RABBITMQ_UPGRADE_SOURCE_VERSION
MYSQL_IMAGE=$PREFIX/mariadb:latest
MARIADB_IMAGE=$PREFIX/mariadb:latest
REDIS_IMAGE=$PREFIX/redis:latest
DYNAMODB_IMAGE=$PREFIX/dynamodb-local:latest
NGINX_IMAGE=$PREFIX/nginx:latest
VARS
}
if [[ "$mode" == --print ]]; then
  variables
  exit 0
fi

docker info >/dev/null 2>&1 || die "no Docker engine answers; start one with scripts/docker-engine.sh"

# hash_of PATH...: one hash of the files under the paths (names and contents).
hash_of() {
  find "$@" -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
}
built_hash() { # the source hash an image was built from, empty when there is none
  docker image inspect --format '{{ index .Config.Labels "supermarket.source" }}' "$1" 2>/dev/null || true
}

# --- the Debian bases: debootstrap once each, imported as images -------------------------
# ensure_base SUITE: makes supermarket-local/debian:SUITE unless it exists. Forky is testing; this
# debootstrap may be older than it and not know its name, which sid's script serves.
ensure_base() {
  local suite="$1" image="$PREFIX/debian:$1" rootfs script=()
  if ! docker image inspect "$image" >/dev/null 2>&1; then
    command -v debootstrap >/dev/null 2>&1 || {
      log "installing debootstrap"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    }
    [[ -e "/usr/share/debootstrap/scripts/$suite" ]] || script=(/usr/share/debootstrap/scripts/sid)
    rootfs="$CACHE/$suite"
    rm -rf "$rootfs" && mkdir -p "$CACHE"
    log "debootstrap --variant=minbase $suite (about 30 s)"
    debootstrap --variant=minbase "$suite" "$rootfs" "$MIRROR" "${script[@]}" >"$CACHE/debootstrap-$suite.log" 2>&1 \
      || { tail -n 20 "$CACHE/debootstrap-$suite.log" >&2; die "debootstrap failed; its log is $CACHE/debootstrap-$suite.log"; }
    # Keep images small: no apt lists or caches in the base.
    rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
    tar -C "$rootfs" -c . | docker import --change 'CMD ["bash"]' - "$image" >/dev/null
    rm -rf "$rootfs"
    log "built $image"
  fi
}

# build IMAGE CONTEXT [docker build arguments...]: builds IMAGE from CONTEXT unless an image built
# from the same sources exists (RabbitMQ's version is in its tag).
build() {
  local image="$1" context="$2"; shift 2
  local hash
  hash="$(hash_of "$context")"
  if [[ "$(built_hash "$image")" == "$hash" ]]; then
    log "$image is current"
    return 0
  fi
  log "building $image"
  DOCKER_BUILDKIT=0 docker build -q --label "supermarket.source=$hash" -t "$image" "$@" "$context" >/dev/null \
    || die "docker build of $image failed"
}

# --- one image per folder of deploy/images, java first (the others may start from it) -------
# A folder with a prepare.sh gets a build context of its own under $CACHE, which prepare.sh
# completes with what the repository does not hold (the JDK, DynamoDB Local's jars). Each
# Dockerfile starts from the build argument it declares: BASE_IMAGE (bookworm), FORKY_IMAGE or
# JAVA_IMAGE; RabbitMQ's is built once per version (rabbitmq_folder).
java_image=$PREFIX/java:latest
build_folder() {
  local name="$1" dir="deploy/images/$1" context="deploy/images/$1" image="$PREFIX/$1:latest" args=() from
  if [[ -x "$dir/prepare.sh" ]]; then
    context="$CACHE/$name-context"
    mkdir -p "$context"
    find "$dir" -mindepth 1 -maxdepth 1 ! -name prepare.sh -exec cp -a {} "$context/" \;
    "$dir/prepare.sh" "$context" || die "$dir/prepare.sh failed"
  fi
  from="$(sed -n 's/^ARG \([A-Z_]*_IMAGE\)$/\1/p' "$dir/Dockerfile" | head -n 1)"
  case "$from" in
    BASE_IMAGE) ensure_base bookworm; args+=(--build-arg "BASE_IMAGE=$PREFIX/debian:bookworm") ;;
    FORKY_IMAGE) ensure_base forky; args+=(--build-arg "FORKY_IMAGE=$PREFIX/debian:forky") ;;
    JAVA_IMAGE) args+=(--build-arg "JAVA_IMAGE=$java_image") ;;
    DEBIAN_IMAGE) [[ "$name" == rabbitmq ]] || die "$dir/Dockerfile: only rabbitmq chooses its suite (DEBIAN_IMAGE)"
                  rabbitmq_folder "$context"; return ;;
    *) die "$dir/Dockerfile declares none of ARG BASE_IMAGE, FORKY_IMAGE, JAVA_IMAGE, DEBIAN_IMAGE" ;;
  esac
  build "$image" "$context" "${args[@]}"
}
# rabbitmq_folder CONTEXT: the project's version from forky, the upgrade test's from bookworm.
rabbitmq_folder() {
  local suite version
  for suite in forky:$RABBITMQ_VERSION bookworm:$RABBITMQ_UPGRADE_SOURCE_VERSION; do
    version="${suite#*:}" suite="${suite%%:*}"
    ensure_base "$suite"
    build "$PREFIX/rabbitmq:$version" "$1" --build-arg "DEBIAN_IMAGE=$PREFIX/debian:$suite" \
      --build-arg "RABBITMQ_VERSION=$version"
  done
}
if ((${#only[@]} == 0)); then
  for dir in deploy/images/*/; do only+=("$(basename "$dir")"); done
fi
needs_java=false
for name in "${only[@]}"; do
  [[ "$name" != java ]] && ! grep -qx 'ARG JAVA_IMAGE' "deploy/images/$name/Dockerfile" || needs_java=true
done
[[ "$needs_java" == false ]] || build_folder java
for name in "${only[@]}"; do
  [[ "$name" == java ]] || build_folder "$name"
done

mkdir -p runs
variables | tee runs/images.env
[[ "$mode" == --check ]] || exit 0

# --- --check: each stand-in started as docker-compose.yml and Testcontainers start it ----------
# All containers start at once on a network of their own, publish on free ports of 127.0.0.1
# and are removed (with their volumes) on exit, whatever happens. The greps read their whole
# input (-c, never -q): under pipefail, a writer cut off by an early exit would fail the check.
run="img-check-$$" failures=0 started=$SECONDS
initdb="$(mktemp -d)"
cleanup() {
  docker ps -aq --filter "label=supermarket.check=$run" | xargs -r docker rm -f -v >/dev/null
  docker network rm "$run" >/dev/null 2>&1 || true
  rm -rf "$initdb"
}
trap cleanup EXIT
pass() { log "check ok: $*"; }
fail() { log "CHECK FAILED: $*"; failures=$((failures + 1)); }
# check DESCRIPTION COMMAND...: one check, its output shown when it fails
check() {
  local what="$1" out; shift
  if out="$("$@" 2>&1)"; then pass "$what"; else fail "$what: $(tail -n 3 <<<"$out")"; fi
}
# within SECONDS COMMAND...: retries COMMAND until it succeeds, for at most SECONDS
within() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}
start() { # NAME PORT [docker run arguments...]: a container of this run, reachable as NAME
  local name="$1" port="$2"; shift 2
  docker run -d --name "$run-$name" --network "$run" --network-alias "$name" \
    --label "supermarket.check=$run" -p "127.0.0.1::$port" "$@" >/dev/null
}
host_port() { docker port "$run-$1" "$2" | head -n 1 | sed 's/.*://'; }
in_container() { local name="$1"; shift; docker exec "$run-$name" "$@"; }
logs_have() { docker logs "$run-$1" 2>&1 | grep -c "$2" >/dev/null; }
# stops_cleanly NAME: docker stop (TERM) ends the container with status 0
stops_cleanly() { docker stop -t 30 "$run-$1" >/dev/null && [[ "$(docker inspect -f '{{.State.ExitCode}}' "$run-$1")" == 0 ]]; }

docker network create "$run" >/dev/null
printf 'CREATE TABLE init_check (id INT PRIMARY KEY);\nINSERT INTO init_check VALUES (1);\n' >"$initdb/10-table.sql"
printf 'mysql --protocol=socket -uroot -p"$MYSQL_ROOT_PASSWORD" -e "INSERT INTO init_check VALUES (2)" "$MYSQL_DATABASE"\n' >"$initdb/20-script.sh"
chmod 755 "$initdb" && chmod 644 "$initdb"/*
start rabbitmq 15672 -p 127.0.0.1::5672 -e RABBITMQ_DEFAULT_USER=checker -e RABBITMQ_DEFAULT_PASS=check-pass \
  "$PREFIX/rabbitmq:$RABBITMQ_VERSION"
start redis 6379 "$PREFIX/redis" redis-server --save "" --appendonly no --maxmemory 200mb --maxmemory-policy volatile-ttl
start mariadb 3306 -e MYSQL_ROOT_PASSWORD=check-root -e MYSQL_DATABASE=checkdb -e MYSQL_USER=checker \
  -e MYSQL_PASSWORD=check-pass -v "$initdb:/docker-entrypoint-initdb.d:ro" "$PREFIX/mariadb" --innodb-buffer-pool-size=64M
start dynamodb 8000 "$PREFIX/dynamodb-local" -jar DynamoDBLocal.jar -sharedDb -inMemory

# answer NAME PORT BYTES: the first answer of NAME's published PORT to BYTES (a printf format),
# read as one read() so that it returns as soon as the server has said something.
answer() {
  exec 3<>"/dev/tcp/127.0.0.1/$(host_port "$1" "$2")" && printf "$3" >&3 && timeout 5 dd bs=4096 count=1 status=none <&3
}

# RabbitMQ: Testcontainers waits for this line, then logs in as RABBITMQ_DEFAULT_USER.
check "rabbitmq: 'Server startup complete' in the log" within 60 logs_have rabbitmq 'Server startup complete'
sharding_type() {
  curl -sf -m 5 -u checker:check-pass "http://127.0.0.1:$(host_port rabbitmq 15672)/api/overview" \
    | grep -c '"name":"x-modulus-hash"' >/dev/null
}
check "rabbitmq: management API as RABBITMQ_DEFAULT_USER lists exchange type x-modulus-hash (sharding)" sharding_type
amqp() { answer rabbitmq 5672 'AMQP\0\0\11\1' | grep -ac RabbitMQ >/dev/null; } # connection.start
check "rabbitmq: AMQP from the host" amqp
check "rabbitmq: rabbitmqctl authenticate_user checker" in_container rabbitmq rabbitmqctl -q authenticate_user checker check-pass
check "rabbitmq: rabbitmq-diagnostics check_port_connectivity (5672 15672 15692 25672)" \
  in_container rabbitmq rabbitmq-diagnostics -q check_port_connectivity
check "rabbitmq: docker stop shuts the node down cleanly" stops_cleanly rabbitmq

# Redis: compose's command; reachable from the host (protected mode off); redis-cli inside.
redis_ping() { answer redis 6379 'PING\r\n' | grep -c PONG >/dev/null; }
check "redis: PING from the host" within 10 redis_ping
redis_policy() { in_container redis redis-cli config get maxmemory-policy | grep -cx volatile-ttl >/dev/null; }
check "redis: compose's arguments applied (maxmemory-policy volatile-ttl)" redis_policy

# MariaDB: compose's health check (over TCP) passes only once the first-start initialisation
# (no TCP) has run the initdb scripts; MYSQL_USER then logs in from another container.
mysql_ping() { in_container mariadb mysqladmin ping -h 127.0.0.1 -u checker --password=check-pass --silent; }
check "mariadb: compose's health check passes" within 60 mysql_ping
check "mariadb: TCP only after the initialisation" logs_have mariadb 'init process done'
mysql_user() {
  docker run --rm --network "$run" "$PREFIX/mariadb" mysql -h mariadb -u checker -pcheck-pass -N \
    -e 'SELECT GROUP_CONCAT(id ORDER BY id), @@innodb_buffer_pool_size FROM init_check' checkdb \
    | grep -cP '^1,2\t67108864$' >/dev/null
}
check "mariadb: MYSQL_USER over the network, initdb *.sql and *.sh ran, server option applied" mysql_user
mysql_greeting() { answer mariadb 3306 '' | grep -ac MariaDB >/dev/null; }
check "mariadb: server greeting on the published port" mysql_greeting
check "mariadb: docker stop shuts the server down cleanly" stops_cleanly mariadb

# DynamoDB Local: compose's health check, then a table created and listed from the host.
check "dynamodb-local: compose's health check (bash /dev/tcp)" \
  within 30 in_container dynamodb bash -c 'exec 3<>/dev/tcp/127.0.0.1/8000'
dynamodb() { # OPERATION JSON: one DynamoDB API call (DynamoDB Local accepts any signature)
  curl -sf -m 10 "http://127.0.0.1:$(host_port dynamodb 8000)/" -H "X-Amz-Target: DynamoDB_20120810.$1" \
    -H 'Content-Type: application/x-amz-json-1.0' \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0' \
    -d "$2"
}
table() {
  dynamodb CreateTable '{"TableName": "image-check", "BillingMode": "PAY_PER_REQUEST",
    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
    "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}]}' >/dev/null \
    && dynamodb ListTables '{}' | grep -c image-check >/dev/null
}
check "dynamodb-local: CreateTable and ListTables from the host" table

log "checked in $((SECONDS - started)) s: $failures check(s) failed"
((failures == 0))
