#!/usr/bin/env bash
# The platform on the local cluster of scripts/k8s-local.sh, in one command: the operators the chart
# depends on, the images built here and loaded into the nodes, a MariaDB for purchases-service,
# `helm install --wait` with helm/supermarket/values-local.yaml (timed), `helm test`, then the
# chart's load-client Job and the exactly-once and GET checks inside the cluster.
#
# Usage: scripts/k8s-install.sh [options] [COMMAND...]   (no command: all of them, in this order)
#   operators  the RabbitMQ Cluster and Messaging Topology Operators, each built from its Go module
#              (the manager, an image holding just it, the manifest its config/ renders; cached),
#              every image the manifests name renamed to the local tag and loaded into the nodes;
#              the Topology Operator's webhook certificate made here, not by cert-manager; the
#              Prometheus Operator's CRDs (from its Go module); waits until Available
#   images     the services' images (Maven package + the Dockerfile) and the stand-ins
#              (scripts/images.sh), tagged as values-local.yaml names them, loaded into the nodes
#   install    namespace, MariaDB and its Secrets, helm upgrade --install --wait, helm test
#   load       the load-client Job (--stores stores), then `verify` (0 lost, 0 duplicated) and
#              `check-gets` (both GETs exact against MariaDB) in a pod of the cluster
#   uninstall  the release, its claims and the namespace (the operators stay)
# Options:
#   --stores N              load: store threads (default 64, at most values-local's 128)
#   --purchases-per-hour N  load: POSTs per store per simulated hour (default 50; 9 such hours)
#   --run ID                load: the run's id (default run-<UTC time>)
#   --dry-run               print every command and manifest instead of running them
#   -h, --help              this help
# Environment: K8S_LOCAL_CACHE (default /var/cache/supermarket-k8s): helm and the operators are built
# there from the Go module proxy (their modules in $K8S_LOCAL_CACHE/go). K8S_OPERATORS_DIR, if set,
# holds the operators' release manifests instead (cluster-operator.yml,
# messaging-topology-operator-with-certmanager.yaml), their images then already in the Docker engine
# under the local tags below. docs/kubernetes-install.md says why cert-manager is not installed.
# Needs the cluster up (its kubectl on the PATH), Docker, Go, a JDK, openssl.
set -euo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
log() { printf '[k8s-install] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/kubernetes.sh
source scripts/lib/kubernetes.sh
# shellcheck source=scripts/lib/k8s-platform.sh
source scripts/lib/k8s-platform.sh

# Versions, one place. The operators: the Topology Operator is scripts/eks.sh's; the Cluster
# Operator is the newest the Go module proxy serves (eks.sh's v2.21.0 it does not); the Prometheus
# Operator's CRDs are the newest release the proxy serves as a module.
readonly CLUSTER_OPERATOR_VERSION=v2.20.0 TOPOLOGY_OPERATOR_VERSION=v1.19.1
readonly PROMETHEUS_OPERATOR_VERSION=v0.85.0
readonly MODULES=(purchase-api store-service purchases-service load-client)
# Each operator: its image as its manifest names it (any registry and tag) = its Go module@version
# (both keep the manager's main package in cmd/) = the local tag it runs as = its release manifest.
readonly OPERATORS=(
  "cluster-operator=github.com/rabbitmq/cluster-operator/v2@$CLUSTER_OPERATOR_VERSION=supermarket-local/rabbitmq-cluster-operator:${CLUSTER_OPERATOR_VERSION#v}=cluster-operator.yml"
  "messaging-topology-operator=github.com/rabbitmq/messaging-topology-operator@$TOPOLOGY_OPERATOR_VERSION=supermarket-local/messaging-topology-operator:${TOPOLOGY_OPERATOR_VERSION#v}=messaging-topology-operator-with-certmanager.yaml")
# The stand-ins values-local.yaml names: scripts/images.sh's NAME:latest -> the tag, and what the
# image must say of its version for that tag to be true.
readonly STAND_INS=(
  "redis=7.0=redis-server --version"
  "curl=7.88=curl --version"
  "mariadb=10.11=mariadbd --version")
# shellcheck source=scripts/lib/rabbitmq-version.sh
source scripts/lib/rabbitmq-version.sh
# The project's RabbitMQ version (the chart's values.yaml), as the stand-in scripts/images.sh builds.
readonly BROKER_IMAGE="supermarket-local/rabbitmq:$RABBITMQ_VERSION"
# The topology-sync Job's kubectl: the one scripts/k8s-local.sh builds (the cluster's version).
readonly KUBECTL_VERSION=1.35.4 KUBECTL_IMAGE=supermarket-local/kubectl:1.35.4

OPERATORS_DIR="${K8S_OPERATORS_DIR:-}"
# The operators' modules and build cache, apart from the user's.
GO_ENV=(GOPATH="$CACHE/go" GOCACHE="$CACHE/go/build-cache" GOFLAGS=-modcacherw GOWORK=off CGO_ENABLED=0)
stores=64 purchases_per_hour=50 run_id="" dry_run=false commands=()
while (($#)); do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --stores) stores="${2:?}"; shift 2 ;;
    --purchases-per-hour) purchases_per_hour="${2:?}"; shift 2 ;;
    --run) run_id="${2:?}"; shift 2 ;;
    --dry-run) dry_run=true; shift ;;
    operators | images | install | load | uninstall) commands+=("$1"); shift ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
done
((${#commands[@]})) || commands=(operators images install load)
run_id="${run_id:-run-$(date -u +%Y%m%d-%H%M%S)}"
[[ "$run_id" =~ ^[a-z0-9]([-a-z0-9]{0,18}[a-z0-9])?$ ]] || die "--run: 1-20 lowercase letters, digits or -, not at either end"
((stores >= 1 && stores <= 128)) || die "--stores: 1..128 (values-local.yaml's platform.maxStores)"

# --- operators
# build_operator OUT MODULE@VERSION IMAGE: into OUT the manager, built from a copy of the module
# (as upstream's Dockerfile builds it: static, main package cmd/), a root file system holding just
# it and the CA certificates, imported as IMAGE (run as a non-root user, as the manifest's
# runAsNonRoot requires), and manifest.yaml, what the module's config/installation renders
# (upstream's release manifest before its image is set; apply_operator renames the image).
# Not `go install MODULE/cmd@VERSION`: that asks the proxy for the module's version list, which it
# refuses for the Cluster Operator.
build_operator() {
  local out="$1" src="<$2>"
  if $dry_run; then
    run env "${GO_ENV[@]}" go mod download -json "$2"
  else
    src="$(env "${GO_ENV[@]}" go mod download -json "$2" | jq -r .Dir)"
  fi
  run cp -r "$src" "$out/src"
  run chmod -R u+w "$out/src"
  run env "${GO_ENV[@]}" nice go -C "$out/src" build -trimpath -tags timetzdata -ldflags "-s -w" -o "$out/manager" ./cmd
  run command kubectl kustomize "$out/src/config/installation" -o "$out/manifest.yaml"
  run rm -rf "$out/src"
  run tar -cf "$out/rootfs.tar" --owner=0 --group=0 -C "$out" manager -C / etc/ssl/certs/ca-certificates.crt
  import_operator_image "$out" "$3"
}
import_operator_image() { # OUT IMAGE
  run docker import --change 'USER 65532:65532' --change 'ENTRYPOINT ["/manager"]' "$1/rootfs.tar" "$2"
}

# operator_dir MODULE@VERSION: where build_operator's output is cached, keyed by the module, its
# version and the recipe (a changed one builds anew).
operator_dir() {
  local key
  key="$(printf '%s\n' "$1" "${GO_ENV[*]}" "$(declare -f build_operator import_operator_image)" | sha256sum | cut -c1-16)"
  echo "$CACHE/operators/${1//\//_}-$key"
}

# ensure_operator MODULE@VERSION IMAGE: builds it unless cached; imports its image again if gone.
ensure_operator() {
  local out started=$SECONDS
  out="$(operator_dir "$1")"
  if [[ -d "$out" ]]; then
    log "$1: cached ($out)"
    $dry_run || docker image inspect "$2" >/dev/null 2>&1 || import_operator_image "$out" "$2"
    return 0
  fi
  log "$1: building from the Go module proxy"
  run rm -rf "$out.partial"
  run mkdir -p "$out.partial"
  build_operator "$out.partial" "$1" "$2"
  run mv "$out.partial" "$out"
  log "$1: built in $((SECONDS - started)) s"
}

# The manifest's images renamed to the local tags (matched by name, whatever registry and tag it
# had), its cert-manager objects left out and every webhook given the CA bundle $2 (base64), then
# applied; kubectl waits for every Deployment of the namespace.
apply_operator() { # manifest ca-bundle
  local manifest="$1" renamed renames=() entry name image
  $dry_run || [[ -f "$manifest" ]] || die "no $manifest (K8S_OPERATORS_DIR names the operators' release manifests)"
  renamed="$(mktemp)"
  for entry in "${OPERATORS[@]}"; do
    IFS='=' read -r name _ image _ <<<"$entry"
    renames+=(-e "s#^([[:space:]-]*image:[[:space:]]*)\"?[^\"[:space:]]*/$name(:[^\"[:space:]]*)?\"?[[:space:]]*\$#\\1$image#")
  done
  [[ -z "$2" ]] || renames+=(-e "s#^([[:space:]]*)clientConfig:[[:space:]]*\$#&\\n\\1  caBundle: $2#")
  run cp "$manifest" "$renamed"
  run sed -E -i "${renames[@]}" "$renamed"
  run without_cert_manager_objects "$renamed"
  $dry_run || ! grep -E '^[[:space:]-]*image:[[:space:]]*[^[:space:]]' "$renamed" | grep -v 'supermarket-local/' \
    || die "$manifest names an image with no local build (above)"
  kubectl apply --server-side --force-conflicts -f "$renamed"
  run rm -f "$renamed"
  kubectl wait --for=condition=Available deployment --all -n rabbitmq-system --timeout=10m
}

# Drops the documents of a multi-document manifest that are cert-manager objects (Issuer, Certificate).
without_cert_manager_objects() {
  awk 'BEGIN { RS = "\n---\n"; ORS = "\n---\n" } !/(^|\n)apiVersion: cert-manager\.io\// { print }' "$1" >"$1.kept"
  mv "$1.kept" "$1"
}

# The Topology Operator's webhook serving certificate, self-signed for its Service's names, in
# the Secret its Deployment mounts (the release manifest has cert-manager issue it). Prints the
# certificate as the webhooks' CA bundle. The Secret's certificate, if there is one, is kept: a
# new one would reach the CA bundle at once but the running operator only when the kubelet
# refreshes its mounted Secret, a minute in which the webhooks refuse every object.
webhook_certificate() {
  local service=messaging-topology-webhook-service.rabbitmq-system.svc dir existing=""
  if $dry_run; then
    kubectl get secret webhook-server-cert -n rabbitmq-system --ignore-not-found -o 'jsonpath={.data.tls\.crt}' >&2
  else
    existing="$(command kubectl --context "$CONTEXT" get secret webhook-server-cert -n rabbitmq-system \
      --ignore-not-found -o 'jsonpath={.data.tls\.crt}')"
  fi
  if [[ -n "$existing" ]]; then
    echo "$existing"
    return 0
  fi
  dir="$(mktemp -d)"
  run openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$service" \
    -addext "subjectAltName=DNS:$service,DNS:$service.cluster.local" -keyout "$dir/tls.key" -out "$dir/tls.crt" >&2
  if $dry_run; then
    echo "<certificate>"
  else
    command kubectl --context "$CONTEXT" create namespace rabbitmq-system --dry-run=client -o yaml \
      | command kubectl --context "$CONTEXT" apply -f - >&2
    command kubectl --context "$CONTEXT" create secret tls webhook-server-cert -n rabbitmq-system \
      --cert "$dir/tls.crt" --key "$dir/tls.key" --dry-run=client -o yaml \
      | command kubectl --context "$CONTEXT" apply -f - >&2
    base64 -w0 "$dir/tls.crt"
  fi
  rm -rf "$dir"
}

cmd_operators() {
  local entry module image release images=() manifests=() crds
  for entry in "${OPERATORS[@]}"; do
    IFS='=' read -r _ module image release <<<"$entry"
    images+=("$image")
    if [[ -n "$OPERATORS_DIR" ]]; then
      manifests+=("$OPERATORS_DIR/$release")
    else
      ensure_operator "$module" "$image"
      manifests+=("$(operator_dir "$module")/manifest.yaml")
    fi
  done
  run scripts/k8s-local.sh load "${images[@]}"
  apply_operator "${manifests[0]}" ""
  apply_operator "${manifests[1]}" "$(webhook_certificate)"
  crds="<prometheus-operator@$PROMETHEUS_OPERATOR_VERSION>"
  $dry_run || crds="$(go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" | jq -r .Dir)"
  crds+=/example/prometheus-operator-crd
  kubectl apply --server-side -f "$crds/monitoring.coreos.com_servicemonitors.yaml" \
    -f "$crds/monitoring.coreos.com_prometheusrules.yaml" -f "$crds/monitoring.coreos.com_podmonitors.yaml"
}

# --- images
cmd_images() {
  local module entry name tag version java images=()
  # The build needs a JDK 21 or newer, which need not be the machine's default.
  run env JAVA_HOME="$(scripts/find-jdk.sh)" ./mvnw -B -ntp -q package -DskipTests -pl "$(IFS=,; echo "${MODULES[*]}")" -am
  run scripts/images.sh
  $dry_run || docker image inspect "$BROKER_IMAGE" >/dev/null 2>&1 \
    || die "no $BROKER_IMAGE: scripts/images.sh builds it (deploy/images/rabbitmq)"
  java=supermarket-local/java:latest
  for module in "${MODULES[@]}"; do
    run env DOCKER_BUILDKIT=0 docker build -q --build-arg MODULE="$module" --build-arg JAVA_BUILD_IMAGE="$java" \
      --build-arg JAVA_RUNTIME_IMAGE="$java" -t "supermarket-local/supermarket/$module:0.1.0" .
    images+=("supermarket-local/supermarket/$module:0.1.0")
  done
  for entry in "${STAND_INS[@]}"; do
    IFS='=' read -r name tag version <<<"$entry"
    if ! $dry_run; then
      # shellcheck disable=SC2086 # the version command is words
      docker run --rm --entrypoint "" "supermarket-local/$name:latest" $version 2>&1 | grep -q "[^0-9.]$tag\." \
        || die "supermarket-local/$name:latest is not $name $tag (values-local.yaml names that tag)"
    fi
    run docker tag "supermarket-local/$name:latest" "supermarket-local/$name:$tag"
    images+=("supermarket-local/$name:$tag")
  done
  kubectl_image
  images+=("$BROKER_IMAGE" "$KUBECTL_IMAGE")
  run scripts/k8s-local.sh load "${images[@]}"
}

# The kubectl binary on the PATH (static) alone in an image, at /bin/kubectl and as its entrypoint,
# as Kubernetes' own kubectl image has it.
kubectl_image() {
  local binary=kubectl tarball=kubectl.tar version
  if ! $dry_run; then
    binary=$(readlink -f "$(kubectl_binary)")
    version=$("$binary" version --client -o json | jq -r .clientVersion.gitVersion)
    [[ "$version" == "v$KUBECTL_VERSION" ]] || die "kubectl on the PATH is $version, not v$KUBECTL_VERSION (scripts/k8s-local.sh up builds it)"
    tarball=$(mktemp --suffix=.tar)
  fi
  run tar -cf "$tarball" -C "$(dirname "$binary")" --transform 's,^,bin/,' --owner=0 --group=0 "$(basename "$binary")"
  run docker import --change 'ENTRYPOINT ["/bin/kubectl"]' "$tarball" "$KUBECTL_IMAGE"
  $dry_run || rm -f "$tarball"
}

# --- install
# The password of an existing Secret's key, else a new random one (re-running keeps them).
password_of() {
  local existing
  $dry_run && { echo "<generated>"; return; }
  existing=$(command kubectl --context "$CONTEXT" get secret "$1" -n "$NAMESPACE" --ignore-not-found -o 'jsonpath={.data.password}')
  if [[ -n "$existing" ]]; then base64 -d <<<"$existing"; else openssl rand -hex 24; fi
}

# MariaDB as compose runs it (deploy/images/mariadb): the schema owner is the migrations' user,
# purchases-service's own user may SELECT and INSERT only (deploy/mysql/runtime-user.sh). It keeps
# its data on the pod (emptyDir), so it runs on the control-plane node, which no step drains.
mariadb() {
  apply_json "$(secret_json supermarket-mysql-root password "$(password_of supermarket-mysql-root)")"
  apply_json "$(secret_json supermarket-mysql-migrations username supermarket password "$(password_of supermarket-mysql-migrations)")"
  apply_json "$(secret_json supermarket-mysql username purchases password "$(password_of supermarket-mysql)")"
  apply_json "$(jq -n --arg ns "$NAMESPACE" --rawfile init deploy/mysql/runtime-user.sh \
    '{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "supermarket-mysql-init", namespace: $ns},
      data: {"runtime-user.sh": $init}}')"
  apply_json "$(jq -n --arg ns "$NAMESPACE" '{apiVersion: "v1", kind: "Service",
    metadata: {name: "supermarket-mysql", namespace: $ns},
    spec: {selector: {app: "supermarket-mysql"}, ports: [{name: "mysql", port: 3306, targetPort: 3306}]}}')"
  apply_json "$(jq -n --arg ns "$NAMESPACE" --argjson placement "$CONTROL_PLANE_PLACEMENT" '
    def secret($name; $key): {valueFrom: {secretKeyRef: {name: $name, key: $key}}};
    {apiVersion: "apps/v1", kind: "Deployment", metadata: {name: "supermarket-mysql", namespace: $ns},
     spec: {replicas: 1, strategy: {type: "Recreate"}, selector: {matchLabels: {app: "supermarket-mysql"}},
      template: {metadata: {labels: {app: "supermarket-mysql"}}, spec: ({containers: [{
        name: "mariadb", image: "supermarket-local/mariadb:10.11", imagePullPolicy: "Never",
        args: ["--innodb-buffer-pool-size=64M"],
        env: [
          ({name: "MYSQL_ROOT_PASSWORD"} + secret("supermarket-mysql-root"; "password")),
          {name: "MYSQL_DATABASE", value: "purchases"},
          ({name: "MYSQL_USER"} + secret("supermarket-mysql-migrations"; "username")),
          ({name: "MYSQL_PASSWORD"} + secret("supermarket-mysql-migrations"; "password")),
          ({name: "MYSQL_PURCHASES_PASSWORD"} + secret("supermarket-mysql"; "password"))],
        ports: [{containerPort: 3306}],
        readinessProbe: {exec: {command: ["sh", "-c", "mysqladmin ping -h 127.0.0.1 -uroot -p\"$MYSQL_ROOT_PASSWORD\" --silent"]},
          periodSeconds: 5},
        resources: {requests: {cpu: "100m", memory: "512Mi"}, limits: {cpu: "1", memory: "512Mi"}},
        volumeMounts: [{name: "init", mountPath: "/docker-entrypoint-initdb.d"}, {name: "data", mountPath: "/var/lib/mysql"}]}],
       volumes: [{name: "init", configMap: {name: "supermarket-mysql-init"}}, {name: "data", emptyDir: {}}]} + $placement)}}}')"
  kubectl rollout status deployment/supermarket-mysql -n "$NAMESPACE" --timeout=10m
}

cmd_install() {
  ensure_helm
  apply_json "$(jq -n --arg ns "$NAMESPACE" '{apiVersion: "v1", kind: "Namespace", metadata: {name: $ns}}')"
  mariadb
  timed "helm install --wait" helm upgrade --install "$RELEASE" helm/supermarket -n "$NAMESPACE" -f "$VALUES" \
    --set rabbitmq.cluster.image="$BROKER_IMAGE" --wait --timeout 30m
  timed "helm test" helm test "$RELEASE" -n "$NAMESPACE" --timeout 10m --logs
}

# --- load: the services' counts saved first (save_baseline), the chart's Job, then check_run.
cmd_load() {
  local job="$RELEASE-load-client-$run_id"
  ensure_helm
  save_baseline
  timed "the load run" helm upgrade "$RELEASE" helm/supermarket -n "$NAMESPACE" --reuse-values \
    --set loadClient.enabled=true --set loadClient.run="$run_id" --set loadClient.maxStores="$stores" \
    --set loadClient.purchasesPerHour="$purchases_per_hour" --wait --wait-for-jobs --timeout 60m
  kubectl logs "job/$job" -n "$NAMESPACE" --tail=40
  check_run
}

cmd_uninstall() {
  ensure_helm
  helm uninstall "$RELEASE" -n "$NAMESPACE" --ignore-not-found --wait --timeout 10m
  kubectl delete namespace "$NAMESPACE" --ignore-not-found --wait=true --timeout=10m
}

for command in "${commands[@]}"; do
  log "$command"
  timed "$command" "cmd_$command"
done
