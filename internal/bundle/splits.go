package bundle

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// maxStrategies is the CRD's limit on distributionStrategy entries.
const maxStrategies = 100

// workloadKinds are the kinds SplitAllWorkloads splits.
var workloadKinds = []schema.GroupKind{
	{Group: "apps", Kind: "Deployment"},
	{Group: "apps", Kind: "StatefulSet"},
	{Group: "apps", Kind: "ReplicaSet"},
	{Group: "batch", Kind: "Job"},
}

// shortKinds are kubectl's short names of the kinds worth splitting.
var shortKinds = map[string]string{"deploy": "deployment", "sts": "statefulset", "rs": "replicaset"}

// splitHint is one parsed Options.Splits entry.
type splitHint struct {
	text                         string
	kind, group, namespace, name string
	hasGroup, hasNamespace       bool
}

func parseSplitHint(s string) (splitHint, error) {
	h := splitHint{text: s}
	parts := strings.Split(strings.TrimSpace(s), "/")
	switch len(parts) {
	case 2:
		h.name = parts[1]
	case 3:
		h.namespace, h.name, h.hasNamespace = parts[1], parts[2], true
	default:
		return h, fmt.Errorf("split %q: name one manifest as Kind/name, Kind.group/name or Kind/namespace/name (Deployment/web)", s)
	}
	h.kind, h.group, h.hasGroup = strings.Cut(parts[0], ".")
	if h.kind == "" || h.name == "" || h.hasNamespace && h.namespace == "" || h.hasGroup && h.group == "" {
		return h, fmt.Errorf("split %q: name one manifest as Kind/name, Kind.group/name or Kind/namespace/name (Deployment/web)", s)
	}
	return h, nil
}

// matches reports whether the hint names m. Kinds compare as kubectl takes them: any case, plural or short.
func (h splitHint) matches(m *unstructured.Unstructured) bool {
	gvk := m.GroupVersionKind()
	if m.GetName() != h.name || h.hasNamespace && m.GetNamespace() != h.namespace || h.hasGroup && gvk.Group != h.group {
		return false
	}
	want, kind := strings.ToLower(h.kind), strings.ToLower(gvk.Kind)
	if short, ok := shortKinds[want]; ok {
		want = short
	}
	return want == kind || want == plural(kind)
}

// plural is the resource name of a lower-case kind, as Kubernetes' default naming makes it.
func plural(kind string) string {
	switch {
	case strings.HasSuffix(kind, "s"), strings.HasSuffix(kind, "x"), strings.HasSuffix(kind, "ch"), strings.HasSuffix(kind, "sh"):
		return kind + "es"
	case strings.HasSuffix(kind, "y") && len(kind) > 1 && !strings.ContainsAny(kind[len(kind)-2:len(kind)-1], "aeiou"):
		return kind[:len(kind)-1] + "ies"
	}
	return kind + "s"
}

// splitStrategies turns the hints, and SplitAllWorkloads, into distributionStrategy entries, in the order of
// the manifests.
func splitStrategies(ms []*unstructured.Unstructured, hints []string, all bool) ([]workv1alpha1.DistributionStrategy, []Warning, error) {
	split := make([]bool, len(ms))
	for _, s := range hints {
		h, err := parseSplitHint(s)
		if err != nil {
			return nil, nil, err
		}
		var found []int
		for i, m := range ms {
			if h.matches(m) {
				found = append(found, i)
			}
		}
		switch len(found) {
		case 0:
			return nil, nil, fmt.Errorf("split %q names no manifest of the input; give the kind and name of one (%s)", s, nearby(ms, h))
		case 1:
		default:
			ids := make([]string, len(found))
			for i, f := range found {
				ids[i] = objectID(ms[f])
			}
			return nil, nil, fmt.Errorf("split %q names %d manifests (%s); add the namespace or group, as Kind/namespace/name or Kind.group/name", s, len(found), strings.Join(ids, ", "))
		}
		m := ms[found[0]]
		if !isWorkload(m) && kubernetesGroup(m.GroupVersionKind().Group) && m.GetKind() != "CronJob" {
			return nil, nil, fmt.Errorf("split %q: %s is not a workload and has no replicas to divide; split a Deployment, StatefulSet, ReplicaSet or Job, or drop the split", s, objectID(m))
		}
		if err := checkSplitField(m); err != nil {
			return nil, nil, fmt.Errorf("split %q: %s: %v; set it to the total to divide, or drop the split", s, objectID(m), err)
		}
		split[found[0]] = true
	}
	var warnings []Warning
	if all {
		for i, m := range ms {
			// Helm hooks kept as manifests run once per cluster; they are not workloads to divide.
			if split[i] || !isWorkload(m) || hookEvents(m) != nil {
				continue
			}
			if err := checkSplitField(m); err != nil {
				// A Job without parallelism runs one pod: nothing to divide.
				if m.GetKind() != "Job" {
					warnings = append(warnings, Warning{Object: objectID(m), Message: fmt.Sprintf("not split, replicated: %v "+
						"(an autoscaler owns it?); set it to split this workload", err)})
				}
				continue
			}
			split[i] = true
		}
	}
	var out []workv1alpha1.DistributionStrategy
	for i, m := range ms {
		if !split[i] {
			continue
		}
		gvk := m.GroupVersionKind()
		out = append(out, workv1alpha1.DistributionStrategy{
			Name: m.GetName(), Namespace: m.GetNamespace(), Group: gvk.Group, Kind: gvk.Kind,
			Type:  workv1alpha1.DistributionSplit,
			Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance},
		})
	}
	if len(out) > maxStrategies {
		return nil, warnings, fmt.Errorf("%d manifests to split, more than the %d distributionStrategy entries a PlacementManifestWork holds; split fewer, or wrap them in several PlacementManifestWorks", len(out), maxStrategies)
	}
	return out, warnings, nil
}

func isWorkload(m *unstructured.Unstructured) bool {
	gk := m.GroupVersionKind().GroupKind()
	for _, w := range workloadKinds {
		if gk == w {
			return true
		}
	}
	return false
}

// checkSplitField checks that a manifest of a kind the manager knows, or of one of Kubernetes' own API groups,
// has the replica field it would divide: the kind's own (a Job's .spec.parallelism), else .spec.replicas, which
// a Service or a ConfigMap does not have. Other kinds are not checked: a ResourceInterpreter on the hub may name
// other fields.
func checkSplitField(m *unstructured.Unstructured) error {
	gk := m.GroupVersionKind().GroupKind()
	var paths []string
	if b := health.Builtin(gk); b != nil {
		paths = b.ReplicaPaths()
	} else if !kubernetesGroup(gk.Group) {
		return nil
	}
	if len(paths) == 0 {
		paths = []string{workv1alpha1.DefaultSplitFieldPath}
	}
	for _, path := range paths {
		if _, err := template.IntField(m, path); err != nil {
			return err
		}
	}
	return nil
}

// nearby lists, for an error, the manifests of the hint's kind, or else a few of the input.
func nearby(ms []*unstructured.Unstructured, h splitHint) string {
	var same, workloads []string
	for _, m := range ms {
		probe := h
		probe.name, probe.hasNamespace, probe.hasGroup = m.GetName(), false, false
		if probe.matches(m) {
			same = append(same, objectID(m))
		}
		if isWorkload(m) {
			workloads = append(workloads, objectID(m))
		}
	}
	list, what := same, "manifests of that kind"
	if len(list) == 0 {
		list, what = workloads, "workloads"
	}
	if len(list) == 0 {
		return "the input has no workloads"
	}
	if len(list) > 5 {
		list = append(list[:5], "...")
	}
	return what + ": " + strings.Join(list, ", ")
}

// kubernetesGroup reports whether group is one of Kubernetes' own API groups (the core group, the unsuffixed
// ones and *.k8s.io), whose kinds no ResourceInterpreter gives a replica field.
func kubernetesGroup(group string) bool {
	switch group {
	case "", "apps", "batch", "policy", "autoscaling":
		return true
	}
	return strings.HasSuffix(group, ".k8s.io")
}
