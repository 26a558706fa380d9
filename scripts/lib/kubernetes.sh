# Sourced by scripts/eks.sh and scripts/k8s-install.sh: what both do to a cluster the same way.

# A Secret of namespace $NAMESPACE as JSON: name, then key value pairs. The values reach jq through
# its environment and standard input, never its command line (which any user may read).
secret_json() {
  local name="$1"; shift
  local data='{}'
  while [[ $# -gt 0 ]]; do
    data=$(SECRET_KEY="$1" SECRET_VALUE="$2" jq -c '. + {($ENV.SECRET_KEY): $ENV.SECRET_VALUE}' <<<"$data")
    shift 2
  done
  jq --arg name "$name" --arg ns "$NAMESPACE" \
    '{apiVersion: "v1", kind: "Secret", metadata: {name: $name, namespace: $ns}, type: "Opaque", stringData: .}' <<<"$data"
}
