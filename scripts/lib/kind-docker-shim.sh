#!/usr/bin/env bash
# docker for kind (scripts/k8s-local.sh puts a copy named docker first on kind's PATH): runs the
# engine's docker, K8S_LOCAL_DOCKER, and kind's containers on the runtime K8S_LOCAL_RUNTIME when set.
if [[ -z "${K8S_LOCAL_DOCKER:-}" || "$K8S_LOCAL_DOCKER" -ef "$0" ]]; then
  echo "docker shim: K8S_LOCAL_DOCKER must name the engine's docker, not '${K8S_LOCAL_DOCKER:-}'" >&2
  exit 1
fi
if [[ "${1:-}" == run && -n "${K8S_LOCAL_RUNTIME:-}" ]]; then
  shift
  exec "$K8S_LOCAL_DOCKER" run --runtime="$K8S_LOCAL_RUNTIME" "$@"
fi
exec "$K8S_LOCAL_DOCKER" "$@"
