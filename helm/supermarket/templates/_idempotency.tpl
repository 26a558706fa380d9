{{/*
Whether the chart runs the idempotency store itself: redis.enabled and no external Redis named
in purchaseApi.idempotency.redisUrl (an external one, e.g. ElastiCache, wins).
*/}}
{{- define "supermarket.redisInCluster" -}}
{{- if and .Values.redis.enabled (not .Values.purchaseApi.idempotency.redisUrl) }}true{{- end }}
{{- end }}

{{/*
purchase-api's API_IDEMPOTENCY_REDIS_URL: the external Redis if one is named, else the in-cluster
one's Service, else "" (no idempotency store: NOTES.txt warns).
*/}}
{{- define "supermarket.idempotencyRedisUrl" -}}
{{- if .Values.purchaseApi.idempotency.redisUrl }}
{{- .Values.purchaseApi.idempotency.redisUrl }}
{{- else if include "supermarket.redisInCluster" . }}
{{- printf "redis://%s:%d/0" (include "supermarket.componentName" (dict "root" . "component" "redis")) (int .Values.redis.port) }}
{{- end }}
{{- end }}
