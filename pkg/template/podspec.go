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
