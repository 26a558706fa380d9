{{/*
The chart name, truncated to 63 characters (the DNS label limit of Kubernetes names).
*/}}
{{- define "supermarket.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release-qualified name prefix of every resource. Truncated to 40 characters so that the
longest suffix ("-purchases-service", "-rabbitmq-default-user") still fits in 63.
*/}}
{{- define "supermarket.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Chart name and version, for the helm.sh/chart label.
*/}}
{{- define "supermarket.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of every resource of the release. Takes the root context.
*/}}
{{- define "supermarket.labels" -}}
helm.sh/chart: {{ include "supermarket.chart" . }}
app.kubernetes.io/name: {{ include "supermarket.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: supermarket
{{- end }}

{{/*
Selector labels of one component. Takes (dict "root" $ "component" "purchase-api").
*/}}
{{- define "supermarket.selectorLabels" -}}
app.kubernetes.io/name: {{ include "supermarket.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
All labels of one component's resources. Takes (dict "root" $ "component" "purchase-api").
*/}}
{{- define "supermarket.componentLabels" -}}
{{ include "supermarket.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
Name of one component's resources. Takes (dict "root" $ "component" "purchase-api").
*/}}
{{- define "supermarket.componentName" -}}
{{- printf "%s-%s" (include "supermarket.fullname" .root) .component }}
{{- end }}

{{/*
The image reference of a service: [registry/]repository:tag, the tag defaulting to appVersion.
Takes (dict "root" $ "image" .Values.purchaseApi.image).
*/}}
{{- define "supermarket.image" -}}
{{- $tag := .image.tag | default .root.Chart.AppVersion | toString }}
{{- if .root.Values.imageRegistry }}
{{- printf "%s/%s:%s" (trimSuffix "/" .root.Values.imageRegistry) .image.repository $tag }}
{{- else }}
{{- printf "%s:%s" .image.repository $tag }}
{{- end }}
{{- end }}

{{/*
Name of the RabbitmqCluster (and, by the operator's convention, of its client Service).
*/}}
{{- define "supermarket.rabbitmqName" -}}
{{- printf "%s-rabbitmq" (include "supermarket.fullname" .) }}
{{- end }}

{{/*
Name of the ConfigMap holding the settings the three services share.
*/}}
{{- define "supermarket.configName" -}}
{{- printf "%s-config" (include "supermarket.fullname" .) }}
{{- end }}

{{/*
Name of the shared ServiceAccount of purchase-api and store-service (no API or AWS access).
*/}}
{{- define "supermarket.serviceAccountName" -}}
{{- include "supermarket.fullname" . }}
{{- end }}

{{/*
Name of purchases-service's ServiceAccount (the one carrying the IRSA role).
*/}}
{{- define "supermarket.purchasesServiceAccountName" -}}
{{- printf "%s-purchases-service" (include "supermarket.fullname" .) }}
{{- end }}

{{/*
Whether each service has a broker user of its own (rabbitmq.serviceUsers.enabled, in-cluster
broker only): the Messaging Topology Operator creates the users, their permissions and the
topology, and the services neither declare nor set policies.
*/}}
{{/*
The number of store partitions (storeService.partitions), checked against the storeX shard
count, which must be a multiple of it (contract StorePartition): the replicated shards, or the
shards per node times the chart's broker nodes (an external sharded broker is checked by the
services themselves, which refuse to consume or route).
*/}}
{{- define "supermarket.storePartitions" -}}
{{- $partitions := int .Values.storeService.partitions }}
{{- $shards := 0 }}
{{- if eq .Values.rabbitmq.topologyMode "replicated" }}
{{- $shards = int .Values.rabbitmq.replicatedShards }}
{{- else if .Values.rabbitmq.cluster.enabled }}
{{- $shards = mul (int .Values.rabbitmq.shardsPerNode) (int .Values.rabbitmq.cluster.replicas) }}
{{- end }}
{{- if and (gt $shards 0) (ne (mod $shards $partitions) 0) }}
{{- fail (printf "storeService.partitions (%d) must divide the storeX shard queues (%d): each partition consumes every %dth shard queue, and a shard queue's stores must belong to one partition" $partitions $shards $partitions) }}
{{- end }}
{{- $partitions }}
{{- end }}

{{/*
Name of store-service copy group c's StatefulSet (dict "root", "copy"): copy 0 is store-service
itself (the name it had before copies existed, so its pods and volumes stay), copy c
store-service-c<c>. Its pods are this name, "-", the partition.
*/}}
{{- define "supermarket.storeCopyName" -}}
{{- $name := include "supermarket.componentName" (dict "root" .root "component" "store-service") }}
{{- if eq (int .copy) 0 }}{{ $name }}{{ else }}{{ printf "%s-c%d" $name (int .copy) }}{{ end }}
{{- end }}

{{- define "supermarket.serviceUsers" -}}
{{- if and .Values.rabbitmq.cluster.enabled .Values.rabbitmq.serviceUsers.enabled }}true{{- end }}
{{- end }}

{{/*
Name of the Messaging Topology Operator's User of a service (dict "root", "component"); the
operator writes its generated credentials to the Secret "<this>-user-credentials".
*/}}
{{- define "supermarket.brokerUserName" -}}
{{- printf "%s-%s" (include "supermarket.fullname" .root) .component }}
{{- end }}

{{/*
Broker credentials of a service (dict "root", "component"): its own user's Secret when
serviceUsers is on, else the operator's default-user Secret for the in-cluster broker, or, for
an external one, the service's own Secret (external.serviceSecrets) or the shared one.
*/}}
{{- define "supermarket.rabbitmqCredentialsEnv" -}}
{{- $external := .root.Values.rabbitmq.external }}
{{- $secret := default $external.existingSecret (get $external.serviceSecrets (.component | camelcase | untitle)) }}
{{- if include "supermarket.serviceUsers" .root }}
{{- $secret = printf "%s-user-credentials" (include "supermarket.brokerUserName" .) }}
{{- else if .root.Values.rabbitmq.cluster.enabled }}
{{- $secret = printf "%s-default-user" (include "supermarket.rabbitmqName" .root) }}
{{- end }}
- name: RABBITMQ_USERNAME
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: username
- name: RABBITMQ_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: password
{{- end }}

{{/*
A checksum annotation per Secret that the rendered env entries (dict "root", "env": containers'
and init containers' env as text) read by secretKeyRef, its value secretChecksums.<name>: set at
each upgrade from the live Secret (scripts/eks.sh up), it rolls exactly the pods that read a
changed password at start (docs/operations.md, "Database and broker passwords"). Not Helm's
lookup: `helm template` and the chart's offline tests would need a cluster for it. The till keys'
Secret is mounted and reread by the API, not read here: a rotation rolls nothing.
*/}}
{{- define "supermarket.secretChecksums" -}}
{{- $names := list }}
{{- range regexFindAll "secretKeyRef:\\s+name: \\S+" .env -1 }}
{{- $names = append $names (regexReplaceAll "^secretKeyRef:\\s+name: " . "") }}
{{- end }}
{{- range $name := $names | uniq | sortAlpha }}
{{ printf "checksum/secret-%s" $name | trunc 72 }}: {{ get $.root.Values.secretChecksums $name | quote }}
{{- end }}
{{- end }}

{{/*
The Deployment of one service; the three services differ only in the arguments. Takes a dict:
root ($), component (name), values (the service's values), serviceAccountName, strategy
(optional), autoscaled (bool: leave replicas to the HPA), extraEnv (rendered env entries),
stateVolume (optional dict mountPath, size, storageClassName, deletedWithSet: makes it a StatefulSet
whose pod keeps a PersistentVolumeClaim "state" mounted there across restarts and rescheduling, the
claims deleted with the StatefulSet when deletedWithSet), name (optional:
the workload's name, default the component's), podLabels (optional dict: further labels of its
pods), selectorLabels (optional dict: further labels of its selector, a subset of podLabels),
spreadKey (the label of matchLabelKeys in its topology spread constraints, default
pod-template-hash), heldPods (optional, StatefulSet: its pods of a lower ordinal keep their
revision in an update, rollingUpdate.partition). From the service's values it also takes
javaToolOptions (overrides platform.javaToolOptions), env (a map of further settings, e.g.
PURCHASES_INGEST_CONSUMERS_PER_SHARD), terminationGracePeriodSeconds and, optionally,
shutdown.preStopSleepSeconds (a preStop call to the service's drain endpoint, which closes kept-alive
connections and returns after that many seconds; then the JVM gets its SIGTERM).
*/}}
{{- define "supermarket.deployment" -}}
{{- $root := .root }}
{{- $values := .values }}
{{- $component := dict "root" $root "component" .component }}
{{- $state := .stateVolume }}
{{- $selector := include "supermarket.selectorLabels" $component }}
{{- with .selectorLabels }}
{{- $selector = printf "%s\n%s" $selector (toYaml . | trim) }}
{{- end }}
apiVersion: apps/v1
kind: {{ if $state }}StatefulSet{{ else }}Deployment{{ end }}
metadata:
  name: {{ .name | default (include "supermarket.componentName" $component) }}
  labels:
    {{- include "supermarket.componentLabels" $component | nindent 4 }}
spec:
  {{- if not .autoscaled }}
  replicas: {{ $values.replicaCount }}
  {{- end }}
  {{- if $state }}
  serviceName: {{ include "supermarket.componentName" $component }}
  # Every pod at once: pod n waits for no lower ordinal to be Ready, since a pod with an empty volume
  # is Ready only once a copy of its own partition has answered it (immutable once created).
  podManagementPolicy: Parallel
  {{- if $state.deletedWithSet }}
  persistentVolumeClaimRetentionPolicy:
    whenDeleted: Delete
    whenScaled: Retain
  {{- end }}
  {{- end }}
  {{- with .strategy }}
  strategy:
    type: {{ . }}
  {{- end }}
  {{- with .heldPods }}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      partition: {{ . }}
  {{- end }}
  selector:
    matchLabels:
      {{- $selector | nindent 6 }}
  template:
    metadata:
      annotations:
        # Roll the pods when the shared settings change.
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        {{- with include "supermarket.secretChecksums" (dict "root" $root "env" (printf "%s\n%s\n%s" (include "supermarket.rabbitmqCredentialsEnv" $component) (.extraEnv | default "") (.initContainers | default ""))) | trim }}
        {{- . | nindent 8 }}
        {{- end }}
        {{- with $values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      labels:
        {{- include "supermarket.componentLabels" $component | nindent 8 }}
        {{- with .podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      serviceAccountName: {{ .serviceAccountName }}
      terminationGracePeriodSeconds: {{ $values.terminationGracePeriodSeconds }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      {{- with .initContainers }}
      initContainers:
        {{- . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ .component }}
          image: {{ include "supermarket.image" (dict "root" $root "image" $values.image) | quote }}
          imagePullPolicy: {{ $root.Values.imagePullPolicy }}
          ports:
            - name: http
              containerPort: {{ $values.port }}
              protocol: TCP
            # Actuator: probes and metrics only, never behind the Ingress.
            - name: management
              containerPort: {{ $root.Values.managementPort }}
              protocol: TCP
          envFrom:
            - configMapRef:
                name: {{ include "supermarket.configName" $root }}
          env:
            - name: SERVER_PORT
              value: {{ $values.port | quote }}
            - name: MANAGEMENT_PORT
              value: {{ $root.Values.managementPort | quote }}
            {{- include "supermarket.rabbitmqCredentialsEnv" (dict "root" $root "component" .component) | trim | nindent 12 }}
            {{- with $values.javaToolOptions }}
            # Overrides the shared JAVA_TOOL_OPTIONS of the ConfigMap for this service only.
            - name: JAVA_TOOL_OPTIONS
              value: {{ . | quote }}
            {{- end }}
            {{- with .extraEnv }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- range $name, $value := $values.env }}
            - name: {{ $name }}
              value: {{ $value | toString | quote }}
            {{- end }}
          {{- with ($values.shutdown).preStopSleepSeconds }}
          # Keeps serving while the load balancer and the Service stop sending, closing each kept-alive
          # connection after its next answer so that its client moves to another pod, then the
          # SIGTERM drains (helm/README.md, "Rollouts"). The call returns after the seconds.
          lifecycle:
            preStop:
              httpGet:
                path: /actuator/drain/{{ . }}
                port: management
          {{- end }}
          startupProbe:
            {{- toYaml $root.Values.probes.startup | nindent 12 }}
          livenessProbe:
            {{- toYaml $root.Values.probes.liveness | nindent 12 }}
          readinessProbe:
            {{- toYaml $root.Values.probes.readiness | nindent 12 }}
          resources:
            {{- toYaml $values.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          volumeMounts:
            # The root filesystem is read-only; the JVM and Tomcat need a writable /tmp.
            - name: tmp
              mountPath: /tmp
            {{- if $state }}
            - name: state
              mountPath: {{ $state.mountPath }}
            {{- end }}
            {{- with .extraVolumeMounts }}
            {{- . | nindent 12 }}
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 256Mi
        {{- with .extraVolumes }}
        {{- . | nindent 8 }}
        {{- end }}
      {{- with $values.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- range . }}
        - {{ toYaml . | nindent 10 | trim }}
          labelSelector:
            matchLabels:
              {{- include "supermarket.selectorLabels" $component | nindent 14 }}
          matchLabelKeys:
            - {{ $.spreadKey | default "pod-template-hash" }}
        {{- end }}
      {{- end }}
      {{- with $values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
  {{- if $state }}
  volumeClaimTemplates:
    - metadata:
        name: state
        labels:
          # Selector labels only: a StatefulSet's claim templates cannot change after creation.
          {{- $selector | nindent 10 }}
      spec:
        accessModes: [ReadWriteOnce]
        {{- with include "supermarket.storageClass" (dict "root" $root "className" $state.storageClassName) }}
        storageClassName: {{ . }}
        {{- end }}
        resources:
          requests:
            storage: {{ $state.size }}
  {{- end }}
{{- end }}

{{/*
The StorageClass of a volume: the component's own class, else global.storageClass. Takes
(dict "root" $ "className" .Values.<component>.persistence.storageClassName). Empty: the
cluster's default class.
*/}}
{{- define "supermarket.storageClass" -}}
{{- .className | default .root.Values.global.storageClass }}
{{- end }}

{{/*
The ports of a service's Service: the API (http) and actuator (management, for Prometheus).
Takes (dict "root" $ "port" <service port>).
*/}}
{{- define "supermarket.servicePorts" -}}
- name: http
  port: {{ .port }}
  targetPort: http
  protocol: TCP
- name: management
  port: {{ .root.Values.managementPort }}
  targetPort: management
  protocol: TCP
{{- end }}
