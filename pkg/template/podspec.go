package template

import "k8s.io/apimachinery/pkg/runtime/schema"

// PodSpecPath is where a manifest of kind gk keeps its pod spec: spec for a core Pod,
// spec.jobTemplate.spec.template.spec for a CronJob, spec.template.spec for the other kinds (Deployments,
// StatefulSets, DaemonSets, ReplicaSets, Jobs, and custom workloads shaped like them).
func PodSpecPath(gk schema.GroupKind) []string {
	switch {
	case gk.Group == "" && gk.Kind == "Pod":
		return []string{"spec"}
	case gk.Kind == "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template", "spec"}
	}
	return []string{"spec", "template", "spec"}
}

// PodSpecPaths are the places a manifest of kind gk may keep a pod spec, its kind's usual one (PodSpecPath)
// first: a core Pod's spec; for any other kind, spec.template.spec and spec.jobTemplate.spec.template.spec,
// where the built-in workloads keep theirs, so that a custom kind shaped like one of them (an Argo Rollout,
// an OpenKruise CloneSet, a CronJob of another group or name) is read without being named.
func PodSpecPaths(gk schema.GroupKind) [][]string {
	if gk.Group == "" && gk.Kind == "Pod" {
		return [][]string{{"spec"}}
	}
	template := []string{"spec", "template", "spec"}
	jobTemplate := []string{"spec", "jobTemplate", "spec", "template", "spec"}
	if gk.Kind == "CronJob" {
		return [][]string{jobTemplate, template}
	}
	return [][]string{template, jobTemplate}
}
