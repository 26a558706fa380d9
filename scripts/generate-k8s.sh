#!/usr/bin/env bash
# Regenerates k8s/ (plain Kubernetes manifests) from the Helm chart's default values.
#
# Usage: scripts/generate-k8s.sh [--help]
#
# Helm runs in-process through helm-java (the deployment module's tests), so no helm binary is
# needed and the render is exactly the one the drift test (KubernetesManifestsTest) compares
# k8s/ against. Edit the chart (helm/supermarket), never k8s/, then run this and commit both.
set -euo pipefail

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
fi

cd "$(dirname "$0")/.."
JAVA_HOME="${JAVA_HOME:-$(scripts/find-jdk.sh)}"
export JAVA_HOME

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! ./mvnw -B -ntp -q -pl deployment -am test \
        -Dtest=KubernetesManifestsTest -Dsurefire.failIfNoSpecifiedTests=false -Dk8s.regenerate=true \
        >"$log" 2>&1; then
    grep -v '^WARNING' "$log" >&2
    echo "generate-k8s: rendering the chart failed (output above)" >&2
    exit 1
fi
git status --short k8s/
echo "k8s/ regenerated from helm/supermarket ($(ls k8s/*.yaml | wc -l) files)."
