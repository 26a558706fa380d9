#!/usr/bin/env bash
# Runs every test of the platform: unit tests, integration tests against the real local
# RabbitMQ (sharding plugin) / MariaDB / DynamoDB Local, the offline deployment checks and
# terraform fmt/validate where terraform is installed; then the README's own commands: every
# script's --help, and a small scripts/run-local.sh per profile (MySQL, DynamoDB), each of which
# must pass its exactly-once pipeline check and answer both GETs; then a CI-sized fault run.
# Starts the local services it needs, finds a JDK 21+, and fails if any test was skipped.
# Usage: scripts/test.sh [extra Maven arguments, e.g. -pl purchase-api -am]
# Environment: SMOKE=false skips the run-local smoke runs (they need every module built);
# FAULTS=false skips the CI-sized fault run (scripts/faults.sh, two crashes, a broker link
# cut and late re-sends of accepted purchases, about 6 minutes).
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi

cd "$(dirname "$0")/.."
scripts/local-services.sh
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

./mvnw -B -ntp verify "$@"

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

# The README's commands, as a new user runs them from this checkout.
for script in scripts/*.sh */bench/*.sh; do
  "$script" --help >/dev/null || { echo "[test] FAILED: $script --help" >&2; exit 1; }
done
echo "[test] every script answers --help" >&2
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
# A CI-sized fault run, so a regression in exactly-once shows here: two crashes, a simulated
# broker restart (every broker link cut through the fault proxy for 5 s) mid-run at small load,
# and late-retry (two stores re-send an accepted purchase after 4,200 further purchases of
# theirs, beyond store-service's dedup window), about a minute each, each run bounded by
# --timeout, failing on any purchase lost or counted twice.
if [[ "${FAULTS:-true}" != false ]]; then
  fault_run=(--fault kill-purchases-service --fault kill-store-service --fault broker-restart --fault late-retry
    --stores 8 --purchases-per-hour 100 --at 3 --outage-for 5 --timeout 300 --run-dir runs/faults-ci)
  echo "[test] fault run: scripts/faults.sh ${fault_run[*]}" >&2
  FAULTS_NAME=ci scripts/faults.sh "${fault_run[@]}" \
    || { echo "[test] FAILED: the fault run lost or duplicated purchases; logs in runs/faults-ci" >&2; exit 1; }
  echo "[test] fault run passed: nothing lost, nothing duplicated" >&2
fi
