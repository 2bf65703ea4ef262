{{/*
Names, labels and image references shared by every template.
*/}}

{{- define "plimsoll.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's full name; a release called "plimsoll" is not doubled. */}}
{{- define "plimsoll.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "plimsoll.selectorLabels" -}}
app.kubernetes.io/name: {{ include "plimsoll.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "plimsoll.labels" -}}
{{ include "plimsoll.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: plimsoll
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
metadata.name, labels and annotations for one object. Pass a dict:
  root: $, name: instead of the full name (optional),
  suffix: appended to the name (optional), namespace (optional),
  labels: extra labels (optional),
  annotations: the object's own annotations (optional).
Every object gets the Argo CD sync wave when argocd.syncWave is set.
*/}}
{{- define "plimsoll.metadata" -}}
{{- $root := .root -}}
{{- $name := default (include "plimsoll.fullname" $root) .name -}}
{{- if .suffix -}}
{{- $name = printf "%s-%s" $name .suffix | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- $annotations := dict -}}
{{- with .annotations -}}
{{- $annotations = merge $annotations . -}}
{{- end -}}
{{- with $root.Values.argocd.syncWave -}}
{{- $_ := set $annotations "argocd.argoproj.io/sync-wave" (toString .) -}}
{{- end -}}
name: {{ $name }}
{{- with .namespace }}
namespace: {{ . }}
{{- end }}
labels:
  {{- include "plimsoll.labels" $root | nindent 2 }}
  {{- with .labels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with $annotations }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "plimsoll.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "plimsoll.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
An image reference from (list $ .Values.x.image): registry prefix, repository,
then the digest if given, else the tag (default: the chart's appVersion).
*/}}
{{- define "plimsoll.image" -}}
{{- $root := index . 0 -}}
{{- $image := index . 1 -}}
{{- $repository := $image.repository -}}
{{- with $root.Values.imageRegistry -}}
{{- $repository = printf "%s/%s" (trimSuffix "/" .) $repository -}}
{{- end -}}
{{- if $image.digest -}}
{{- printf "%s@%s" $repository $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repository (default $root.Chart.AppVersion $image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The watched namespaces, checked: namespaced mode without any is an error. */}}
{{- define "plimsoll.watchedNamespaces" -}}
{{- if eq .Values.watch.scope "namespaced" -}}
{{- if not .Values.watch.namespaces -}}
{{- fail "watch.scope=namespaced needs at least one namespace in watch.namespaces" -}}
{{- end -}}
{{- join "," .Values.watch.namespaces -}}
{{- end -}}
{{- end -}}

{{/*
A duration such as 90s, 30m, 2d or 1w in seconds, for PromQL comparisons with time().
*/}}
{{- define "plimsoll.seconds" -}}
{{- $text := toString . -}}
{{- $number := int (trimSuffix (substr (sub (len $text) 1 | int) (len $text) $text) $text) -}}
{{- $unit := substr (sub (len $text) 1 | int) (len $text) $text -}}
{{- $per := dict "s" 1 "m" 60 "h" 3600 "d" 86400 "w" 604800 -}}
{{- mul $number (get $per $unit) -}}
{{- end -}}
