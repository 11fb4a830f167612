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

{{/* Internal TLS (docs/operations.md "Internal TLS (the PKI)"): mutual
     TLS on every internal gRPC hop, each service's identity one DNS name
     of its certificate. gateway, scheduler and vault each mount the Secret
     internalTLSSecret (dict "root" . "name" ROLE), with keys ca.crt,
     tls.crt and tls.key as cert-manager writes them, at internalTLSDir
     (internalTLSMount, internalTLSVolume); vmhost and egress read their
     node's files from the host directory internalTLS.nodeCertDir. */}}
{{- define "airlock.internalTLSDir" -}}
/etc/airlock/internal-tls
{{- end -}}

{{- define "airlock.internalTLSCASecret" -}}
{{ printf "%s-internal-ca" (include "airlock.fullname" .) }}
{{- end -}}

{{- define "airlock.internalTLSSecret" -}}
{{ printf "%s-internal-tls-%s" (include "airlock.fullname" .root) .name }}
{{- end -}}

{{/* The identity of role .name (gateway, scheduler, vault), as
     common/rpc/peer_identity.h reads it. */}}
{{/* The Secret nats-server serves TLS with: nats.tls.secretName, else the
     chart's internal one for nats; "" = plain TCP. */}}
{{- define "airlock.natsTLSSecret" -}}
{{- if .Values.nats.tls.secretName -}}
{{ .Values.nats.tls.secretName }}
{{- else if .Values.internalTLS.enabled -}}
{{ include "airlock.internalTLSSecret" (dict "root" . "name" "nats") }}
{{- end -}}
{{- end -}}

{{- define "airlock.internalTLSDNSName" -}}
{{ .name }}.airlock.internal
{{- end -}}

{{- define "airlock.internalTLSMount" -}}
- name: internal-tls
  mountPath: {{ include "airlock.internalTLSDir" . }}
  readOnly: true
{{- end -}}

{{- define "airlock.internalTLSVolume" -}}
- name: internal-tls
  secret:
    secretName: {{ include "airlock.internalTLSSecret" . }}
    items:
      - key: ca.crt
        path: ca.crt
      - key: tls.crt
        path: tls.crt
      - key: tls.key
        path: tls.key
    # The services refuse a key file group or others may read.
    defaultMode: 0400
{{- end -}}

{{/* The chart's own certificates (internal-tls.yaml): whether the one of
     role .name is kept or made anew at this install or upgrade, and until
     when it is valid, as "keep UNIX" or "new UNIX". Kept while the CA
     Secret that signed it is there and it has 30 more days; otherwise made
     anew, valid certDays from the start of this hour (so every template
     of one render computes the same). The pods carry UNIX as an
     annotation: a new certificate restarts them, as nothing sends them
     SIGHUP. */}}
{{- define "airlock.internalTLSRenewal" -}}
{{- $root := .root -}}
{{- $ns := $root.Release.Namespace -}}
{{- $ca := lookup "v1" "Secret" $ns (include "airlock.internalTLSCASecret" $root) -}}
{{- $own := lookup "v1" "Secret" $ns (include "airlock.internalTLSSecret" .) -}}
{{- $now := now | unixEpoch | int64 -}}
{{- $kept := 0 -}}
{{- if and $ca $own -}}
{{- $notAfter := (index ($own.metadata.annotations | default dict) "airlock.dev/not-after") | default "0" | int64 -}}
{{- if and (eq (index $own.data "ca.crt" | default "") (index $ca.data "ca.crt" | default "-"))
           (gt $notAfter (add $now 2592000)) -}}
{{- $kept = $notAfter -}}
{{- end -}}
{{- end -}}
{{- if $kept -}}
keep {{ $kept }}
{{- else -}}
new {{ add (mul (div $now 3600) 3600) (mul $root.Values.internalTLS.generated.certDays 86400) }}
{{- end -}}
{{- end -}}

{{/* The pod annotation that restarts a Deployment's pods when the chart
     made its certificate anew (internalTLSRenewal); nothing with
     cert-manager (docs/operations.md: rotation). */}}
{{/* Prometheus' scrape annotations for a pod serving /metrics on .port. */}}
{{- define "airlock.metricsAnnotations" -}}
{{- if .root.Values.metrics.enabled -}}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .port | quote }}
prometheus.io/path: /metrics
{{- end -}}
{{- end -}}

{{- define "airlock.internalTLSAnnotations" -}}
{{- if and .root.Values.internalTLS.enabled (not .root.Values.internalTLS.certManager.issuerRef) -}}
airlock.dev/internal-cert-not-after: {{ include "airlock.internalTLSRenewal" . | splitList " " | last | quote }}
{{- end -}}
{{- end -}}
