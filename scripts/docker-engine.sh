#!/usr/bin/env bash
# Makes sure a Docker engine answers on this machine: installs Debian's docker.io (and
# docker-compose 1.29, debootstrap) if missing, starts dockerd if it is not running, and waits
# until it answers. Safe to run again and again; needs root for the install and the start.
# Usage: scripts/docker-engine.sh [--help]
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

log() { printf '[docker-engine] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

if docker info >/dev/null 2>&1; then
  exit 0
fi
[[ $(id -u) -eq 0 ]] || die "no Docker engine answers, and starting one needs root"
if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker-compose >/dev/null 2>&1 \
    || ! command -v debootstrap >/dev/null 2>&1; then
  log "installing docker.io, docker-compose and debootstrap (Debian packages)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose debootstrap >/dev/null
fi
if ! pgrep -x dockerd >/dev/null; then
  log "starting dockerd (log: /var/log/dockerd.log)"
  nohup dockerd >>/var/log/dockerd.log 2>&1 &
fi
for _ in $(seq 60); do
  docker info >/dev/null 2>&1 && { log "Docker engine up"; exit 0; }
  sleep 1
done
die "dockerd did not answer within 60 s; see /var/log/dockerd.log"
