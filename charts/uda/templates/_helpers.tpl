{{/* Resource name prefix: the release name, or release-chart when the release name lacks the chart name. */}}
{{- define "uda.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "uda.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels of one component: call with (dict "ctx" $ "component" "api"). */}}
{{- define "uda.selectorLabels" -}}
app.kubernetes.io/name: {{ include "uda.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* All labels of one component's objects. */}}
{{- define "uda.labels" -}}
{{ include "uda.selectorLabels" . }}
app.kubernetes.io/part-of: uda
app.kubernetes.io/version: {{ .ctx.Values.image.tag | default .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version }}
{{- end -}}

{{/* Image reference: call with (dict "ctx" $ "image" .Values.api.image). */}}
{{- define "uda.image" -}}
{{- $tag := .image.tag | default .ctx.Values.image.tag | default .ctx.Chart.AppVersion -}}
{{- if eq $tag "latest" -}}{{- fail "image tag `latest` is not allowed: pin a version" -}}{{- end -}}
{{- printf "%s/%s:%s" .ctx.Values.image.registry .image.repository $tag -}}
{{- end -}}

{{/* One env var from the credentials Secret: (dict "ctx" $ "name" "DATABASE_URL" "key" "databaseUrl" "optional" false). */}}
{{- define "uda.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ .ctx.Values.secrets.existingSecret }}
      key: {{ index .ctx.Values.secrets.keys .key }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end -}}

{{/* The runner token Secret's name: the existing one, or the one the chart creates. */}}
{{- define "uda.runnerTokenSecret" -}}
{{- .Values.runnerToken.existingSecret | default (printf "%s-runner-token" (include "uda.fullname" .)) -}}
{{- end -}}

{{/* The runner token as one env var: (dict "ctx" $ "name" "RUNNER_TOKEN"). */}}
{{- define "uda.runnerTokenEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "uda.runnerTokenSecret" .ctx }}
      key: {{ .ctx.Values.runnerToken.key }}
{{- end -}}

{{- define "uda.s3SecretEnv" -}}
{{ include "uda.secretEnv" (dict "ctx" .ctx "name" "S3_ACCESS_KEY_ID" "key" "s3AccessKeyId" "optional" true) }}
{{ include "uda.secretEnv" (dict "ctx" .ctx "name" "S3_SECRET_ACCESS_KEY" "key" "s3SecretAccessKey" "optional" true) }}
{{- end -}}

{{/* Non-secret S3 settings shared by every ConfigMap. */}}
{{- define "uda.s3Config" -}}
S3_BUCKET: {{ .Values.common.s3.bucket | quote }}
S3_REGION: {{ .Values.common.s3.region | quote }}
S3_FORCE_PATH_STYLE: {{ .Values.common.s3.forcePathStyle | toString | quote }}
{{- with .Values.common.s3.endpoint }}
S3_ENDPOINT: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* Pod security context: the official node image's unprivileged user. */}}
{{- define "uda.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "uda.containerSecurityContext" -}}
runAsNonRoot: true
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* Spread replicas over zones and nodes; best effort so a small cluster still schedules. */}}
{{- define "uda.topologySpread" -}}
- maxSkew: 1
  topologyKey: topology.kubernetes.io/zone
  whenUnsatisfiable: ScheduleAnyway
  labelSelector:
    matchLabels:
      {{- include "uda.selectorLabels" . | nindent 6 }}
- maxSkew: 1
  topologyKey: kubernetes.io/hostname
  whenUnsatisfiable: ScheduleAnyway
  labelSelector:
    matchLabels:
      {{- include "uda.selectorLabels" . | nindent 6 }}
{{- end -}}

{{/* nodeSelector, tolerations, pull secrets shared by every pod. */}}
{{- define "uda.podScheduling" -}}
{{- with .Values.common.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.common.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.image.pullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . }}
  {{- end }}
{{- end }}
{{- end -}}
