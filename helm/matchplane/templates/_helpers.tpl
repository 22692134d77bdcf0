{{/* Name of the release's objects. */}}
{{- define "matchplane.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels every object carries. */}}
{{- define "matchplane.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Name of the Secret with DATABASE_URL, REDIS_URL, MATCHPLANE_OPERATOR_TOKEN. */}}
{{- define "matchplane.secretName" -}}
{{- if .Values.createSecret.enabled -}}
{{- include "matchplane.fullname" . -}}
{{- else -}}
{{- .Values.existingSecret -}}
{{- end -}}
{{- end -}}

{{/*
The Redis URL of the created Secret: a redis+cluster:// URL of
redis.cluster.nodes when any are given, else createSecret.redisUrl.
*/}}
{{- define "matchplane.redisUrl" -}}
{{- if .Values.redis.cluster.nodes -}}
{{- printf "redis+cluster://%s" (join "," .Values.redis.cluster.nodes) -}}
{{- else -}}
{{- required "createSecret.redisUrl" .Values.createSecret.redisUrl -}}
{{- end -}}
{{- end -}}
