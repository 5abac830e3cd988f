{{/* The release's full name, at most 63 characters (DNS label). */}}
{{- define "mysqlbench-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "mysqlbench-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: manager
{{- end -}}

{{- define "mysqlbench-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "mysqlbench-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "mysqlbench-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "mysqlbench-operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "mysqlbench-operator.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
Name of the cluster-scoped objects (ClusterRole, ClusterRoleBinding): the namespace is part of it,
so the same release name installed in two namespaces (e.g. one operator per team with
watchNamespaces) does not collide.
*/}}
{{- define "mysqlbench-operator.clusterName" -}}
{{- printf "%s-%s" .Release.Namespace (include "mysqlbench-operator.fullname" .) -}}
{{- end -}}

{{/*
The rules of a role in files/ (copies of config/rbac; see rbac.yaml), as YAML.
Usage: include "mysqlbench-operator.rules" (list . "manager-role.yaml")
*/}}
{{- define "mysqlbench-operator.rules" -}}
{{- $ctx := index . 0 -}}
{{- $file := printf "files/%s" (index . 1) -}}
{{- $role := $ctx.Files.Get $file | fromYaml -}}
{{- required (printf "%s has no rules: run make helm-crds" $file) $role.rules | toYaml -}}
{{- end -}}
