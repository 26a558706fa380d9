# Sourced by scripts/k8s-install.sh and scripts/k8s-day2.sh: the release on the local cluster of
# scripts/k8s-local.sh as both reach it. The caller defines log, die and dry_run (true: print every
# command and manifest instead of running it).

readonly HELM_VERSION=v3.22.0
readonly RELEASE=supermarket NAMESPACE=supermarket CONTEXT=kind-supermarket
readonly VALUES=helm/supermarket/values-local.yaml
CACHE="${K8S_LOCAL_CACHE:-/var/cache/supermarket-k8s}"
HELM="$CACHE/bin/helm-$HELM_VERSION"
# Pod spec fields that put a pod on the control-plane node, which the workloads' drains and node
# losses never touch: the database that stands in for RDS (outside the cluster's nodes on EKS) and
# the clients that measure what those do to the platform.
readonly CONTROL_PLANE_PLACEMENT='{"nodeSelector": {"node-role.kubernetes.io/control-plane": ""},
  "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}]}'
# The claim the load runs write their results to, and where the client pods run (pod spec fields).
RESULTS_CLAIM="$RELEASE-load-client-results" CLIENT_PLACEMENT='{}'

# Every command that touches the cluster or builds goes through run, so --dry-run prints what a
# real run does, in order.
run() {
  if $dry_run; then
    [[ "$1" != command ]] || shift
    printf '+'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}
kubectl() { run command kubectl --context "$CONTEXT" "$@"; }
# The kubectl program on the PATH (not the function above, which `command -v` would name).
kubectl_binary() { type -P kubectl || die "no kubectl on the PATH (scripts/k8s-local.sh up installs it)"; }
helm() { run "$HELM" --kube-context "$CONTEXT" "$@"; }
# A manifest on standard input (built with jq, so values are quoted safely); printed under --dry-run.
apply_json() {
  [[ -n "$1" ]] || die "no manifest to apply (the jq above failed)"
  if $dry_run; then
    printf '+ kubectl apply -f - <<EOF\n%s\nEOF\n' "$(jq -c . <<<"$1")"
  else
    command kubectl --context "$CONTEXT" apply -f - <<<"$1"
  fi
}
timed() { # what COMMAND...: runs it and logs how long it took
  local what="$1" started=$SECONDS; shift
  "$@"
  log "$what took $((SECONDS - started)) s"
}

ensure_helm() {
  [[ -x "$HELM" ]] && return 0
  log "building helm $HELM_VERSION from the Go module proxy (a few minutes)"
  run mkdir -p "$CACHE/bin"
  run env GOBIN="$CACHE/bin/helm-build" CGO_ENABLED=0 go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  run mv "$CACHE/bin/helm-build/helm" "$HELM"
}

# store_hosts: every store-service pod's name under the headless Service, copy by copy, each copy's
# partitions in order (values-local.yaml's 2 x 2): the copy groups verify and check-gets read.
store_hosts() {
  local copy partition
  for copy in 0 1; do
    for partition in 0 1; do
      echo "$RELEASE-store-service$( ((copy == 0)) || echo "-c$copy")-$partition.$RELEASE-store-service"
    done
  done
}

# run_check_pod baseline|checks NAME STORE-POD-NAMES...: the load client's verify (saving the
# baseline, or checking the run $run_id of claim $RESULTS_CLAIM against it) and check-gets in a pod,
# placed as $CLIENT_PLACEMENT says (pod spec fields); waits for it and prints its log. check-gets holds
# every (store, item) total of the purchases database in memory, so the pods' memory grows with it
# (docs/faults.md, the operators' week, third run).
run_check_pod() {
  local kind="$1" pod="$2"; shift 2
  kubectl delete pod "$pod" -n "$NAMESPACE" --ignore-not-found --wait=true
  apply_json "$(jq -n --arg ns "$NAMESPACE" --arg name "$pod" --arg run "$run_id" --arg kind "$kind" \
    --arg claim "$RESULTS_CLAIM" --argjson placement "$CLIENT_PLACEMENT" --arg image supermarket-local/supermarket/load-client:0.1.0 --args '
    ($ARGS.positional | map(["--store-state-url", "http://\(.):8081"]) | add) as $states
    | (["java", "-jar", "/app/app.jar", "verify", "--purchases-url", "http://supermarket-purchases-service:8082",
        "--purchases-metrics-url", "http://supermarket-purchases-service:9090/actuator/prometheus", "--store-copies", "2"]
       + ($ARGS.positional | map(["--store-metrics-url", "http://\(.):9090/actuator/prometheus"]) | add) + $states) as $verify
    | {image: $image, imagePullPolicy: "Never",
       env: [{name: "MYSQL_PASSWORD", valueFrom: {secretKeyRef: {name: "supermarket-mysql", key: "password"}}}],
       securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: ["ALL"]}},
       resources: {requests: {cpu: "100m", memory: "768Mi"}, limits: {cpu: "1", memory: "768Mi"}},
       volumeMounts: [{name: "tmp", mountPath: "/tmp"}]} as $base
    | {apiVersion: "v1", kind: "Pod", metadata: {name: $name, namespace: $ns},
       spec: ({restartPolicy: "Never", automountServiceAccountToken: false,
         securityContext: {runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: {type: "RuntimeDefault"}},
         volumes: [{name: "tmp", emptyDir: {}}]} + $placement)}
    | if $kind == "baseline" then
        .spec.containers = [$base + {name: "baseline", command: (["sh", "-c",
          "\"$@\" --save-baseline /tmp/baseline.json && echo \"baseline: $(cat /tmp/baseline.json)\"", "baseline"] + $verify)}]
      else
        .spec.volumes += [{name: "results", persistentVolumeClaim: {claimName: $claim, readOnly: true}},
          {name: "baseline", configMap: {name: "supermarket-baseline-\($run)"}}]
        | .spec.initContainers = [$base + {name: "verify",
            command: ($verify + ["--baseline", "/baseline/baseline.json", "/results/\($run)/result.json"]),
            volumeMounts: ($base.volumeMounts + [{name: "results", mountPath: "/results", readOnly: true},
              {name: "baseline", mountPath: "/baseline", readOnly: true}])}]
        | .spec.containers = [$base + {name: "check-gets", command: (["java", "-jar", "/app/app.jar", "check-gets",
            "--base-url", "http://supermarket-purchase-api", "--jdbc-url", "jdbc:mysql://supermarket-mysql:3306/purchases",
            "--db-user", "purchases", "--max-stores", "128", "--item-sample", "2000", "--store-copies", "2"] + $states)}]
      end' "$@")"
  kubectl wait --for=jsonpath='{.status.phase}'=Succeeded "pod/$pod" -n "$NAMESPACE" --timeout=30m \
    || { kubectl logs "pod/$pod" -n "$NAMESPACE" --all-containers; die "$kind failed (its log above)"; }
  kubectl logs "pod/$pod" -n "$NAMESPACE" --all-containers
}

# save_baseline: the services' counts before run $run_id (verify --save-baseline, in a pod), kept in
# the ConfigMap that check_run's pod reads.
save_baseline() {
  local baseline='{}' hosts
  mapfile -t hosts < <(store_hosts)
  run_check_pod baseline "$RELEASE-baseline-$run_id" "${hosts[@]}"
  $dry_run || baseline=$(command kubectl --context "$CONTEXT" logs "$RELEASE-baseline-$run_id" -n "$NAMESPACE" \
    | sed -n 's/^baseline: //p')
  apply_json "$(jq -n --arg ns "$NAMESPACE" --arg name "$RELEASE-baseline-$run_id" --arg baseline "$baseline" \
    '{apiVersion: "v1", kind: "ConfigMap", metadata: {name: $name, namespace: $ns}, data: {"baseline.json": $baseline}}')"
}

# check_run: both checks of run $run_id in a pod: `verify` against the baseline (an init container),
# `check-gets` once it passed; the pod succeeds only if both do. It reaches every service by its DNS name.
check_run() {
  local hosts
  mapfile -t hosts < <(store_hosts)
  run_check_pod checks "$RELEASE-checks-$run_id" "${hosts[@]}"
}
