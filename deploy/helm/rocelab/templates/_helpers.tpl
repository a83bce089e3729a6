{{/* The name of every object: the release's, "rocelab" for release rocelab. */}}
{{- define "rocelab.name" -}}
{{- if contains "rocelab" .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-rocelab" .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "rocelab.labels" -}}
app.kubernetes.io/name: rocelab
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "rocelab.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "rocelab.tokenSecret" -}}
{{- .Values.agent.existingTokenSecret | default (printf "%s-agent-token" (include "rocelab.name" .)) -}}
{{- end -}}

{{/* Env of every container: the agents' token, the lab CA's certificate, the API server when set. */}}
{{- define "rocelab.env" -}}
- name: ROCELAB_AGENT_TOKEN
  valueFrom: {secretKeyRef: {name: {{ include "rocelab.tokenSecret" . }}, key: token}}
{{- if .Values.agent.tls }}
- name: ROCELAB_AGENT_CA
  value: /etc/rocelab/ca/ca.pem
{{- end }}
{{- with .Values.apiServer.host }}
- name: KUBERNETES_SERVICE_HOST
  value: {{ . | quote }}
{{- end }}
{{- with .Values.apiServer.port }}
- name: KUBERNETES_SERVICE_PORT
  value: {{ . | quote }}
{{- end }}
{{- end -}}
