{{/*
The score agent's image reference (scoreAgent.image): the manager's image (image.*, which carries
/score-agent too) when scoreAgent.image sets no repository, tag or digest; otherwise the repository
(image.repository by default) with the digest, or with the tag (the appVersion by default).
*/}}
{{- define "placement-manifestwork.scoreAgentImage" -}}
{{- $i := .Values.scoreAgent.image }}
{{- if and (not $i.repository) (not $i.tag) (not $i.digest) }}
{{- include "placement-manifestwork.image" . }}
{{- else if $i.digest }}
{{- printf "%s@%s" (default .Values.image.repository $i.repository) $i.digest }}
{{- else }}
{{- printf "%s:%s" (default .Values.image.repository $i.repository) (default .Chart.AppVersion $i.tag) }}
{{- end }}
{{- end }}

{{/* The labels of the score agent's hub objects: the chart's, and the component of config/addon. */}}
{{- define "placement-manifestwork.scoreAgentLabels" -}}
{{ include "placement-manifestwork.labels" . }}
app.kubernetes.io/component: score-agent
{{- end }}
