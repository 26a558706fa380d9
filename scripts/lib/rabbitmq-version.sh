# The RabbitMQ version the project runs, read from the one place that names it: the chart's
# broker image (helm/supermarket/values.yaml, rabbitmq.cluster.image, rabbitmq:<version>-management),
# which production runs. Sourced, not run; sets
#   RABBITMQ_VERSION         e.g. 4.3.6
#   RABBITMQ_OFFICIAL_IMAGE  e.g. rabbitmq:4.3.6-management (the image wherever a registry serves it)
# Tests read the same value (broker's RabbitMqVersion); docker-compose.yml, which cannot read a
# file for a default, is held to it by a test (deployment's ComposeFileTest).

rabbitmq_version_file="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/helm/supermarket/values.yaml"
RABBITMQ_OFFICIAL_IMAGE="$(sed -n 's/^    image: \(rabbitmq:[0-9][0-9.]*-management\)[[:space:]]*$/\1/p' "$rabbitmq_version_file")"
if [[ "$(wc -w <<<"$RABBITMQ_OFFICIAL_IMAGE")" -ne 1 ]]; then
  echo "cannot read the RabbitMQ image (one line '    image: rabbitmq:<version>-management') from $rabbitmq_version_file" >&2
  return 1
fi
RABBITMQ_VERSION="${RABBITMQ_OFFICIAL_IMAGE#rabbitmq:}"
RABBITMQ_VERSION="${RABBITMQ_VERSION%-management}"
unset rabbitmq_version_file
