{{/* The chart's name, cut to 63 characters. */}}
{{- define "placement-manifestwork.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The full name of the release's objects, cut to 63 characters (some Kubernetes name fields are limited to
that). When the release name already contains the chart's name it is used as it is.
*/}}
{{- define "placement-manifestwork.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The chart label's value: name and version. */}}
{{- define "placement-manifestwork.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The labels every object carries. */}}
{{- define "placement-manifestwork.labels" -}}
helm.sh/chart: {{ include "placement-manifestwork.chart" . }}
{{ include "placement-manifestwork.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: open-cluster-management
{{- end }}

{{/* The labels that tell the release's objects from others. */}}
{{- define "placement-manifestwork.selectorLabels" -}}
app.kubernetes.io/name: {{ include "placement-manifestwork.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The labels that select the manager's pods. */}}
{{- define "placement-manifestwork.managerSelectorLabels" -}}
{{ include "placement-manifestwork.selectorLabels" . }}
app.kubernetes.io/component: controller-manager
{{- end }}

{{/* The ServiceAccount the manager runs as. */}}
{{- define "placement-manifestwork.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "placement-manifestwork.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The namespace of the leader election Lease. */}}
{{- define "placement-manifestwork.leaderElectionNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.namespace }}
{{- end }}

{{/* The manager's image reference: repository with the digest, or with the tag (the appVersion by default). */}}
{{- define "placement-manifestwork.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* Fails the render on combinations of values that cannot work. */}}
{{- define "placement-manifestwork.validate" -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicas > 1 needs leaderElection.enabled=true: replicas without a leader would reconcile the same PlacementManifestWorks at once" }}
{{- end }}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.service.enabled) }}
{{- fail "metrics.serviceMonitor.enabled needs metrics.service.enabled=true: the ServiceMonitor selects the metrics Service" }}
{{- end }}
{{- if and .Values.fleetAPIServer.enabled .Values.fleetAPIServer.kubeconfigSecret }}
{{- fail "fleetAPIServer.enabled and fleetAPIServer.kubeconfigSecret exclude each other: install a fleet API server, or name the kubeconfig of an existing one" }}
{{- end }}
{{- if eq (int .Values.metrics.port) (int .Values.healthProbe.port) }}
{{- fail "metrics.port and healthProbe.port must differ" }}
{{- end }}
{{- end }}
