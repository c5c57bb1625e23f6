{{/* The name of the chart's objects. */}}
{{- define "sluice.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains "sluice" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-sluice" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "sluice.labels" -}}
app.kubernetes.io/name: sluice
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Labels that select the manager's pods. */}}
{{- define "sluice.selectorLabels" -}}
app.kubernetes.io/name: sluice
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{/* The webhook Service's name. */}}
{{- define "sluice.webhookService" -}}
{{ include "sluice.fullname" . }}-webhook
{{- end -}}

{{/* The webhook certificate Secret's name. */}}
{{- define "sluice.certSecret" -}}
{{ include "sluice.fullname" . }}-webhook-cert
{{- end -}}

{{/* clientConfig of the webhook at path (.path), for the root context (.root) and CA bundle (.ca, empty with cert-manager). */}}
{{- define "sluice.clientConfig" -}}
{{- if .root.Values.webhook.url }}
url: {{ printf "%s%s" (trimSuffix "/" .root.Values.webhook.url) .path | quote }}
{{- else }}
service:
  name: {{ include "sluice.webhookService" .root }}
  namespace: {{ .root.Release.Namespace }}
  path: {{ .path }}
{{- end }}
{{- if .ca }}
caBundle: {{ .ca }}
{{- end }}
{{- end -}}
