#!/usr/bin/env bash
# Builds, without any image registry, local stand-ins for every image the project runs on: a
# Debian bookworm base made by debootstrap, a Java image from the JDK that scripts/find-jdk.sh
# finds (build and runtime base of the services' Dockerfiles), and one image per folder of
# deploy/images/ (RabbitMQ with its plugins, MariaDB for `mysql`, Redis, DynamoDB Local,
# nginx), from Debian's packages. Each is tagged supermarket-local/NAME:latest and labelled
# with a hash of what it was built from; a second run rebuilds only what changed.
# Prints (and writes to runs/images.env) the variables that point docker-compose.yml, the
# Dockerfiles and the Testcontainers-based tests at these images; their defaults are the
# official images, so where a registry is reachable nothing of this is needed.
# Usage: scripts/images.sh [--print]   (--print: only print the variables; build nothing)
# Needs root and a running Docker engine (scripts/docker-engine.sh starts one).
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

cd "$(dirname "$0")/.."
log() { printf '[images] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

PREFIX=supermarket-local
CACHE="${IMAGES_CACHE:-/var/cache/supermarket-images}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

# The variables, one per image the project names; runs/images.env holds them for scripts.
variables() {
  cat <<VARS
JAVA_BUILD_IMAGE=$PREFIX/java:latest
JAVA_RUNTIME_IMAGE=$PREFIX/java:latest
RABBITMQ_IMAGE=$PREFIX/rabbitmq:latest
MYSQL_IMAGE=$PREFIX/mariadb:latest
MARIADB_IMAGE=$PREFIX/mariadb:latest
REDIS_IMAGE=$PREFIX/redis:latest
DYNAMODB_IMAGE=$PREFIX/dynamodb-local:latest
NGINX_IMAGE=$PREFIX/nginx:latest
VARS
}
if [[ "${1:-}" == "--print" ]]; then
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

# --- the Debian base: debootstrap once, imported as an image --------------------------
base_image=$PREFIX/debian:bookworm
if ! docker image inspect "$base_image" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null 2>&1 || {
    log "installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  }
  rootfs="$CACHE/bookworm"
  rm -rf "$rootfs" && mkdir -p "$CACHE"
  log "debootstrap --variant=minbase bookworm (about 30 s)"
  debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
    || { tail -n 20 "$CACHE/debootstrap.log" >&2; die "debootstrap failed; its log is $CACHE/debootstrap.log"; }
  # Keep images small: no apt lists or caches in the base.
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
  tar -C "$rootfs" -c . | docker import --change 'CMD ["bash"]' - "$base_image" >/dev/null
  rm -rf "$rootfs"
  log "built $base_image"
fi

# build NAME CONTEXT [docker build arguments...]: builds supermarket-local/NAME from CONTEXT
# unless an image built from the same sources exists.
build() {
  local name="$1" context="$2"; shift 2
  local image="$PREFIX/$name:latest" hash
  hash="$(hash_of "$context")"
  if [[ "$(built_hash "$image")" == "$hash" ]]; then
    log "$image is current"
    return 0
  fi
  log "building $image"
  DOCKER_BUILDKIT=0 docker build -q --build-arg "BASE_IMAGE=$base_image" --label "supermarket.source=$hash" \
    -t "$image" "$@" "$context" >/dev/null || die "docker build of $image failed"
}

# --- one image per folder of deploy/images, java first (the others may start from it) -------
# A folder with a prepare.sh gets a build context of its own under $CACHE, which prepare.sh
# completes with what the repository does not hold (the JDK, DynamoDB Local's jars).
java_image=$PREFIX/java:latest
build_folder() {
  local name="$1" dir="deploy/images/$1" context="deploy/images/$1"
  if [[ -x "$dir/prepare.sh" ]]; then
    context="$CACHE/$name-context"
    mkdir -p "$context"
    find "$dir" -mindepth 1 -maxdepth 1 ! -name prepare.sh -exec cp -a {} "$context/" \;
    "$dir/prepare.sh" "$context" || die "$dir/prepare.sh failed"
  fi
  build "$name" "$context" --build-arg "JAVA_IMAGE=$java_image"
}
build_folder java
for dir in deploy/images/*/; do
  name="$(basename "$dir")"
  [[ "$name" == java ]] || build_folder "$name"
done

mkdir -p runs
variables | tee runs/images.env
