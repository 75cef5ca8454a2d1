package ocmsim

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Rollout says where a manifest's pods stand on a simulated cluster.
type Rollout struct {
	// Ready: every pod is running and ready (a Job has completed).
	Ready bool
	// DeadlineExceeded: the pods never became ready and a Deployment has given up, as one does after its
	// progressDeadlineSeconds (the sandbox compresses that to the ready delay).
	DeadlineExceeded bool
	// Generation is the object's metadata.generation on the cluster; its controller has observed it.
	Generation int64
}

// StatusFunc is the status the controller of a custom kind (an operator) would write for obj on a cluster,
// given where its rollout stands: Ready once the ready delay has passed, DeadlineExceeded for a never-ready
// cluster past it. Zero counts should be left out, as the API server does for the built-in kinds.
type StatusFunc func(obj *unstructured.Unstructured, r Rollout) map[string]any

// customKinds are the kinds declared with SimulateKind.
var customKinds sync.Map // schema.GroupKind -> StatusFunc

// SimulateKind declares a custom kind to every simulated cluster: LiveObject gives its objects what the
// StatusFunc returns as their status, and IsWorkload counts it, so the simulated agent reports its objects again once the ready
// delay has passed, as it does for Deployments. Declaring a kind again replaces its StatusFunc. Without a
// declaration a custom kind has no status (a feedback path finds nothing), as a CRD without its operator.
func SimulateKind(gk schema.GroupKind, status StatusFunc) {
	customKinds.Store(gk, status)
}

func customStatus(gk schema.GroupKind) (StatusFunc, bool) {
	f, ok := customKinds.Load(gk)
	if !ok {
		return nil, false
	}
	return f.(StatusFunc), true
}

// IsWorkload reports whether objects of the kind run pods that become ready: the built-in workloads and the
// kinds declared with SimulateKind.
func IsWorkload(gvk schema.GroupVersionKind) bool {
	switch gvk.GroupKind() {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "StatefulSet"},
		schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, schema.GroupKind{Group: "apps", Kind: "DaemonSet"},
		schema.GroupKind{Group: "batch", Kind: "Job"}, schema.GroupKind{Kind: "Pod"}:
		return true
	}
	_, custom := customStatus(gvk.GroupKind())
	return custom
}

// LiveObject is obj as it would stand on a cluster: its metadata.generation set and the status its
// controllers would have written, with field names and omissions as the API server returns them (a zero
// count is left out, which is why a feedback path can find nothing). Custom kinds get the status of their
// SimulateKind declaration; kinds without a status worth simulating are returned as they are.
func LiveObject(obj *unstructured.Unstructured, r Rollout) *unstructured.Unstructured {
	live := obj.DeepCopy()
	if r.Generation > 0 {
		live.SetGeneration(r.Generation)
	}
	var status map[string]any
	gk := obj.GroupVersionKind().GroupKind()
	switch gk {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		status = deploymentStatus(DesiredReplicas(obj), r)
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		d := DesiredReplicas(obj)
		status = counts(map[string]int64{"replicas": d, "currentReplicas": d, "updatedReplicas": d,
			"readyReplicas": ready(d, r), "availableReplicas": ready(d, r)})
	case schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		d := DesiredReplicas(obj)
		status = counts(map[string]int64{"replicas": d, "fullyLabeledReplicas": d,
			"readyReplicas": ready(d, r), "availableReplicas": ready(d, r)})
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		// A simulated cluster has one node.
		status = counts(map[string]int64{"desiredNumberScheduled": 1, "currentNumberScheduled": 1,
			"updatedNumberScheduled": 1, "numberReady": ready(1, r), "numberAvailable": ready(1, r),
			"numberUnavailable": 1 - ready(1, r), "numberMisscheduled": 0})
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		if r.Ready {
			status = counts(map[string]int64{"succeeded": JobCompletions(obj)})
			status["conditions"] = []any{condition("Complete", "True", "CompletionsReached")}
		} else {
			status = counts(map[string]int64{"active": JobParallelism(obj)})
		}
	case schema.GroupKind{Kind: "Pod"}:
		phase, readyStatus := "Pending", "False"
		if r.Ready {
			phase, readyStatus = "Running", "True"
		}
		status = map[string]any{"phase": phase, "conditions": []any{condition("Ready", readyStatus, "")}}
	case schema.GroupKind{Kind: "PersistentVolumeClaim"}:
		status = map[string]any{"phase": "Bound"}
	case schema.GroupKind{Kind: "Service"}:
		status = map[string]any{"loadBalancer": map[string]any{}}
		if t, _, _ := unstructured.NestedString(obj.Object, "spec", "type"); t == "LoadBalancer" {
			// A documentation address (RFC 5737): the sandbox's load balancers exist nowhere.
			status["loadBalancer"] = map[string]any{"ingress": []any{map[string]any{"ip": "192.0.2.10"}}}
		}
	default:
		f, ok := customStatus(gk)
		if !ok {
			return live
		}
		status = f(live, r)
		if status == nil {
			return live
		}
	}
	switch gk.Kind {
	case "Deployment", "StatefulSet", "ReplicaSet", "DaemonSet":
		status["observedGeneration"] = live.GetGeneration()
	}
	live.Object["status"] = status
	return live
}

func deploymentStatus(desired int64, r Rollout) map[string]any {
	rd := ready(desired, r)
	status := counts(map[string]int64{"replicas": desired, "updatedReplicas": desired, "readyReplicas": rd,
		"availableReplicas": rd, "unavailableReplicas": desired - rd})
	available := condition("Available", "True", "MinimumReplicasAvailable")
	if rd < desired {
		available = condition("Available", "False", "MinimumReplicasUnavailable")
	}
	progressing := condition("Progressing", "True", "ReplicaSetUpdated")
	switch {
	case r.Ready:
		progressing = condition("Progressing", "True", "NewReplicaSetAvailable")
	case r.DeadlineExceeded:
		progressing = condition("Progressing", "False", "ProgressDeadlineExceeded")
	}
	status["conditions"] = []any{available, progressing}
	return status
}

func ready(n int64, r Rollout) int64 {
	if r.Ready {
		return n
	}
	return 0
}

// counts is a status with the non-zero counts, as the API server omits zero ones.
func counts(c map[string]int64) map[string]any {
	out := map[string]any{}
	for k, v := range c {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func condition(t, status, reason string) map[string]any {
	c := map[string]any{"type": t, "status": status}
	if reason != "" {
		c["reason"] = reason
	}
	return c
}

// DesiredReplicas is spec.replicas, defaulted to 1 as the API server does.
func DesiredReplicas(obj *unstructured.Unstructured) int64 {
	return intField(obj, 1, "replicas")
}

// JobParallelism is how many pods of a Job run at once (spec.parallelism, default 1).
func JobParallelism(obj *unstructured.Unstructured) int64 {
	return intField(obj, 1, "parallelism")
}

// JobCompletions is how many pods of a Job succeed: spec.completions, or with none set, as many as run in
// parallel.
func JobCompletions(obj *unstructured.Unstructured) int64 {
	return intField(obj, JobParallelism(obj), "completions")
}

// intField reads an integer under spec; def when it is missing or not an integer.
func intField(obj *unstructured.Unstructured, def int64, field string) int64 {
	v, ok, err := unstructured.NestedFieldNoCopy(obj.Object, "spec", field)
	if err != nil || !ok {
		return def
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		if n == float64(int64(n)) {
			return int64(n)
		}
	}
	return def
}
