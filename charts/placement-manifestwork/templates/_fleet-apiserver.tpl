{{/*
The dedicated fleet API server (fleetAPIServer.enabled, docs/install.md#a-dedicated-fleet-api-server): names,
the PKI and the kubeconfigs. The PKI is generated once per render and memoized in .Release (every template of a
render shares that map), so that the Secrets, the pods' checksums and the kubeconfigs agree.
*/}}

{{/* "install" (the chart installs a fleet API server), "external" (kubeconfigSecret) or "" (off). */}}
{{- define "placement-manifestwork.fleet.mode" -}}
{{- if .Values.fleetAPIServer.enabled }}install{{ else if .Values.fleetAPIServer.kubeconfigSecret }}external{{ end }}
{{- end }}

{{/* The prefix of the fleet API server's objects, short enough for a StatefulSet's pod and revision labels. */}}
{{- define "placement-manifestwork.fleet.base" -}}
{{- printf "%s-fleet" (include "placement-manifestwork.fullname" . | trunc 40 | trimSuffix "-") }}
{{- end }}
{{- define "placement-manifestwork.fleet.apiserver" -}}{{ include "placement-manifestwork.fleet.base" . }}-apiserver{{- end }}
{{- define "placement-manifestwork.fleet.etcd" -}}{{ include "placement-manifestwork.fleet.base" . }}-etcd{{- end }}
{{- define "placement-manifestwork.fleet.kubeconfig" -}}{{ include "placement-manifestwork.fleet.base" . }}-kubeconfig{{- end }}
{{- define "placement-manifestwork.fleet.adminKubeconfig" -}}{{ include "placement-manifestwork.fleet.base" . }}-admin-kubeconfig{{- end }}

{{/* The Secret holding the PKI and tokens: certificates.existingSecret, or the generated one. */}}
{{- define "placement-manifestwork.fleet.pkiSecret" -}}
{{- default (printf "%s-pki" (include "placement-manifestwork.fleet.base" .)) .Values.fleetAPIServer.certificates.existingSecret }}
{{- end }}

{{/* The in-cluster DNS names of a Service: name, name.ns, name.ns.svc, name.ns.svc.<domain>. */}}
{{- define "placement-manifestwork.fleet.serviceNames" -}}
{{- $ns := .root.Release.Namespace }}
{{- $d := .root.Values.fleetAPIServer.clusterDomain }}
{{- list .name (printf "%s.%s" .name $ns) (printf "%s.%s.svc" .name $ns) (printf "%s.%s.svc.%s" .name $ns $d) | toJson }}
{{- end }}

{{/* The fleet API server's in-cluster URL, as the manager's and the admin's kubeconfigs name it. */}}
{{- define "placement-manifestwork.fleet.url" -}}
{{- printf "https://%s.%s.svc:%d" (include "placement-manifestwork.fleet.apiserver" .) .Release.Namespace (int .Values.fleetAPIServer.apiServer.service.port) }}
{{- end }}

{{/* etcd's only member's DNS name (the StatefulSet's pod behind the headless Service). */}}
{{- define "placement-manifestwork.fleet.etcdMember" -}}
{{- $etcd := include "placement-manifestwork.fleet.etcd" . }}
{{- printf "%s-0.%s.%s.svc" $etcd $etcd .Release.Namespace }}
{{- end }}

{{/*
The generated PKI as JSON: every file of the PKI Secret (PEM text, not base64), plus "leafSpec" and "notAfter",
the Secret's annotations that decide when the leaf certificates are renewed. From the existing Secret (lookup)
the CAs, the service-account key and the tokens are kept as they are; the leaf certificates are kept unless
their names changed (leafSpec) or they expire within renewBeforeDays. Under `helm template`, which has no
cluster, lookup finds nothing and everything is new.
*/}}
{{- define "placement-manifestwork.fleet.pki" -}}
{{- if not (hasKey .Release "placementManifestWorkFleetPKI") }}
{{- $v := .Values.fleetAPIServer }}
{{- $c := $v.certificates }}
{{- $old := lookup "v1" "Secret" .Release.Namespace (include "placement-manifestwork.fleet.pkiSecret" .) }}
{{- $data := dict }}
{{- $annotations := dict }}
{{- if $old }}
{{- $data = $old.data | default dict }}
{{- $annotations = $old.metadata.annotations | default dict }}
{{- end }}
{{- $pki := dict }}
{{- /* The CAs: kept when the Secret has them. */}}
{{- $reused := true }}
{{- $ca := dict }}
{{- if and (index $data "ca.crt") (index $data "ca.key") }}
{{- $ca = buildCustomCert (index $data "ca.crt") (index $data "ca.key") }}
{{- else }}
{{- $ca = genCA "fleet-apiserver-ca" (int $c.caValidityDays) }}
{{- $reused = false }}
{{- end }}
{{- $etcdCA := dict }}
{{- if and (index $data "etcd-ca.crt") (index $data "etcd-ca.key") }}
{{- $etcdCA = buildCustomCert (index $data "etcd-ca.crt") (index $data "etcd-ca.key") }}
{{- else }}
{{- $etcdCA = genCA "fleet-etcd-ca" (int $c.caValidityDays) }}
{{- $reused = false }}
{{- end }}
{{- $_ := set $pki "ca.crt" $ca.Cert }}
{{- $_ = set $pki "ca.key" $ca.Key }}
{{- $_ = set $pki "etcd-ca.crt" $etcdCA.Cert }}
{{- $_ = set $pki "etcd-ca.key" $etcdCA.Key }}
{{- /* The service-account signing key and the tokens: kept when present. */}}
{{- range $key := list "sa.key" "manager-token" "admin-token" }}
{{- if index $data $key }}
{{- $_ = set $pki $key (index $data $key | b64dec) }}
{{- else if eq $key "sa.key" }}
{{- $_ = set $pki $key (genPrivateKey "rsa") }}
{{- else }}
{{- $_ = set $pki $key (randAlphaNum 64) }}
{{- end }}
{{- end }}
{{- /* The leaf certificates' names. */}}
{{- $api := include "placement-manifestwork.fleet.apiserver" . }}
{{- $etcd := include "placement-manifestwork.fleet.etcd" . }}
{{- $apiDNS := include "placement-manifestwork.fleet.serviceNames" (dict "root" . "name" $api) | fromJsonArray }}
{{- $apiDNS = append $apiDNS "localhost" }}
{{- $apiIPs := list "127.0.0.1" }}
{{- range $c.extraSANs }}
{{- if regexMatch "^[0-9.]+$|:" . }}
{{- $apiIPs = append $apiIPs . }}
{{- else }}
{{- $apiDNS = append $apiDNS . }}
{{- end }}
{{- end }}
{{- $etcdDNS := include "placement-manifestwork.fleet.serviceNames" (dict "root" . "name" $etcd) | fromJsonArray }}
{{- $etcdDNS = concat $etcdDNS (list (printf "%s-0" $etcd) (include "placement-manifestwork.fleet.etcdMember" .) (printf "%s.%s" (include "placement-manifestwork.fleet.etcdMember" .) .Values.fleetAPIServer.clusterDomain) "localhost") }}
{{- $spec := list $apiDNS $apiIPs $etcdDNS (int $c.validityDays) | toJson | sha256sum | trunc 16 }}
{{- $now := now | unixEpoch | int64 }}
{{- $notAfter := index $annotations "placement-manifestwork.open-cluster-management.io/not-after" | default "0" | int64 }}
{{- $leaves := list "apiserver" "apiserver-etcd-client" "etcd-server" "etcd-peer" }}
{{- $keep := and $reused (eq (index $annotations "placement-manifestwork.open-cluster-management.io/leaf-spec" | default "") $spec) (gt $notAfter (add $now (mul (int $c.renewBeforeDays) 86400))) }}
{{- range $leaves }}
{{- if not (and (index $data (printf "%s.crt" .)) (index $data (printf "%s.key" .))) }}
{{- $keep = false }}
{{- end }}
{{- end }}
{{- if $keep }}
{{- range $leaves }}
{{- $_ = set $pki (printf "%s.crt" .) (index $data (printf "%s.crt" .) | b64dec) }}
{{- $_ = set $pki (printf "%s.key" .) (index $data (printf "%s.key" .) | b64dec) }}
{{- end }}
{{- else }}
{{- $days := int $c.validityDays }}
{{- $notAfter = add $now (mul $days 86400) }}
{{- $cert := genSignedCert "kube-apiserver" $apiIPs $apiDNS $days $ca }}
{{- $_ = set $pki "apiserver.crt" $cert.Cert }}
{{- $_ = set $pki "apiserver.key" $cert.Key }}
{{- $cert = genSignedCert "kube-apiserver-etcd-client" nil nil $days $etcdCA }}
{{- $_ = set $pki "apiserver-etcd-client.crt" $cert.Cert }}
{{- $_ = set $pki "apiserver-etcd-client.key" $cert.Key }}
{{- $cert = genSignedCert (printf "%s-0" $etcd) (list "127.0.0.1") $etcdDNS $days $etcdCA }}
{{- $_ = set $pki "etcd-server.crt" $cert.Cert }}
{{- $_ = set $pki "etcd-server.key" $cert.Key }}
{{- $cert = genSignedCert (printf "%s-0" $etcd) (list "127.0.0.1") $etcdDNS $days $etcdCA }}
{{- $_ = set $pki "etcd-peer.crt" $cert.Cert }}
{{- $_ = set $pki "etcd-peer.key" $cert.Key }}
{{- end }}
{{- /* The static tokens file (kube-apiserver --token-auth-file): token,user,uid,"groups". */}}
{{- $tokens := list }}
{{- $tokens = append $tokens (printf "%s,placement-manifestwork-manager,placement-manifestwork-manager,\"%s\"" (index $pki "manager-token") (join "," $v.managerGroups)) }}
{{- $tokens = append $tokens (printf "%s,fleet-admin,fleet-admin,\"%s\"" (index $pki "admin-token") (join "," $v.adminGroups)) }}
{{- $_ = set $pki "tokens.csv" (printf "%s\n" (join "\n" $tokens)) }}
{{- $_ = set $pki "leafSpec" $spec }}
{{- $_ = set $pki "notAfter" (toString $notAfter) }}
{{- $_ = set .Release "placementManifestWorkFleetPKI" $pki }}
{{- end }}
{{- index .Release "placementManifestWorkFleetPKI" | toJson }}
{{- end }}

{{/*
A checksum of what the pods mount from the PKI Secret, as a pod annotation, so that renewed certificates or
tokens restart them; empty with certificates.existingSecret (restart them yourself after a rotation).
*/}}
{{- define "placement-manifestwork.fleet.pkiChecksum" -}}
{{- if not .Values.fleetAPIServer.certificates.existingSecret }}
{{- $pki := include "placement-manifestwork.fleet.pki" . | fromJson }}
{{- omit $pki "leafSpec" "notAfter" | toJson | sha256sum }}
{{- end }}
{{- end }}

{{/* The fleet API server pods' scheduling. */}}
{{- define "placement-manifestwork.fleet.scheduling" -}}
{{- with .Values.fleetAPIServer.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.fleetAPIServer.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.fleetAPIServer.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The pod security context of the fleet API server's pods: the chart's, with fsGroup for the mounted files. */}}
{{- define "placement-manifestwork.fleet.podSecurityContext" -}}
{{- $ctx := deepCopy .Values.podSecurityContext }}
{{- if not (hasKey $ctx "fsGroup") }}
{{- $_ := set $ctx "fsGroup" (.Values.podSecurityContext.runAsGroup | default 65532) }}
{{- end }}
{{- toYaml $ctx }}
{{- end }}

{{/* Where the manager's container finds the fleet kubeconfig (and, when the chart installs the server, its CA and token). */}}
{{- define "placement-manifestwork.fleet.mountPath" -}}/etc/placement-manifestwork/fleet{{- end }}
