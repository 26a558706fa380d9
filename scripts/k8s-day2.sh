#!/usr/bin/env bash
# What operators do to the platform every week, on the release of scripts/k8s-install.sh: each step
# under paced load (POSTs and GETs, the load client's retries off), then `verify` (0 lost,
# 0 duplicated on every copy of every partition, against the counts before the step) and
# `check-gets` (both GETs exact against the database). docs/faults.md records each real run.
#
# Usage: scripts/k8s-day2.sh [options] [STEP...]   (no step: all of them, in this order)
#   api-rollout    purchase-api rolled to a new image tag; 0 failed requests
#   store-rollout  store-service rolled to a new image tag, copy 1 first (storeService.upgradeCopies=1),
#                  then copy 0; 0 failed requests
#   store-claim    a pod of store copy 1 deleted with its claim: it rebuilds from copy 0; 0 failed requests
#   drain-broker   kubectl drain of the node holding broker 0 (the budgets respected), then uncordon
#   drain-store    kubectl drain of the node holding the most store-service pods, then uncordon
#   kill-broker    broker 1 deleted at once (--grace-period=0 --force)
#   upgrade        helm upgrade from the previous chart version to this one, helm rollback, this one again
#   copies         storeService.copies 2 -> 1 -> 2: copy 1 comes back empty and rebuilds from copy 0,
#                  placed while copy 0 is held (upgradeCopies=1), then copy 0 rolls
# Options:
#   --rate R        requests/s of each step's load (default 100, a quarter of them GETs)
#   --stores N      store threads (default 64, at most values-local's 128)
#   --duration D    each step's load, in the load client's form (default 5m); the step's operation
#                   starts 30 s into it
#   --previous REF  upgrade: the commit of the previous chart version (default: the parent of the
#                   commit that set helm/supermarket/Chart.yaml's version)
#   --dry-run       print every command and manifest instead of running them
#   -h, --help      this help
# The database and the client pods run on the control-plane node, which no step drains.
# Needs the release installed (scripts/k8s-install.sh), kubectl and helm as that script left them.
set -euo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
log() { printf '[k8s-day2] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/rabbitmq-version.sh
source scripts/lib/rabbitmq-version.sh
# shellcheck source=scripts/lib/k8s-platform.sh
source scripts/lib/k8s-platform.sh

readonly STEPS=(api-rollout store-rollout store-claim drain-broker drain-store kill-broker upgrade copies)
readonly ROLLOUT_TAG=0.1.0-day2
readonly WORKLOADS=(deployment/supermarket-purchase-api deployment/supermarket-purchases-service
  statefulset/supermarket-store-service statefulset/supermarket-store-service-c1 statefulset/supermarket-rabbitmq-server)
rate=100 stores=64 duration=5m previous="" dry_run=false steps=()
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --rate) rate="${2:?}"; shift 2 ;;
    --stores) stores="${2:?}"; shift 2 ;;
    --duration) duration="${2:?}"; shift 2 ;;
    --previous) previous="${2:?}"; shift 2 ;;
    --dry-run) dry_run=true; shift ;;
    *)
      [[ " ${STEPS[*]} " == *" $1 "* ]] || { usage >&2; die "unknown argument '$1'"; }
      steps+=("$1"); shift ;;
  esac
done
((${#steps[@]})) || steps=("${STEPS[@]}")
((stores >= 1 && stores <= 128)) || die "--stores: 1..128 (values-local.yaml's platform.maxStores)"
[[ "$rate" =~ ^[1-9][0-9]*$ ]] || die "--rate: a positive whole number of requests/s"
# The day's client pods write to a claim of their own, bound on the control-plane node with them.
RESULTS_CLAIM="$RELEASE-day2-results" CLIENT_PLACEMENT="$CONTROL_PLANE_PLACEMENT"
run_id=""

# The release's values: the preset (of CHART, default this checkout's) and the broker image that
# k8s-install.sh sets.
release_values() {
  echo -f "${1:-helm/supermarket}/values-local.yaml" --set "rabbitmq.cluster.image=supermarket-local/rabbitmq:$RABBITMQ_VERSION"
}

# start_load [THRESHOLD]: the chart's load-client Job for run $run_id, rendered with this step's
# options and applied beside the release (a release upgrade must not wait for it), on the
# control-plane node with the day's claim; THRESHOLD fails the run unless it holds.
start_load() {
  local args rendered
  local job
  args=$(jq -nc --arg rate "$rate" --arg duration "$duration" --arg threshold "${1:-}" \
    '["--rate", $rate, "--duration", $duration, "--all-stores-at-once", "--retries", "0", "--get-ratio", "0.33"]
     + (if $threshold == "" then [] else ["--threshold", $threshold] end)')
  # helm template assumes Kubernetes 1.20 unless told, which the chart's kubeVersion refuses.
  local kube_version=v1.35.4
  $dry_run || kube_version=$(command kubectl --context "$CONTEXT" version -o json | jq -r .serverVersion.gitVersion)
  # shellcheck disable=SC2046 # the values are words
  rendered=$(helm template "$RELEASE" helm/supermarket -n "$NAMESPACE" $(release_values) --kube-version "$kube_version" \
    --set loadClient.enabled=true --set loadClient.run="$run_id" --set loadClient.maxStores="$stores" \
    --set-json "loadClient.extraArgs=$args" --show-only templates/load-client-job.yaml)
  # As JSON; under --dry-run, the helm command and a stand-in Job: the options and what the placement
  # changes. A rendered object names no namespace (helm install sets it), so it is set here.
  if $dry_run; then
    echo "$rendered"
    job=$(jq -n --arg name "$RELEASE-load-client-$run_id" --argjson args "$args" \
      '{apiVersion: "batch/v1", kind: "Job", metadata: {name: $name}, spec: {template: {spec: {
        containers: [{name: "load-client", args: (["run"] + $args)}],
        volumes: [{name: "results", persistentVolumeClaim: {claimName: "from-the-chart"}}]}}}}')
  else
    job=$(command kubectl --context "$CONTEXT" create --dry-run=client -o json -f - <<<"$rendered")
  fi
  apply_json "$(jq --argjson placement "$CLIENT_PLACEMENT" --arg claim "$RESULTS_CLAIM" --arg ns "$NAMESPACE" '
      if .kind == "List" then .items[] else . end | select(.kind == "Job")
      | .metadata.namespace = $ns
      | .spec.template.spec += $placement
      | (.spec.template.spec.volumes[] | select(.name == "results") | .persistentVolumeClaim.claimName) = $claim' <<<"$job")"
  kubectl wait --for=jsonpath='{.status.ready}'=1 "job/$RELEASE-load-client-$run_id" -n "$NAMESPACE" --timeout=5m
  run sleep 30
}

# finish_load: waits for run $run_id's Job and prints its summary; false if it failed (a threshold).
finish_load() {
  local job="$RELEASE-load-client-$run_id" state=""
  if $dry_run; then
    kubectl wait "job/$job" -n "$NAMESPACE" --for=condition=Complete
    return 0
  fi
  while [[ -z "$state" ]]; do
    sleep 10
    state=$(command kubectl --context "$CONTEXT" get "job/$job" -n "$NAMESPACE" \
      -o jsonpath='{.status.conditions[?(@.status=="True")].type}' | grep -oE 'Complete|Failed' || true)
  done
  command kubectl --context "$CONTEXT" logs "job/$job" -n "$NAMESPACE" --tail=30
  [[ "$state" == Complete ]]
}

# await_release: every workload of the release rolled out and ready again.
await_release() {
  local workload
  for workload in "${WORKLOADS[@]}"; do
    kubectl rollout status "$workload" -n "$NAMESPACE" --timeout=15m
  done
}

# node_of POD: the node the pod runs on.
node_of() {
  if $dry_run; then echo "node-of-$1"; return; fi
  command kubectl --context "$CONTEXT" get pod "$1" -n "$NAMESPACE" -o jsonpath='{.spec.nodeName}'
}

# upgrade ARGS...: helm upgrade of the release with its values now and ARGS, waiting for it.
upgrade() {
  # shellcheck disable=SC2046 # the values are words
  helm upgrade "$RELEASE" helm/supermarket -n "$NAMESPACE" --reset-then-reuse-values $(release_values) "$@" \
    --wait --timeout 20m
}

# retag SERVICE: its image under $ROLLOUT_TAG, loaded into the nodes (a new tag rolls its pods).
retag() {
  local image="supermarket-local/supermarket/$1"
  run docker tag "$image:0.1.0" "$image:$ROLLOUT_TAG"
  run scripts/k8s-local.sh load "$image:$ROLLOUT_TAG"
}

op_api_rollout() {
  retag purchase-api
  upgrade --set purchaseApi.image.tag="$ROLLOUT_TAG"
}

op_store_rollout() {
  retag store-service
  upgrade --set storeService.image.tag="$ROLLOUT_TAG" --set storeService.upgradeCopies=1
  upgrade --set storeService.upgradeCopies=0
}

op_store_claim() {
  local pod="$RELEASE-store-service-c1-0"
  kubectl delete pvc "state-$pod" -n "$NAMESPACE" --wait=false
  kubectl delete pod "$pod" -n "$NAMESPACE"
}

drain() { # POD: drains the node it runs on, then makes it schedulable again
  local node
  node=$(node_of "$1")
  log "draining $node (holding $1)"
  kubectl drain "$node" --ignore-daemonsets --delete-emptydir-data --timeout=20m
  kubectl uncordon "$node"
}
op_drain_broker() { drain "$RELEASE-rabbitmq-server-0"; }
# The node holding the most store-service pods (4 on 3 workers: one holds two), the hardest to drain.
op_drain_store() {
  local pod="$RELEASE-store-service-0"
  $dry_run || pod=$(command kubectl --context "$CONTEXT" get pods -n "$NAMESPACE" -o json \
    -l app.kubernetes.io/component=store-service,app.kubernetes.io/instance="$RELEASE" \
    | jq -r '[.items[] | {node: .spec.nodeName, pod: .metadata.name}] | group_by(.node) | max_by(length) | .[0].pod')
  drain "$pod"
}

op_kill_broker() {
  kubectl delete pod "$RELEASE-rabbitmq-server-1" -n "$NAMESPACE" --grace-period=0 --force
}

op_upgrade() {
  local chart_version previous_chart
  chart_version=$(awk '$1 == "version:" { print $2 }' helm/supermarket/Chart.yaml)
  if [[ -z "$previous" ]]; then
    previous=$(git log -n 1 --format=%H -S"version: $chart_version" -- helm/supermarket/Chart.yaml)^
  fi
  git rev-parse -q --verify "$previous^{commit}" >/dev/null || die "no commit '$previous' here (a shallow clone? name it with --previous)"
  previous_chart=$(mktemp -d)
  git archive "$previous" helm/supermarket | tar -x -C "$previous_chart"
  log "from chart $(awk '$1 == "version:" { print $2 }' "$previous_chart/helm/supermarket/Chart.yaml") ($previous) to $chart_version"
  # shellcheck disable=SC2046 # the values are words
  helm upgrade "$RELEASE" "$previous_chart/helm/supermarket" -n "$NAMESPACE" --reset-values \
    $(release_values "$previous_chart/helm/supermarket") \
    --wait --timeout 20m
  await_release
  upgrade
  await_release
  helm rollback "$RELEASE" -n "$NAMESPACE" --wait --timeout 20m
  await_release
  upgrade
  rm -rf "$previous_chart"
}

op_copies() {
  upgrade --set storeService.copies=1
  upgrade --set storeService.copies=2 --set storeService.upgradeCopies=1
  upgrade --set storeService.upgradeCopies=0
}

# step NAME: the counts saved, the load started, the operation, the release ready again, the load's
# end, then both checks (which end the script if they fail). A step that must fail no request runs
# its load with that threshold; a load that failed is added to $failed.
step() {
  local name="$1" threshold="" started=$SECONDS verdict
  case "$name" in api-rollout | store-rollout | store-claim) threshold="failed<=0" ;; esac
  run_id="$(printf '%.11s' "${name//-/}")-$(date -u +%H%M%S)"
  log "step $name (run $run_id)${threshold:+, requiring $threshold}"
  save_baseline
  start_load "$threshold"
  timed "$name" "op_${name//-/_}"
  await_release
  if finish_load; then verdict="load passed"; else verdict="load FAILED (${threshold:-see its summary})"; fi
  check_run
  log "step $name: $verdict; checks passed; $((SECONDS - started)) s"
  [[ "$verdict" == "load passed" ]] || failed+=("$name")
}

# The day's claim, bound on the control-plane node by the first Job that mounts it.
apply_json "$(jq -n --arg ns "$NAMESPACE" --arg name "$RESULTS_CLAIM" '{apiVersion: "v1", kind: "PersistentVolumeClaim",
  metadata: {name: $name, namespace: $ns}, spec: {accessModes: ["ReadWriteOnce"], resources: {requests: {storage: "2Gi"}}}}')"
ensure_helm
failed=()
for name in "${steps[@]}"; do
  step "$name"
done
((${#failed[@]} == 0)) || die "steps whose load failed: ${failed[*]}"
log "every step: 0 lost, 0 duplicated, both GETs exact"
