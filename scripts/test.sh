#!/usr/bin/env bash
# Runs every test of the platform: unit tests, integration tests against a real RabbitMQ
# (sharding plugin) / MariaDB / Redis / DynamoDB Local, the offline deployment checks and
# terraform fmt/validate where terraform is installed; then the README's own commands: every
# script's --help, docker-compose.yml end to end per profile (scripts/compose-test.sh), and a
# small scripts/run-local.sh per profile (MySQL, DynamoDB), each of which must pass its
# exactly-once pipeline check and answer the GETs; the sales page's browser test after a run
# with till authentication and two store partitions (Debian's chromium, playwright-core); then a
# CI-sized fault run.
# Starts the services it needs, finds a JDK 21+, and fails if any test was skipped.
# Usage: scripts/test.sh [extra Maven arguments, e.g. -pl purchase-api -am]
# Environment: TEST_SERVICES=containers (default) runs the integration tests' services as
# containers (Docker engine from scripts/docker-engine.sh, images from scripts/images.sh);
# TEST_SERVICES=local runs them against scripts/local-services.sh, for a machine without Docker.
# COMPOSE=false skips the docker-compose end-to-end runs (scripts/compose-test.sh, both
# profiles, about 3 minutes once the images exist);
# SMOKE=false skips the run-local smoke runs (they need every module built);
# PAGE=false skips the sales page's browser run (scripts/run-local.sh --page-test, about 4 minutes);
# FAULTS=false skips the CI-sized fault run (scripts/faults.sh, two crashes, a broker link
# cut and late re-sends of accepted purchases, about 6 minutes).
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  exit 0
fi

cd "$(dirname "$0")/.."
log() { printf '[test] %s\n' "$*" >&2; }
TEST_SERVICES="${TEST_SERVICES:-containers}"
case "$TEST_SERVICES" in
  local)
    # No Docker: the machine's own broker, for the tests and the local runs alike.
    export LOCAL_BROKER="${LOCAL_BROKER:-host}" CLUSTER_RUNTIME="${CLUSTER_RUNTIME:-processes}"
    scripts/local-services.sh
    ;;
  containers)
    scripts/docker-engine.sh
    scripts/images.sh
    set -a
    eval "$(scripts/images.sh --print)"
    set +a
    # No registry serves Ryuk's image here; the tests remove their containers at exit themselves.
    export TESTCONTAINERS_RYUK_DISABLED=true
    # The engine runs on this machine, so published ports are on localhost (also where this
    # machine is itself a container, which Testcontainers would otherwise reach by a gateway).
    export TESTCONTAINERS_HOST_OVERRIDE="${TESTCONTAINERS_HOST_OVERRIDE:-localhost}"
    # shellcheck source=lib/test-containers.sh
    source scripts/lib/test-containers.sh
    remove_leftover_test_containers
    ;;
  *) log "FAILED: TEST_SERVICES is '$TEST_SERVICES': choose containers or local"; exit 1 ;;
esac
JAVA_HOME="$(scripts/find-jdk.sh)"
export JAVA_HOME
echo "[test] using JDK at $JAVA_HOME" >&2

# The deployment module checks the chart's alerts and dashboard queries with the real promtool.
if ! command -v promtool >/dev/null 2>&1; then
  echo "[test] installing promtool (Debian package prometheus)" >&2
  apt-get update -qq
  # A policy-rc.d answering 101 installs it without starting the Prometheus server it ships.
  policy=""
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  [[ -z "$policy" ]] || rm -f "$policy"
fi

# The deployment module's EksScriptTest lints scripts/eks.sh with the real shellcheck and runs
# its --dry-run, which builds the manifests with jq.
for tool in shellcheck jq; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "[test] installing $tool (Debian package $tool)" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$tool" >/dev/null
  fi
done

# purchase-api's build runs npm ci, Vite and Vitest for the sales page (vite 7 needs Node.js 20.19+).
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a == 20 && b >= 19) ? 0 : 1)' 2>/dev/null \
    || ! command -v npm >/dev/null 2>&1; then
  echo "[test] FAILED: Node.js 20.19+ with npm is needed (the sales page's build), found: $(node --version 2>&1 || true)" >&2
  exit 1
fi

# The load client's HTML report test and the sales page's browser test run headless Chromium.
if ! command -v chromium >/dev/null 2>&1; then
  echo "[test] installing chromium (Debian package chromium)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

./mvnw -B -ntp verify -Dtest.services="$TEST_SERVICES" "$@"

# Terraform's own checks need the terraform binary (and its registry for validate); the
# script says SKIPPED for what it cannot run and fails on a formatting error.
scripts/check-terraform.sh

# Surefire and Failsafe count skips without failing; here a skipped test is a failure,
# because it usually hides a missing service.
skipped=$(find . -path '*/target/*-reports/TEST-*.xml' -print0 \
  | xargs -0 -r grep -lE 'skipped="[1-9]' || true)
if [[ -n "$skipped" ]]; then
  echo "[test] FAILED: these test classes skipped tests (a missing service?):" >&2
  echo "$skipped" >&2
  exit 1
fi
its=$(find . -path '*/target/failsafe-reports/TEST-*.xml' | wc -l)
echo "[test] all tests ran, none skipped ($its integration test classes)" >&2

# The smoke and fault runs below run the services from their jars against the local services
# (the project's RabbitMQ as a container, scripts/lib/local-broker.sh).
[[ "$TEST_SERVICES" == local ]] || scripts/local-services.sh

# The README's commands, as a new user runs them from this checkout.
for script in scripts/*.sh */bench/*.sh; do
  "$script" --help >/dev/null || { echo "[test] FAILED: $script --help" >&2; exit 1; }
done
echo "[test] every script answers --help" >&2
# docker-compose.yml end to end on the Docker engine, per profile: the images (local stand-ins),
# up, everything healthy, the load client's container through nginx, the exactly-once verify,
# both GETs, down -v leaving nothing (scripts/compose-test.sh).
if [[ "${COMPOSE:-true}" != false ]]; then
  for profile in mysql dynamodb; do
    echo "[test] compose run: scripts/compose-test.sh --profile $profile --skip-package" >&2
    scripts/compose-test.sh --profile "$profile" --skip-package \
      || { echo "[test] FAILED: the $profile compose run; logs in runs/compose-$profile" >&2; exit 1; }
  done
  echo "[test] compose runs passed (mysql, dynamodb)" >&2
fi
if [[ "${SMOKE:-true}" != false ]]; then
  for profile in mysql dynamodb; do
    flag=(); [[ "$profile" == dynamodb ]] && flag=(--dynamodb)
    echo "[test] smoke run: scripts/run-local.sh ${flag[*]} --stores 4 --purchases-per-hour 20 --threshold 'failed<1%'" >&2
    # A generous threshold, so the client's exit status on thresholds is exercised end to end.
    scripts/run-local.sh "${flag[@]}" --stores 4 --purchases-per-hour 20 --threshold 'failed<1%' \
      --label "smoke-$profile" --run-dir "runs/smoke-$profile" \
      || { echo "[test] FAILED: the $profile smoke run; logs in runs/smoke-$profile" >&2; exit 1; }
  done
  echo "[test] smoke runs passed (mysql, dynamodb)" >&2
fi
# The sales page in Chromium after a real run: its views exactly the GETs and the database's
# count, live refresh, sign-in with till authentication on; over two store partitions, so the
# chain's top items are merged for real.
if [[ "${PAGE:-true}" != false ]]; then
  echo "[test] sales page: scripts/run-local.sh --page-test --store-partitions 2 --stores 4 --purchases-per-hour 20" >&2
  scripts/run-local.sh --page-test --store-partitions 2 --stores 4 --purchases-per-hour 20 --label page --run-dir runs/page \
    || { echo "[test] FAILED: the sales page's browser run; logs in runs/page" >&2; exit 1; }
  echo "[test] sales page passed in Chromium (screenshots in runs/page/screenshots)" >&2
fi
# A CI-sized fault run, so a regression in exactly-once shows here: two crashes, one copy of
# store-service killed while the other answers every GET (kill-store-copy), a simulated
# broker restart (every broker link cut through the fault proxy for 5 s) mid-run at small load,
# and late-retry (two stores re-send an accepted purchase after 4,200 further purchases of
# theirs, beyond store-service's dedup window), about a minute each; with a Docker engine also
# node-loss and node-partition (a 3-container cluster of the project's RabbitMQ, the node leading
# most queues killed, or cut off its peers, under load, 2 to 4 minutes each); each run bounded by
# --timeout, failing on any purchase lost or counted twice.
if [[ "${FAULTS:-true}" != false ]]; then
  fault_run=(--fault kill-purchases-service --fault kill-store-service --fault kill-store-copy --fault broker-restart
    --fault late-retry)
  [[ "$TEST_SERVICES" == local ]] || fault_run+=(--fault node-loss --fault node-partition)
  fault_run+=(--stores 8 --purchases-per-hour 100 --at 3 --outage-for 5 --timeout 300 --run-dir runs/faults-ci)
  echo "[test] fault run: scripts/faults.sh ${fault_run[*]}" >&2
  FAULTS_NAME=ci scripts/faults.sh "${fault_run[@]}" \
    || { echo "[test] FAILED: the fault run lost or duplicated purchases; logs in runs/faults-ci" >&2; exit 1; }
  echo "[test] fault run passed: nothing lost, nothing duplicated" >&2
fi
