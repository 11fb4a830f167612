{{/* Names and labels shared by every object of the release. */}}
{{- define "airlock.fullname" -}}
{{- printf "%s-airlock" .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}

{{- define "airlock.labels" -}}
app.kubernetes.io/name: airlock
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "airlock.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}

{{/* The libpq connection string, from the in-chart PostgreSQL or the
     operator's own Secret. Rendered as an env entry named DATABASE_URL. */}}
{{- define "airlock.databaseEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
{{- if .Values.postgresql.enabled }}
      name: {{ include "airlock.fullname" . }}-database
{{- else }}
      name: {{ required "externalDatabase.existingSecret is required when postgresql.enabled is false" .Values.externalDatabase.existingSecret }}
{{- end }}
      key: url
{{- end -}}

{{- define "airlock.natsUrl" -}}
{{- if .Values.nats.enabled -}}
nats://{{ include "airlock.fullname" . }}-nats:4222
{{- else -}}
{{ required "nats.externalUrl is required when nats.enabled is false" .Values.nats.externalUrl }}
{{- end -}}
{{- end -}}
