#!/usr/bin/env bash
# The EKS walkthrough of deploy/README.md as one script: from an empty AWS account to the platform
# answering behind an ALB, a load-client run inside the cluster, and back to nothing.
#
# Usage: scripts/eks.sh [options] COMMAND
#   quota     the account's vCPU quota for on-demand standard instances (Service Quotas
#             L-1216C47A) against what the preset's node group may grow to; refuses if short
#   up        quota, terraform apply, images to ECR, the cluster's controllers, namespace and
#             Secrets, helm upgrade --install one store copy at a time, helm test (re-runnable:
#             every step is idempotent; it upgrades an installed release, and re-reads the RDS
#             master password, which RDS rotates)
#   keys      publishes the till keys of --keys again (after scripts/till-keys.sh rotate or
#             revoke): the hashes, helm test's key and the load client's keys
#   load      a load-client Job in the cluster (chart value loadClient.enabled), waits for it;
#             the release must run this checkout's chart (else: up first)
#   results   copies a load run's results from its claim to runs/eks-<run>/
#   down      uninstalls the release, deletes every claim of the namespace (the StatefulSets'
#             too) and waits for their EBS volumes to go, removes the controllers, terraform destroy;
#             a failed cleanup step does not stop the destroy (it is reported, exit status 1)
# Options:
#   --preset micro|xlarge   values-<preset>.yaml on terraform/presets/<preset>.tfvars (default xlarge)
#   --store mysql|dynamodb  where purchases are stored (default: the preset's; micro mysql, xlarge dynamodb)
#   --region REGION         AWS region (default $AWS_REGION, else us-east-1)
#   --tag TAG               image tag built, pushed and installed (default 0.1.0; ECR tags are immutable)
#   --skip-images           up: the images of --tag are already in ECR
#   --keys DIR              till keys (scripts/till-keys.sh; issued by up if DIR has none; default till-keys)
#   --certificate-arn ARN   up: ACM certificate for HTTPS on the ALB; without it up refuses
#                           unless --insecure-http
#   --insecure-http         up: plain HTTP on the ALB, till keys readable on the way (a trial;
#                           pair it with --inbound-cidr)
#   --inbound-cidr CIDR     up: a source allowed through the ALB (repeatable; default 0.0.0.0/0)
#   --run ID                load/results: the run's id (default run-<UTC time>; lowercase, digits, -)
#   --stores N              load: store threads (default 256, at most the preset's stores)
#   --purchases-per-hour N  load: POSTs per store per hour (default 300)
#   --skip-final-snapshot   down: delete RDS without a final snapshot
#   --dry-run               print every command (aws, terraform, docker, kubectl, helm) and every
#                           manifest instead of running them; reads nothing from AWS or the cluster
#   -h, --help              this help
# Needs: aws (v2), terraform, kubectl, helm, docker, jq, and a JDK for the image build.
set -euo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
die() { echo "eks: $*" >&2; exit 1; }
log() { printf '[eks] %s\n' "$*" >&2; }

cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/kubernetes.sh
source scripts/lib/kubernetes.sh

# Versions, one place (deploy/README.md, "Versions", says why each was chosen).
readonly CERT_MANAGER_VERSION=v1.21.1
readonly RABBITMQ_CLUSTER_OPERATOR_VERSION=v2.21.0
readonly RABBITMQ_TOPOLOGY_OPERATOR_VERSION=v1.19.1
readonly LOAD_BALANCER_CONTROLLER_CHART=1.13.4
readonly METRICS_SERVER_VERSION=v0.8.0
readonly CLUSTER_AUTOSCALER_CHART=9.59.0
readonly CLUSTER_AUTOSCALER_IMAGE=v1.35.0
readonly KUBE_PROMETHEUS_STACK_CHART=88.1.3
readonly MYSQL_CLIENT_IMAGE=mysql:8.4.5
# Holds the RDS master user only while mysql_users' pod runs.
readonly MASTER_SECRET=supermarket-rds-master

readonly CERT_MANAGER_MANIFEST="https://github.com/cert-manager/cert-manager/releases/download/${CERT_MANAGER_VERSION}/cert-manager.yaml"
readonly CLUSTER_OPERATOR_MANIFEST="https://github.com/rabbitmq/cluster-operator/releases/download/${RABBITMQ_CLUSTER_OPERATOR_VERSION}/cluster-operator.yml"
readonly TOPOLOGY_OPERATOR_MANIFEST="https://github.com/rabbitmq/messaging-topology-operator/releases/download/${RABBITMQ_TOPOLOGY_OPERATOR_VERSION}/messaging-topology-operator-with-certmanager.yaml"
# The Terraform defaults (kubernetes_namespace, purchases_service_account_name) name these.
readonly RELEASE=supermarket NAMESPACE=supermarket
readonly SERVICES=(purchase-api store-service purchases-service load-client)
# The Secrets the services read at start (the MySQL users, the broker users of serviceUsers or the
# cluster's default user): their checksums go into the chart's secretChecksums at each upgrade.
readonly SECRETS_READ=(supermarket-mysql supermarket-mysql-migrations supermarket-purchase-api-user-credentials
  supermarket-store-service-user-credentials supermarket-purchases-service-user-credentials supermarket-rabbitmq-default-user)
# Service Quotas: "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances", in vCPUs.
readonly VCPU_QUOTA_CODE=L-1216C47A

preset=xlarge store="" region="${AWS_REGION:-us-east-1}" tag=0.1.0 skip_images=false keys=till-keys
certificate_arn="" insecure_http=false inbound_cidrs=() run_id="" stores=256 purchases_per_hour=300
skip_final_snapshot=false dry_run=false command=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --preset) preset="${2:?}"; shift 2 ;;
    --store) store="${2:?}"; shift 2 ;;
    --region) region="${2:?}"; shift 2 ;;
    --tag) tag="${2:?}"; shift 2 ;;
    --skip-images) skip_images=true; shift ;;
    --keys) keys="${2:?}"; shift 2 ;;
    --certificate-arn) certificate_arn="${2:?}"; shift 2 ;;
    --insecure-http) insecure_http=true; shift ;;
    --inbound-cidr) inbound_cidrs+=("${2:?}"); shift 2 ;;
    --run) run_id="${2:?}"; shift 2 ;;
    --stores) stores="${2:?}"; shift 2 ;;
    --purchases-per-hour) purchases_per_hour="${2:?}"; shift 2 ;;
    --skip-final-snapshot) skip_final_snapshot=true; shift ;;
    --dry-run) dry_run=true; shift ;;
    quota|up|keys|load|results|down) [[ -z "$command" ]] || die "one command at a time"; command="$1"; shift ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done
[[ -n "$command" ]] || { usage >&2; exit 2; }
case "$preset" in
  micro) default_store=mysql max_stores=512 ;;
  xlarge) default_store=dynamodb max_stores=1024 ;;
  *) die "--preset is micro or xlarge" ;;
esac
store="${store:-$default_store}"
[[ "$store" == mysql || "$store" == dynamodb ]] || die "--store is mysql or dynamodb"
run_id="${run_id:-run-$(date -u +%Y%m%d-%H%M%S)}"
[[ "$run_id" =~ ^[a-z0-9]([-a-z0-9]{0,18}[a-z0-9])?$ ]] || die "--run: 1-20 lowercase letters, digits or -, not at either end"
(( stores >= 1 && stores <= max_stores )) || die "--stores: 1..$max_stores on the $preset preset"
readonly tfvars="presets/$preset.tfvars" values="helm/supermarket/values-$preset.yaml" state_dir="runs/eks"
# A certificate, or plain HTTP asked for by name: --inbound-cidr narrows who may connect, not who
# can read a key on its way (docs/operations.md, "The ALB without a certificate").
if [[ "$command" == up && -z "$certificate_arn" ]] && ! $insecure_http; then
  die "refusing: without --certificate-arn the ALB speaks plain HTTP and every till's key crosses the network readable. Give an ACM certificate, or --insecure-http (best with --inbound-cidr) for a trial"
fi

# --- Running commands: every command goes through run (or capture, for its output), so
# --dry-run prints exactly what a real run would do, in order.
run() {
  if $dry_run; then
    printf '+'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}

# The command's output; under --dry-run the command is printed and "<placeholder>" returned.
capture() {
  local placeholder="$1"; shift
  if $dry_run; then
    printf '+' >&2; printf ' %q' "$@" >&2; printf '\n' >&2
    printf '%s' "<$placeholder>"
  else
    "$@"
  fi
}

# Applies one manifest given as JSON (built with jq, so values are quoted safely), on standard
# input, so secrets never appear on a command line; --dry-run prints it as a here-document.
apply_json() {
  local manifest="$1"
  if $dry_run; then
    printf '+ kubectl apply -f - <<EOF\n%s\nEOF\n' "$(jq -c . <<<"$manifest")"
  else
    kubectl apply -f - <<<"$manifest"
  fi
}

# Polls until "$@" prints a non-empty line, at most $1 seconds; returns 1, saying what it waited
# for ($2), otherwise.
wait_until() {
  local seconds="$1" what="$2"; shift 2
  if $dry_run; then
    printf '+ wait_until %ss:' "$seconds"; printf ' %q' "$@"; printf '\n'
    return 0
  fi
  local deadline=$(( $(date +%s) + seconds ))
  until [[ -n "$("$@" 2>/dev/null || true)" ]]; do
    (( $(date +%s) < deadline )) || { log "gave up after ${seconds}s waiting for $what"; return 1; }
    sleep 10
  done
}

# Runs "$@" until it succeeds, at most $1 times, $2 seconds apart; returns 1 if it never does.
retry() {
  local attempts="$1" delay="$2" attempt; shift 2
  if $dry_run; then
    printf '+ retry %sx%ss:' "$attempts" "$delay"; printf ' %q' "$@"; printf '\n'
    return 0
  fi
  for (( attempt = 1; ; attempt++ )); do
    "$@" && return 0
    (( attempt < attempts )) || return 1
    log "attempt $attempt of $attempts failed; again in ${delay}s"
    sleep "$delay"
  done
}

tf() { run terraform -chdir=terraform "$@"; }
tf_output() { capture "terraform output $1" terraform -chdir=terraform output -raw "$1"; }

# --- quota: refuse before creating anything the account cannot run.
check_vcpu_quota() {
  local instance_type max_nodes vcpus needed quota
  instance_type=$(sed -nE 's/^node_instance_type *= *"([^"]+)".*/\1/p' "terraform/$tfvars")
  max_nodes=$(awk '/^node_count/ { inside = 1 } inside && /max *=/ { gsub(/[^0-9]/, ""); print; exit }' "terraform/$tfvars")
  [[ -n "$instance_type" && -n "$max_nodes" ]] || die "terraform/$tfvars names no node_instance_type or node_count.max"
  vcpus=$(capture "vCPUs of $instance_type" aws ec2 describe-instance-types --region "$region" \
    --instance-types "$instance_type" --query 'InstanceTypes[0].VCpuInfo.DefaultVCpus' --output text)
  quota=$(capture "vCPU quota" aws service-quotas get-service-quota --region "$region" \
    --service-code ec2 --quota-code "$VCPU_QUOTA_CODE" --query 'Quota.Value' --output text)
  if $dry_run; then
    log "quota: preset $preset may grow to $max_nodes x $instance_type; compared with quota $VCPU_QUOTA_CODE when run"
    return 0
  fi
  needed=$(( vcpus * max_nodes ))
  quota=${quota%%.*}
  if (( quota < needed )); then
    die "refusing: preset $preset may grow to $max_nodes x $instance_type = $needed vCPUs (node_count.max in terraform/$tfvars), but quota $VCPU_QUOTA_CODE (on-demand standard instances) in $region is $quota vCPUs, shared with every other instance of the account. Ask for more: aws service-quotas request-service-quota-increase --region $region --service-code ec2 --quota-code $VCPU_QUOTA_CODE --desired-value $needed"
  fi
  log "quota: $needed vCPUs needed at most ($max_nodes x $instance_type), $quota allowed in $region"
}

# --- up
infrastructure() {
  tf init -input=false
  tf apply -input=false -auto-approve -var-file="$tfvars" -var region="$region" -var purchases_store="$store"
  run aws eks update-kubeconfig --region "$region" --name "$(tf_output cluster_name)"
  run mkdir -p "$state_dir"
  if $dry_run; then
    run terraform -chdir=terraform output -raw helm_values
  else
    terraform -chdir=terraform output -raw helm_values >"$state_dir/values-$region.yaml"
  fi
}

images() {
  local registry
  registry=$(tf_output ecr_registry)
  run ./mvnw -B -ntp package -DskipTests
  if $dry_run; then
    printf '+ aws ecr get-login-password --region %q | docker login --username AWS --password-stdin %q\n' "$region" "$registry"
  else
    aws ecr get-login-password --region "$region" | docker login --username AWS --password-stdin "$registry"
  fi
  for service in "${SERVICES[@]}"; do
    run docker build --platform linux/amd64 --build-arg MODULE="$service" -t "$registry/supermarket/$service:$tag" .
    run docker push "$registry/supermarket/$service:$tag"
  done
}

# The controllers the chart relies on; their requests are what deployment/NodeFitTest counts.
controllers() {
  local cluster
  cluster=$(tf_output cluster_name)
  # cert-manager first: the Cluster Operator (2.20+) and the Topology Operator's webhooks need it.
  run kubectl apply -f "$CERT_MANAGER_MANIFEST"
  run kubectl wait --for=condition=Available deployment --all -n cert-manager --timeout=5m
  # Available Deployments are not yet a serving webhook (the CA is injected a little later), and
  # both operators' manifests hold cert-manager objects its webhook must admit: retried, 5 min at most.
  retry 30 10 kubectl apply -f "$CLUSTER_OPERATOR_MANIFEST" || die "cert-manager's webhook never admitted the Cluster Operator's manifest"
  run kubectl wait --for=condition=Available deployment --all -n rabbitmq-system --timeout=5m
  retry 30 10 kubectl apply -f "$TOPOLOGY_OPERATOR_MANIFEST" || die "cert-manager's webhook never admitted the Topology Operator's manifest"
  run kubectl wait --for=condition=Available deployment --all -n rabbitmq-system --timeout=5m
  run helm repo add eks https://aws.github.io/eks-charts --force-update
  run helm upgrade --install aws-load-balancer-controller eks/aws-load-balancer-controller \
    --version "$LOAD_BALANCER_CONTROLLER_CHART" -n kube-system --wait --timeout 10m \
    --set clusterName="$cluster" --set region="$region" --set vpcId="$(tf_output vpc_id)" \
    --set serviceAccount.name=aws-load-balancer-controller \
    --set serviceAccount.annotations."eks\.amazonaws\.com/role-arn"="$(tf_output load_balancer_controller_role_arn)" \
    --set resources.requests.cpu=100m --set resources.requests.memory=128Mi
  run kubectl apply -f "https://github.com/kubernetes-sigs/metrics-server/releases/download/${METRICS_SERVER_VERSION}/components.yaml"
  run helm repo add autoscaler https://kubernetes.github.io/autoscaler --force-update
  run helm upgrade --install cluster-autoscaler autoscaler/cluster-autoscaler \
    --version "$CLUSTER_AUTOSCALER_CHART" -n kube-system --wait --timeout 10m \
    --set cloudProvider=aws --set awsRegion="$region" --set autoDiscovery.clusterName="$cluster" \
    --set image.tag="$CLUSTER_AUTOSCALER_IMAGE" --set fullnameOverride=cluster-autoscaler \
    --set rbac.serviceAccount.name=cluster-autoscaler \
    --set rbac.serviceAccount.annotations."eks\.amazonaws\.com/role-arn"="$(tf_output cluster_autoscaler_role_arn)" \
    --set resources.requests.cpu=100m --set resources.requests.memory=600Mi
  # Namespace "monitoring": the chart's NetworkPolicy lets that namespace scrape the broker.
  run helm repo add prometheus-community https://prometheus-community.github.io/helm-charts --force-update
  run helm upgrade --install kube-prometheus-stack prometheus-community/kube-prometheus-stack \
    --version "$KUBE_PROMETHEUS_STACK_CHART" -n monitoring --create-namespace --wait --timeout 15m \
    --set prometheus.prometheusSpec.resources.requests.cpu=500m \
    --set prometheus.prometheusSpec.resources.requests.memory=2Gi \
    --set grafana.resources.requests.cpu=100m --set grafana.resources.requests.memory=256Mi \
    --set prometheusOperator.resources.requests.cpu=100m --set prometheusOperator.resources.requests.memory=128Mi \
    --set kube-state-metrics.resources.requests.cpu=50m --set kube-state-metrics.resources.requests.memory=128Mi \
    --set prometheus-node-exporter.resources.requests.cpu=50m --set prometheus-node-exporter.resources.requests.memory=64Mi
}

# Before anything else that lives in it, on both store paths. The label makes the Load Balancer
# Controller inject the ALB's pod readiness gate (helm/README.md, "Rollouts").
namespace() {
  apply_json "$(jq -n --arg ns "$NAMESPACE" '{apiVersion: "v1", kind: "Namespace",
    metadata: {name: $ns, labels: {"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled"}}}')"
}

# Two database users besides the RDS master: `migrations` (all rights on the purchases database
# only, for the migrations' init container) and `purchases` (SELECT and INSERT only), created from
# a pod in the cluster because RDS is not reachable from outside the VPC. The master password,
# which RDS rotates every 7 days, is read from Secrets Manager at each run and reaches only that
# pod, through a Secret deleted once it is done: nothing that restarts later depends on it
# (docs/operations.md, "Database and broker passwords"). Re-running keeps both users' passwords.
mysql_users() {
  local master rds_host
  master=$(capture "RDS master secret" aws secretsmanager get-secret-value --region "$region" \
    --secret-id "$(tf_output rds_master_user_secret_arn)" --query SecretString --output text)
  if $dry_run; then
    master='{"username":"<master user>","password":"<master password>"}'
  fi
  apply_json "$(secret_json supermarket-mysql username purchases password "$(kept_password supermarket-mysql purchases)")"
  apply_json "$(secret_json supermarket-mysql-migrations username migrations password "$(kept_password supermarket-mysql-migrations migrations)")"
  apply_json "$(secret_json "$MASTER_SECRET" username "$(jq -r .username <<<"$master")" password "$(jq -r .password <<<"$master")")"
  rds_host=$(tf_output rds_endpoint)
  rds_host=${rds_host%%:*}
  run kubectl delete pod mysql-admin -n "$NAMESPACE" --ignore-not-found --wait=true --timeout=2m
  # The passwords reach the pod from the Secrets, never through its spec or a command line.
  apply_json "$(jq -n --arg ns "$NAMESPACE" --arg image "$MYSQL_CLIENT_IMAGE" --arg host "$rds_host" --arg master "$MASTER_SECRET" '{
    apiVersion: "v1", kind: "Pod", metadata: {name: "mysql-admin", namespace: $ns},
    spec: {restartPolicy: "Never", activeDeadlineSeconds: 300, containers: [{
      name: "mysql", image: $image, command: ["sh", "-c",
        "mysql -h \"$RDS_HOST\" -u \"$MASTER_USER\" -e \"CREATE USER IF NOT EXISTS '\''purchases'\''@'\''%'\'' IDENTIFIED BY '\''$PURCHASES_PASSWORD'\''; ALTER USER '\''purchases'\''@'\''%'\'' IDENTIFIED BY '\''$PURCHASES_PASSWORD'\''; GRANT SELECT, INSERT ON purchases.* TO '\''purchases'\''@'\''%'\''; CREATE USER IF NOT EXISTS '\''migrations'\''@'\''%'\'' IDENTIFIED BY '\''$MIGRATIONS_PASSWORD'\''; ALTER USER '\''migrations'\''@'\''%'\'' IDENTIFIED BY '\''$MIGRATIONS_PASSWORD'\''; GRANT ALL PRIVILEGES ON purchases.* TO '\''migrations'\''@'\''%'\'';\""],
      env: [
        {name: "RDS_HOST", value: $host},
        {name: "MASTER_USER", valueFrom: {secretKeyRef: {name: $master, key: "username"}}},
        {name: "MYSQL_PWD", valueFrom: {secretKeyRef: {name: $master, key: "password"}}},
        {name: "PURCHASES_PASSWORD", valueFrom: {secretKeyRef: {name: "supermarket-mysql", key: "password"}}},
        {name: "MIGRATIONS_PASSWORD", valueFrom: {secretKeyRef: {name: "supermarket-mysql-migrations", key: "password"}}}]}]}}')"
  run kubectl wait --for=jsonpath='{.status.phase}'=Succeeded pod/mysql-admin -n "$NAMESPACE" --timeout=5m
  run kubectl delete pod mysql-admin -n "$NAMESPACE" --wait=false
  run kubectl delete secret "$MASTER_SECRET" -n "$NAMESPACE" --ignore-not-found --timeout=2m
}

# The password in Secret $1 if it is user $2's, else a new one (the Secret of an install from
# before the migrations user held the master's).
kept_password() {
  local found
  found=$(capture "$1's user and password" kubectl get secret "$1" -n "$NAMESPACE" --ignore-not-found \
    -o 'jsonpath={.data.username} {.data.password}')
  if $dry_run; then
    printf '<generated>'
  elif [[ "$found" == "$(printf '%s' "$2" | base64) "?* ]]; then
    base64 -d <<<"${found#* }"
  else
    openssl rand -hex 24
  fi
}

# Till keys: issued once on this machine (the plain keys stay in $keys), then published.
till_keys() {
  if [[ ! -f "$keys/till-keys.txt" ]]; then
    run scripts/till-keys.sh issue --dir "$keys" --stores "1-$max_stores" --managers 1
  fi
  publish_keys
}

# The hashes and the test store's key to the cluster, and every store's key for the load client:
# all three after every rotation, or helm test and the load client get 401 once the grace is over.
publish_keys() {
  $dry_run || [[ -f "$keys/till-keys.txt" ]] || die "no till keys in $keys (--keys; up issues them)"
  if $dry_run; then
    printf '+ scripts/till-keys.sh secret --dir %q --namespace %q --test-store 1 | kubectl apply -f -\n' "$keys" "$NAMESPACE"
    printf '+ kubectl apply -f - <<EOF\n%s\nEOF\n' "$(secret_json supermarket-load-client-keys till-keys.txt "<$keys/till-keys.txt>" | jq -c .)"
  else
    scripts/till-keys.sh secret --dir "$keys" --namespace "$NAMESPACE" --test-store 1 | kubectl apply -f -
    apply_json "$(secret_json supermarket-load-client-keys till-keys.txt "$(<"$keys/till-keys.txt")")"
  fi
}

install() {
  local cidrs=("${inbound_cidrs[@]:-0.0.0.0/0}") args=() copies copy
  # values-<region>.yaml is Terraform's helm_values output: registry, RDS URL, table, IRSA role.
  args=(-f "$values" -f "$state_dir/values-$region.yaml" --set persistence.store="$store"
    --set purchaseApi.image.tag="$tag" --set storeService.image.tag="$tag"
    --set purchasesService.image.tag="$tag" --set loadClient.image.tag="$tag"
    --set "purchaseApi.ingress.inboundCidrs={$(IFS=,; echo "${cidrs[*]}")}"
    --set metrics.serviceMonitor.enabled=true --set metrics.serviceMonitor.labels.release=kube-prometheus-stack
    --set metrics.prometheusRule.enabled=true --set metrics.prometheusRule.labels.release=kube-prometheus-stack)
  [[ -z "$certificate_arn" ]] || args+=(--set purchaseApi.ingress.certificateArn="$certificate_arn")
  # A changed Secret (a rotated password) changes its readers' pod annotations, so they roll.
  local secret data
  for secret in "${SECRETS_READ[@]}"; do
    data=$(capture "$secret's data" kubectl get secret "$secret" -n "$NAMESPACE" --ignore-not-found -o 'jsonpath={.data}')
    args+=(--set-string "secretChecksums.$secret=$(printf '%s' "$data" | sha256sum | cut -d' ' -f1)")
  done
  unchangeable_fields
  # One store copy at a time, the last first (helm/README.md, "Upgrading copy by copy"):
  # upgradeCopies c holds the copies below c at their revision while copy c rolls, so a partition
  # keeps a copy that answers its GETs, and a copy added now is placed while copy 0 stays where it
  # is. The last upgrade holds nothing and leaves no hold in the release's values. On a first
  # install the holds change nothing.
  copies=$(store_copies)
  for (( copy = copies - 1; copy >= 1; copy-- )); do
    run helm upgrade --install "$RELEASE" helm/supermarket -n "$NAMESPACE" "${args[@]}" \
      --set storeService.upgradeCopies="$copy" --wait --timeout 20m
    run kubectl rollout status "statefulset/$(store_copy_name "$copy")" -n "$NAMESPACE" --timeout=20m
  done
  run helm upgrade --install "$RELEASE" helm/supermarket -n "$NAMESPACE" "${args[@]}" --wait --timeout 20m
  run kubectl rollout status "statefulset/$(store_copy_name 0)" -n "$NAMESPACE" --timeout=20m
  run helm test "$RELEASE" -n "$NAMESPACE" --timeout 5m
  run kubectl get ingress "$RELEASE-purchase-api" -n "$NAMESPACE" -o 'jsonpath={.status.loadBalancer.ingress[0].hostname}'
}

# What Kubernetes refuses to change in place, read from the cluster and removed before the
# upgrade (helm/README.md, "Upgrading from chart 0.2" and "0.3"): store-service's Service with a
# cluster IP (headless from chart 0.3; it holds no state), and StatefulSets whose
# podManagementPolicy is not Parallel (chart 0.4), deleted without their pods, which keep serving
# with their claims until the upgrade's StatefulSets adopt them.
unchangeable_fields() {
  local cluster_ip policies policy stale=false selector="app.kubernetes.io/instance=$RELEASE,app.kubernetes.io/component=store-service"
  cluster_ip=$(capture "store-service's cluster IP" kubectl get service "$RELEASE-store-service" -n "$NAMESPACE" \
    --ignore-not-found -o 'jsonpath={.spec.clusterIP}')
  if ! $dry_run && [[ -n "$cluster_ip" && "$cluster_ip" != None ]]; then
    log "store-service's Service has cluster IP $cluster_ip (chart < 0.3): deleted, the upgrade creates it headless"
    run kubectl delete service "$RELEASE-store-service" -n "$NAMESPACE" --wait=true --timeout=2m
  fi
  policies=$(capture "store-service's podManagementPolicy" kubectl get statefulset -n "$NAMESPACE" -l "$selector" \
    -o 'jsonpath={.items[*].spec.podManagementPolicy}')
  for policy in $policies; do
    [[ "$policy" == Parallel ]] || stale=true
  done
  if ! $dry_run && $stale; then
    log "store-service's StatefulSets have podManagementPolicy $policies (chart < 0.4): deleted without their pods"
    run kubectl delete statefulset -n "$NAMESPACE" -l "$selector" --cascade=orphan --wait=true --timeout=2m
  fi
}

# storeService.copies of the preset (else the chart's default): the StatefulSets install rolls.
store_copies() {
  local file copies
  for file in "$values" helm/supermarket/values.yaml; do
    copies=$(awk '/^storeService:/ { inside = 1; next } inside && /^[^ #]/ { exit }
      inside && /^  copies:/ { print $2; exit }' "$file")
    if [[ -n "$copies" ]]; then
      echo "$copies"
      return
    fi
  done
  die "no storeService.copies in $values or helm/supermarket/values.yaml"
}

# The StatefulSet of store copy $1 (helm/supermarket/templates/_helpers.tpl, storeCopyName).
store_copy_name() {
  if (( $1 == 0 )); then echo "$RELEASE-store-service"; else echo "$RELEASE-store-service-c$1"; fi
}

# --- load and results
load() {
  local job="$RELEASE-load-client-$run_id" deadline installed chart
  # Only the run's values change here: a release of another chart would be upgraded by this very
  # command, every store copy at once, so up (copy by copy) goes first.
  chart="$RELEASE-$(awk '/^version:/ { print $2; exit }' helm/supermarket/Chart.yaml)"
  installed=$(capture "installed chart" helm list -n "$NAMESPACE" --filter "^$RELEASE\$" -o json)
  if ! $dry_run; then
    installed=$(jq -r '.[0].chart // ""' <<<"${installed:-[]}")
    [[ "$installed" == "$chart" ]] || die "the release runs ${installed:-no chart}, this checkout's chart is $chart: run scripts/eks.sh up first"
  fi
  # The release's own values as installed, the chart's defaults as they are now (--reuse-values
  # would keep the old defaults too), plus the run: a new run id is a new Job. Helm 3.14+.
  run helm upgrade "$RELEASE" helm/supermarket -n "$NAMESPACE" --reset-then-reuse-values \
    --set loadClient.enabled=true --set loadClient.run="$run_id" \
    --set loadClient.maxStores="$stores" --set loadClient.purchasesPerHour="$purchases_per_hour" \
    --wait --timeout 10m
  deadline=$(capture "activeDeadlineSeconds" kubectl get job "$job" -n "$NAMESPACE" -o 'jsonpath={.spec.activeDeadlineSeconds}')
  $dry_run && deadline=43200
  log "run $run_id: follow it with kubectl logs -f job/$job -n $NAMESPACE"
  wait_until "$(( deadline + 300 ))" "job $job to finish" \
    kubectl get job "$job" -n "$NAMESPACE" -o 'jsonpath={.status.succeeded}{.status.failed}' || exit 1
  run kubectl logs "job/$job" -n "$NAMESPACE" --tail=60
  local succeeded
  succeeded=$(capture "succeeded" kubectl get job "$job" -n "$NAMESPACE" -o 'jsonpath={.status.succeeded}')
  $dry_run || [[ "$succeeded" == 1 ]] || die "run $run_id failed (thresholds crossed or the client stopped): see the log above; results, if any: scripts/eks.sh results --run $run_id"
  log "run $run_id done: scripts/eks.sh results --run $run_id"
}

# The Job's pod is gone or finished, so a short-lived reader pod mounts the claim and kubectl cp
# copies the run's folder out of it (the load-client image has tar).
results() {
  local reader="$RELEASE-results-reader" image
  image=$(capture "load-client image" kubectl get job "$RELEASE-load-client-$run_id" -n "$NAMESPACE" \
    -o 'jsonpath={.spec.template.spec.containers[0].image}')
  run kubectl delete pod "$reader" -n "$NAMESPACE" --ignore-not-found --wait=true
  apply_json "$(jq -n --arg ns "$NAMESPACE" --arg name "$reader" --arg image "$image" --arg claim "$RELEASE-load-client-results" '{
    apiVersion: "v1", kind: "Pod", metadata: {name: $name, namespace: $ns},
    spec: {restartPolicy: "Never", activeDeadlineSeconds: 900, automountServiceAccountToken: false,
      securityContext: {runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: {type: "RuntimeDefault"}},
      containers: [{name: "reader", image: $image, command: ["sleep", "900"],
        securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: {drop: ["ALL"]}},
        resources: {requests: {cpu: "50m", memory: "64Mi"}, limits: {cpu: "500m", memory: "256Mi"}},
        volumeMounts: [{name: "results", mountPath: "/results", readOnly: true}]}],
      volumes: [{name: "results", persistentVolumeClaim: {claimName: $claim, readOnly: true}}]}}')"
  run kubectl wait --for=condition=Ready "pod/$reader" -n "$NAMESPACE" --timeout=5m
  run mkdir -p "runs/eks-$run_id"
  run kubectl cp "$NAMESPACE/$reader:/results/$run_id" "runs/eks-$run_id"
  run kubectl delete pod "$reader" -n "$NAMESPACE" --wait=false
  log "results in runs/eks-$run_id (load-client report turns result.json files into a table)"
}

# --- down: in this order, because the controllers clean up what they created in AWS only while
# they run, and an EBS volume whose claim outlives the cluster outlives terraform destroy too.
# After a failed up any cleanup step may fail (no release, no namespace, no cluster at all): each
# failure is noted and the teardown goes on, so terraform destroy always runs; the notes come last.
down() {
  local rds store_var
  cleanup_failures=()
  tf init -input=false
  if kubectl_to_cluster; then
    # The release: deleting the Ingress makes the Load Balancer Controller delete the ALB.
    attempt run helm uninstall "$RELEASE" -n "$NAMESPACE" --ignore-not-found --wait --timeout 10m
    attempt run kubectl wait --for=delete "ingress/$RELEASE-purchase-api" -n "$NAMESPACE" --timeout=10m
    # What the StatefulSets keep (the broker's and store-service's claims) and the results claim
    # (resource-policy keep): every claim of the namespace, then the namespace.
    attempt run kubectl delete pvc --all -n "$NAMESPACE" --ignore-not-found --wait=true --timeout=10m
    attempt run kubectl delete namespace "$NAMESPACE" --ignore-not-found --wait=true --timeout=10m
    # gp3 reclaims with Delete: the EBS CSI driver deletes each volume, so wait for it while it runs.
    attempt wait_until 600 "the namespace's persistent volumes to be deleted" no_volumes_left
    attempt run helm uninstall kube-prometheus-stack -n monitoring --ignore-not-found --wait --timeout 10m
    attempt run helm uninstall cluster-autoscaler -n kube-system --ignore-not-found --wait --timeout 5m
    attempt run helm uninstall aws-load-balancer-controller -n kube-system --ignore-not-found --wait --timeout 5m
    attempt run kubectl delete -f "$TOPOLOGY_OPERATOR_MANIFEST" --ignore-not-found --timeout=5m
    attempt run kubectl delete -f "$CLUSTER_OPERATOR_MANIFEST" --ignore-not-found --timeout=5m
    attempt run kubectl delete -f "$CERT_MANAGER_MANIFEST" --ignore-not-found --timeout=5m
  else
    log "no EKS cluster to reach (terraform output or aws eks update-kubeconfig failed): nothing to clean up inside one"
  fi
  # RDS, if the state holds one: deletion protection off (and the final snapshot's choice) into
  # the state, then destroy. The store is the state's, whatever --store says now.
  rds=$(capture "RDS in the Terraform state" terraform -chdir=terraform state list aws_db_instance.purchases || true)
  store_var=dynamodb
  [[ -z "$rds" ]] || store_var=mysql
  if [[ -n "$rds" ]]; then
    tf apply -input=false -auto-approve -var-file="$tfvars" -var region="$region" -var purchases_store="$store_var" \
      -var rds_deletion_protection=false -var rds_skip_final_snapshot="$skip_final_snapshot"
  fi
  tf destroy -input=false -auto-approve -var-file="$tfvars" -var region="$region" -var purchases_store="$store_var" \
    -var rds_deletion_protection=false -var rds_skip_final_snapshot="$skip_final_snapshot"
  if (( ${#cleanup_failures[@]} > 0 )); then
    printf '[eks] failed cleanup step: %s\n' "${cleanup_failures[@]}" >&2
    die "terraform destroyed the infrastructure, but the cleanup steps above failed: look for EBS volumes tagged kubernetes.io/created-for/pvc/namespace=$NAMESPACE and load balancers tagged elbv2.k8s.aws/cluster that may be left"
  fi
}

# Points kubectl at this deployment's EKS cluster; fails, so that nothing runs against whatever
# context is current, when Terraform names none or EKS does not know it.
kubectl_to_cluster() {
  local cluster
  cluster=$(tf_output cluster_name) && [[ -n "$cluster" ]] || return 1
  run aws eks update-kubeconfig --region "$region" --name "$cluster"
}

# Runs a cleanup step ("$@"); a failure is noted in cleanup_failures and down goes on.
attempt() {
  if ! "$@"; then
    local step="$*"
    cleanup_failures+=("${step#run }")
    log "failed, going on: ${step#run }"
  fi
}

# Prints "gone" once no persistent volume is bound to a claim of the namespace.
no_volumes_left() {
  local left
  # A failed listing is no answer: keep waiting.
  left=$(kubectl get pv -o jsonpath="{range .items[?(@.spec.claimRef.namespace==\"$NAMESPACE\")]}{.metadata.name}{\"\\n\"}{end}") || return 0
  [[ -n "$left" ]] || echo gone
}

case "$command" in
  quota) check_vcpu_quota ;;
  up)
    check_vcpu_quota
    infrastructure
    $skip_images || images
    controllers
    namespace
    [[ "$store" != mysql ]] || mysql_users
    till_keys
    install
    ;;
  keys) publish_keys ;;
  load) load ;;
  results) results ;;
  down) down ;;
esac
