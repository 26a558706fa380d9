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
#   partitions     storeService.partitions P -> --partitions -> P by docs/operations.md, "Changing the
#                  partition count" (the chart's procedure): purchase-api at 0 replicas (the load's
#                  requests fail meanwhile), the storeX shard queues emptied, `store-service
#                  repartition` in a pod of the release's store-service image, copy 0's claims
#                  replaced by what it wrote, copy 0 started alone on them, then the other copies
#                  (copy 0 held), every copy's GET /state/summary checked against what was written,
#                  then purchase-api back
#   broker-password  purchases-service's broker password rotated by docs/operations.md, "Broker
#                  users": the Secret, its User reconciled (the broker checked to take the new
#                  password and refuse the old), the pods rolled by the Secret's checksum
#                  (secretChecksums), then its new pods' connections and consumers checked
# Options:
#   --rate R        requests/s of each step's load (default 100, a quarter of them GETs)
#   --stores N      store threads (default 64, at most values-local's 128)
#   --duration D    each step's load, in the load client's form (default 5m); the step's operation
#                   starts 30 s into it
#   --previous REF  upgrade: the commit of the previous chart version (default: the parent of the
#                   commit that set helm/supermarket/Chart.yaml's version)
#   --partitions P  partitions: the count changed to, then back from (default 4; it must divide the
#                   storeX shard count, which the chart checks before anything stops)
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

readonly STEPS=(api-rollout store-rollout store-claim drain-broker drain-store kill-broker upgrade copies partitions
  broker-password)
readonly ROLLOUT_TAG=0.1.0-day2
readonly WORKLOADS=(deployment/supermarket-purchase-api deployment/supermarket-purchases-service
  statefulset/supermarket-store-service statefulset/supermarket-store-service-c1 statefulset/supermarket-rabbitmq-server)
rate=100 stores=64 duration=5m previous="" partitions=4 dry_run=false steps=()
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --rate) rate="${2:?}"; shift 2 ;;
    --stores) stores="${2:?}"; shift 2 ;;
    --duration) duration="${2:?}"; shift 2 ;;
    --previous) previous="${2:?}"; shift 2 ;;
    --partitions) partitions="${2:?}"; shift 2 ;;
    --dry-run) dry_run=true; shift ;;
    *)
      [[ " ${STEPS[*]} " == *" $1 "* ]] || { usage >&2; die "unknown argument '$1'"; }
      steps+=("$1"); shift ;;
  esac
done
((${#steps[@]})) || steps=("${STEPS[@]}")
((stores >= 1 && stores <= 128)) || die "--stores: 1..128 (values-local.yaml's platform.maxStores)"
[[ "$rate" =~ ^[1-9][0-9]*$ ]] || die "--rate: a positive whole number of requests/s"
[[ "$partitions" =~ ^[1-9][0-9]*$ ]] || die "--partitions: a positive whole number"
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

# --- partitions: docs/operations.md, "Changing the partition count", the chart's procedure.
# repartition runs in a pod of the release's own store-service image, on the control-plane node with
# the clients: the same code as the counts it reads (the snapshot format is the service's), no jar
# built on this machine and no port-forwards; it reaches each partition's copy 0 by its name under
# the headless Service. What it writes stays in that pod's emptyDir until copied into the claims.
readonly REPARTITION_POD="$RELEASE-store-repartition" STATE_DIR=/var/lib/store-service
readonly SELECT_API="app.kubernetes.io/component=purchase-api,app.kubernetes.io/instance=$RELEASE"
readonly SELECT_STORES="app.kubernetes.io/component=store-service,app.kubernetes.io/instance=$RELEASE"

# jsonpath OBJECT EXPRESSION [DRY-RUN ANSWER]: a field of a live object; under --dry-run the answer given.
jsonpath() {
  if $dry_run; then echo "${3:-}"; return; fi
  command kubectl --context "$CONTEXT" get "$1" -n "$NAMESPACE" -o "jsonpath=$2"
}

# capture COMMAND...: runs it for its output; under --dry-run its "+" line goes to the transcript
# (standard error) rather than into the caller's variable, and the output is empty.
capture() { if $dry_run; then "$@" >&2; else "$@"; fi; }

# rabbitmqctl ARGS...: on broker 0.
rabbitmqctl() { kubectl exec -i "$RELEASE-rabbitmq-server-0" -c rabbitmq -n "$NAMESPACE" -- rabbitmqctl "$@"; }

# await SECONDS WHAT COMMAND...: runs COMMAND every 5 s until it succeeds (once under --dry-run).
await() {
  local seconds="$1" what="$2" deadline=$((SECONDS + $1)); shift 2
  until "$@" || $dry_run; do
    ((SECONDS < deadline)) || die "$what: not after $seconds s"
    sleep 5
  done
}

no_pods() { [[ -z "$(capture kubectl get pods -n "$NAMESPACE" -l "$1" -o name)" ]]; }

# queues_empty PATTERN: every queue whose name matches holds no message, ready or unacknowledged.
queues_empty() {
  local held
  held=$(capture rabbitmqctl list_queues -p / name messages --formatter json -q \
    | jq --arg names "$1" '[.[] | select(.name | test($names)) | .messages] | add // 0')
  $dry_run || log "queues $1 hold $held message(s)"
  [[ "$held" == 0 ]]
}
readonly STORE_QUEUES='^(sharding: )?storeX[. ]'

# The store-service StatefulSets (copy 0 first), by their label.
store_sets() {
  if $dry_run; then printf '%s\n' "$RELEASE-store-service" "$RELEASE-store-service-c1"; return; fi
  command kubectl --context "$CONTEXT" get statefulsets -n "$NAMESPACE" -l "$SELECT_STORES" \
    -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort
}

# store_pod NAME COMMAND...: a pod of copy 0's store-service image and security contexts, running
# COMMAND, as JSON (the live StatefulSet's, a stand-in under --dry-run).
store_pod() {
  local name="$1" template='{"securityContext": {"runAsUser": 10001, "runAsGroup": 10001, "fsGroup": 10001},
    "containers": [{"image": "supermarket-local/supermarket/store-service:0.1.0", "imagePullPolicy": "Never",
      "securityContext": {"readOnlyRootFilesystem": true}}]}'
  shift
  $dry_run || template=$(command kubectl --context "$CONTEXT" get statefulset "$RELEASE-store-service" -n "$NAMESPACE" \
    -o jsonpath='{.spec.template.spec}')
  jq -n --arg ns "$NAMESPACE" --arg name "$name" --arg release "$RELEASE" --argjson template "$template" --args '
    {apiVersion: "v1", kind: "Pod",
     metadata: {name: $name, namespace: $ns, labels: {"app.kubernetes.io/instance": $release}},
     spec: {restartPolicy: "Never", automountServiceAccountToken: false, terminationGracePeriodSeconds: 1,
       securityContext: $template.securityContext,
       containers: [$template.containers[0] | {name: "store", image, imagePullPolicy, securityContext,
         command: $ARGS.positional,
         resources: {requests: {cpu: "100m", memory: "512Mi"}, limits: {cpu: "1", memory: "512Mi"}}}]}}' "$@"
}

# repartition_seeds FROM TO: docs steps 3's command in the repartition pod, from copy 0 of partitions
# 0..FROM-1; prints its `wrote` lines (stand-ins under --dry-run).
repartition_seeds() {
  local from="$1" to="$2" urls=() p output
  for ((p = 0; p < from; p++)); do
    urls+=("http://$RELEASE-store-service-$p.$RELEASE-store-service:8081")
  done
  output=$(capture kubectl exec "$REPARTITION_POD" -n "$NAMESPACE" -- java org.springframework.boot.loader.launch.JarLauncher \
    repartition --partitions "$to" --out "/seeds/p$to" "${urls[@]}")
  if $dry_run; then
    for ((p = 0; p < to; p++)); do
      echo "wrote store partition $p of $to to /seeds/p$to/p$p: 0 stores, 0 purchases, 0 units, digest 0"
    done
    return
  fi
  local line
  while IFS= read -r line; do log "repartition: $line"; done <<<"$output"
  grep '^wrote ' <<<"$output"
}
readonly WROTE='^wrote store partition ([0-9]+) of ([0-9]+) to ([^:]+): ([0-9]+) stores, ([0-9]+) purchases, ([0-9]+) units, digest ([0-9a-f]+)$'

# copy_seed DIRECTORY POD: a new partition's state directory, from the repartition pod into POD's
# claim (tar through kubectl exec). Its root entry is skipped: the volume's root is not the pod's
# user's, so tar could not set its mode or time and would fail.
copy_seed() {
  local packs=(--context "$CONTEXT" exec "$REPARTITION_POD" -n "$NAMESPACE" -- tar -C "$1" -cf - .)
  local unpacks=(--context "$CONTEXT" exec -i "$2" -n "$NAMESPACE" -- tar -C "$STATE_DIR" --strip-components=1 -xf -)
  if $dry_run; then
    printf '+ kubectl'; printf ' %q' "${packs[@]}"; printf ' | kubectl'; printf ' %q' "${unpacks[@]}"; printf '\n'
  else
    command kubectl "${packs[@]}" | command kubectl "${unpacks[@]}"
  fi
}

# seed TO WROTE-LINE...: docs step 5: copy 0's claim of each new partition, made as its StatefulSet
# would (its claim template), filled through a short-lived pod that mounts it (spread over the zones).
seed() {
  local to="$1" claim='{"metadata": {"name": "state"}, "spec": {"accessModes": ["ReadWriteOnce"],
    "resources": {"requests": {"storage": "1Gi"}}}}' line q pods=()
  shift
  $dry_run || claim=$(command kubectl --context "$CONTEXT" get statefulset "$RELEASE-store-service" -n "$NAMESPACE" \
    -o jsonpath='{.spec.volumeClaimTemplates[0]}')
  for ((q = 0; q < to; q++)); do
    apply_json "$(jq --arg ns "$NAMESPACE" --arg name "state-$RELEASE-store-service-$q" \
      '{apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: {name: $name, namespace: $ns, labels: .metadata.labels},
        spec: (.spec | del(.volumeMode) | del(.dataSource))}' <<<"$claim")"
    apply_json "$(store_pod "$RELEASE-store-seed-$q" sleep infinity | jq --arg claim "state-$RELEASE-store-service-$q" \
      --arg dir "$STATE_DIR" --arg release "$RELEASE" '
      .metadata.labels["supermarket/store-seed"] = "true"
      | .spec.containers[0].volumeMounts = [{name: "state", mountPath: $dir}]
      | .spec.volumes = [{name: "state", persistentVolumeClaim: {claimName: $claim}}]
      | .spec.topologySpreadConstraints = [{maxSkew: 1, topologyKey: "topology.kubernetes.io/zone",
          whenUnsatisfiable: "ScheduleAnyway", labelSelector: {matchLabels: {"supermarket/store-seed": "true"}}}]')"
    pods+=("$RELEASE-store-seed-$q")
  done
  for line in "$@"; do
    [[ "$line" =~ $WROTE ]] || die "not a line of repartition's: $line"
    q="${BASH_REMATCH[1]}"
    kubectl wait --for=condition=Ready "pod/$RELEASE-store-seed-$q" -n "$NAMESPACE" --timeout=5m
    copy_seed "${BASH_REMATCH[3]}" "$RELEASE-store-seed-$q"
  done
  kubectl delete pod "${pods[@]}" -n "$NAMESPACE"
}

# check_summaries SET... -- WROTE-LINE...: every copy's GET /state/summary of each new partition
# (through the API server's pod proxy) is what repartition wrote for it.
check_summaries() {
  local sets=() line set summary expected
  while [[ "$1" != -- ]]; do sets+=("$1"); shift; done
  shift
  for line in "$@"; do
    [[ "$line" =~ $WROTE ]] || die "not a line of repartition's: $line"
    expected="${BASH_REMATCH[1]} of ${BASH_REMATCH[2]}: ${BASH_REMATCH[5]} purchases, ${BASH_REMATCH[6]} units, digest ${BASH_REMATCH[7]}"
    for set in "${sets[@]}"; do
      summary=$(capture kubectl get --raw "/api/v1/namespaces/$NAMESPACE/pods/$set-${BASH_REMATCH[1]}:8081/proxy/state/summary")
      $dry_run && continue
      summary=$(jq -r '"\(.partition) of \(.partitions): \(.purchases) purchases, \(.quantity) units, digest \(.digest)"' <<<"$summary")
      [[ "$summary" == "$expected" ]] || die "$set-${BASH_REMATCH[1]} says $summary; repartition wrote $expected"
      log "$set-${BASH_REMATCH[1]}: $summary, as written"
    done
  done
}

# repartition FROM TO: store partitions FROM -> TO, the documented steps in order.
repartition() {
  local from="$1" to="$2" replicas=2 sets wrote set p
  log "store partitions $from -> $to"
  # The chart must take TO (it refuses a count that does not divide the shard count) before anything stops.
  if $dry_run; then
    upgrade --dry-run --set storeService.partitions="$to"
  else
    upgrade --dry-run --set storeService.partitions="$to" >/dev/null
  fi
  mapfile -t sets < <(store_sets)
  replicas=$(jsonpath "deployment/$RELEASE-purchase-api" '{.spec.replicas}' 2)
  kubectl delete pod "$REPARTITION_POD" -n "$NAMESPACE" --ignore-not-found
  apply_json "$(store_pod "$REPARTITION_POD" sleep infinity | jq --argjson placement "$CONTROL_PLANE_PLACEMENT" '
    .spec += $placement
    | .spec.containers[0].volumeMounts = [{name: "seeds", mountPath: "/seeds"}, {name: "tmp", mountPath: "/tmp"}]
    | .spec.volumes = [{name: "seeds", emptyDir: {}}, {name: "tmp", emptyDir: {}}]')"
  kubectl wait --for=condition=Ready "pod/$REPARTITION_POD" -n "$NAMESPACE" --timeout=5m
  # 1, 2: intake stops; every storeX shard queue (of every copy) is emptied by its consumers.
  kubectl scale "deployment/$RELEASE-purchase-api" -n "$NAMESPACE" --replicas=0
  await 300 "purchase-api's pods gone" no_pods "$SELECT_API"
  await 600 "the storeX shard queues empty" queues_empty "$STORE_QUEUES"
  # 3: the counts split; refused (and nothing changed but purchase-api's replicas) if they moved.
  mapfile -t wrote < <(repartition_seeds "$from" "$to"; echo "status $?")
  [[ "${wrote[-1]}" == "status 0" ]] || die "repartition failed (above); purchase-api is at 0 replicas, scale it back to $replicas"
  unset 'wrote[-1]'
  ((${#wrote[@]} == to)) || die "repartition wrote ${#wrote[@]} partitions, not $to"
  # 4: the store-service pods stopped, every claim of theirs deleted.
  for set in "${sets[@]}"; do
    kubectl scale "statefulset/$set" -n "$NAMESPACE" --replicas=0
  done
  await 600 "store-service's pods gone" no_pods "$SELECT_STORES"
  for set in "${sets[@]}"; do
    for ((p = 0; p < from; p++)); do
      kubectl delete pvc "state-$set-$p" -n "$NAMESPACE" --ignore-not-found
    done
  done
  # 5: copy 0's new claims, seeded; the other copies start empty and rebuild from copy 0.
  seed "$to" "${wrote[@]}"
  kubectl delete pod "$REPARTITION_POD" -n "$NAMESPACE"
  # 6: the new count with copy 0 alone, placed on its seeded volumes before any other copy can take
  # their node or zone (the copies' spread would then keep a copy-0 pod Pending for ever); purchase-api
  # held at 0 (else the upgrade restores its replicas: Helm 3's three-way merge sets what the chart
  # renders) until every copy says what was written.
  # Every upgrade names the count, the copies and the replicas: the values file it passes again names
  # them too, and would override what the release reuses.
  upgrade --set storeService.partitions="$to" --set storeService.copies=1 --set purchaseApi.replicaCount=0
  kubectl rollout status "statefulset/${sets[0]}" -n "$NAMESPACE" --timeout=15m
  check_summaries "${sets[0]}" -- "${wrote[@]}"
  if ((${#sets[@]} > 1)); then
    # The further copies placed while copy 0 is held; each rebuilds from it.
    upgrade --set storeService.partitions="$to" --set storeService.copies="${#sets[@]}" --set storeService.upgradeCopies=1 \
      --set purchaseApi.replicaCount=0
    for set in "${sets[@]:1}"; do
      kubectl rollout status "statefulset/$set" -n "$NAMESPACE" --timeout=15m
    done
    check_summaries "${sets[@]:1}" -- "${wrote[@]}"
  fi
  upgrade --set storeService.partitions="$to" --set storeService.copies="${#sets[@]}" --set storeService.upgradeCopies=0 \
    --set purchaseApi.replicaCount="$replicas"
}

op_partitions() {
  local from
  from=$(jsonpath "statefulset/$RELEASE-store-service" '{.spec.replicas}' 2)
  ((from != partitions)) || die "the release has $partitions store partitions already: --partitions names the count to change to"
  repartition "$from" "$partitions"
  repartition "$partitions" "$from"
}

# --- broker-password: docs/operations.md, "Database and broker passwords", "Broker users".
readonly ROTATED_USER="$RELEASE-purchases-service"

# broker_takes USERNAME PASSWORD: the broker authenticates the user with it (the password on stdin).
broker_takes() { capture rabbitmqctl authenticate_user "$1" <<<"$2" >/dev/null; }

op_broker_password() {
  local secret="$ROTATED_USER-user-credentials" username=dry-run old=old new=new data="" pods consumers
  if ! $dry_run; then
    username=$(jsonpath "secret/$secret" '{.data.username}' | base64 -d)
    old=$(jsonpath "secret/$secret" '{.data.password}' | base64 -d)
    new=$(openssl rand -hex 24)
  fi
  pods=$(jsonpath pods '{.items[*].metadata.name}' "" | tr ' ' '\n' | grep -- "-purchases-service-" || true)
  # The new password into the Secret (on stdin: never on a command line), then the User annotated,
  # which makes the operator reconcile it: it sets the Secret's password in the broker.
  kubectl patch secret "$secret" -n "$NAMESPACE" --type merge --patch-file /dev/stdin \
    <<<"$(jq -nc --arg password "$new" '{stringData: {password: $password}}')"
  kubectl annotate users.rabbitmq.com "$ROTATED_USER" -n "$NAMESPACE" \
    "supermarket/password-rotated=$(date -u +%FT%TZ)" --overwrite
  await 300 "the broker taking the new password" broker_takes "$username" "$new"
  if ! $dry_run; then
    ! broker_takes "$username" "$old" || die "the broker still takes the old password"
    log "the broker takes the new password and refuses the old"
  fi
  # The pods roll onto it: what an operator of this install does, plain Helm with the Secret's checksum.
  $dry_run || data=$(jsonpath "secret/$secret" '{.data}')
  upgrade --set-string "secretChecksums.$secret=$(printf '%s' "$data" | sha256sum | cut -d' ' -f1)"
  kubectl rollout status "deployment/$ROTATED_USER" -n "$NAMESPACE" --timeout=10m
  $dry_run && return
  # Consuming again, as the rotated user: the old pods gone (a rollout is done before they end their
  # graceful stop), its connections those of the new ones.
  for pod in $pods; do
    kubectl wait --for=delete "pod/$pod" -n "$NAMESPACE" --timeout=5m
  done
  log "$(rabbitmqctl list_connections user --formatter json -q | jq --arg user "$username" \
    '[.[] | select(.user == $user)] | length') connection(s) of $ROTATED_USER's user"
  consumers=$(rabbitmqctl list_queues -p / name consumers --formatter json -q \
    | jq -r '[.[] | select(.name | test("^(sharding: )?purchaseX[. ]"))] | "\(length) \(map(select(.consumers > 0)) | length)"')
  log "purchaseX shard queues, and those with a consumer: $consumers"
  [[ "${consumers% *}" == "${consumers#* }" && "${consumers% *}" != 0 ]] || die "a purchaseX shard queue has no consumer"
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
