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

{{/* The in-chart PostgreSQL's data dir and password (database.yaml),
     for its server and its init container. */}}
{{- define "airlock.postgresqlAuthEnv" -}}
- name: PGDATA
  value: /var/lib/postgresql/data/pgdata
- name: POSTGRES_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "airlock.fullname" . }}-database
      key: password
- name: POSTGRES_HOST_AUTH_METHOD
  value: scram-sha-256
{{- end -}}

{{/* Pods that read DATABASE_URL from the in-chart Secret: its connection
     string gained the password when the chart began to require one, and a
     pod reads it only at start, so the changed annotation restarts them
     on that upgrade. */}}
{{- define "airlock.databaseAnnotations" -}}
{{- if .Values.postgresql.enabled -}}
airlock.dev/database-auth: scram-sha-256
{{- end }}
{{- end -}}

{{- define "airlock.natsUrl" -}}
{{- if .Values.nats.enabled -}}
nats://{{ include "airlock.fullname" . }}-nats:4222
{{- else -}}
{{ required "nats.externalUrl is required when nats.enabled is false" .Values.nats.externalUrl }}
{{- end -}}
{{- end -}}

{{/* The internal token the components present to each other and to NATS
     (docs/operations.md "Internal token"): a Secret with key `token`, the
     chart's own (internal-token.yaml) unless internalToken.existingSecret
     names one. Each airlock container mounts it (internalTokenMount,
     internalTokenVolume) and passes --internal-token-file with the path
     internalTokenFile. */}}
{{- define "airlock.internalTokenSecret" -}}
{{ .Values.internalToken.existingSecret | default (printf "%s-internal-token" (include "airlock.fullname" .)) }}
{{- end -}}

{{- define "airlock.internalTokenFile" -}}
/etc/airlock/internal-token/token
{{- end -}}

{{- define "airlock.internalTokenMount" -}}
- name: internal-token
  mountPath: /etc/airlock/internal-token
  readOnly: true
{{- end -}}

{{- define "airlock.internalTokenVolume" -}}
- name: internal-token
  secret:
    secretName: {{ include "airlock.internalTokenSecret" . }}
    # The services refuse a token file group or others may read.
    defaultMode: 0400
{{- end -}}

{{/* The NATS users' Secret (nats-users.yaml). A service mounts its role's
     credentials file (natsCredentialsMount, natsCredentialsVolume with
     dict "root" . "role" ROLE) and passes --nats-credentials-file with
     natsCredentialsFile. */}}
{{- define "airlock.natsUsersSecret" -}}
{{ printf "%s-nats-users" (include "airlock.fullname" .) }}
{{- end -}}

{{- define "airlock.natsCredentialsFile" -}}
/etc/airlock/nats/credentials
{{- end -}}

{{- define "airlock.natsCredentialsMount" -}}
- name: nats-credentials
  mountPath: /etc/airlock/nats
  readOnly: true
{{- end -}}

{{- define "airlock.natsCredentialsVolume" -}}
- name: nats-credentials
  secret:
    secretName: {{ include "airlock.natsUsersSecret" .root }}
    items:
      - key: {{ .role }}
        path: credentials
    # The services refuse a credentials file group or others may read.
    defaultMode: 0400
{{- end -}}
