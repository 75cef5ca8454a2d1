package override

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// A split workload usually travels with a HorizontalPodAutoscaler and a PodDisruptionBudget. Copied
// unchanged, a PDB with minAvailable: 4 blocks node drains on a cluster that holds 2 of the replicas, and an
// HPA with minReplicas: 4 on every cluster undoes the split. Companions finds them; Apportion divides their
// counts as the workload's replicas are divided. Overrides apply after, so a user's patch still wins.

// Kinds of companions.
const (
	KindHorizontalPodAutoscaler = "HorizontalPodAutoscaler"
	KindPodDisruptionBudget     = "PodDisruptionBudget"
)

// splitWorkloadKinds are the kinds whose split .spec.replicas companions follow.
var splitWorkloadKinds = []string{"Deployment", "StatefulSet", "ReplicaSet"}

// Companion is a manifest of the template that follows a split workload's division.
type Companion struct {
	// Index is the companion's position in the template, Workload the split workload's.
	Index    int
	Workload int
	// Kind is KindHorizontalPodAutoscaler or KindPodDisruptionBudget.
	Kind string
}

// CompanionProblem is an HPA or a PDB that looks like a companion of a split workload but is not apportioned.
type CompanionProblem struct {
	// Index is the manifest's position in the template.
	Index int
	// Workloads are the indexes of the split workloads whose pods it covers.
	Workloads []int
	Message   string
}

// Companions finds, among the template's manifests, the companions of the split workloads: an apps/v1
// Deployment, StatefulSet or ReplicaSet whose .spec.replicas is split (splitFields holds, by manifest index,
// the split fields as dotted paths). A HorizontalPodAutoscaler is a companion when its scaleTargetRef names the
// workload (kind, name, and group when its apiVersion is set) in its namespace. A PodDisruptionBudget is a
// companion when, in the workload's namespace, its selector matches the pod template labels of that workload
// and of no other workload of the template (a PDB over the pods of several workloads is reported, not
// apportioned). Both lists are in template order.
func Companions(manifests []template.Manifest, splitFields map[int][]string) ([]Companion, []CompanionProblem) {
	var out []Companion
	var problems []CompanionProblem
	for _, c := range manifests {
		switch {
		case c.GVK.Group == "autoscaling" && c.GVK.Kind == KindHorizontalPodAutoscaler:
			if w, ok := hpaTarget(c, manifests, splitFields); ok {
				out = append(out, Companion{Index: c.Index, Workload: w, Kind: KindHorizontalPodAutoscaler})
			}
		case c.GVK.Group == "policy" && c.GVK.Kind == KindPodDisruptionBudget:
			w, covered, problem := pdbTarget(c, manifests, splitFields)
			switch {
			case problem != "":
				problems = append(problems, CompanionProblem{Index: c.Index, Workloads: covered, Message: c.ID() + ": " + problem})
			case w >= 0:
				out = append(out, Companion{Index: c.Index, Workload: w, Kind: KindPodDisruptionBudget})
			}
		}
	}
	return out, problems
}

// splitWorkload reports whether m is a workload whose companions follow its split.
func splitWorkload(m template.Manifest, splitFields map[int][]string) bool {
	return m.GVK.Group == "apps" && slices.Contains(splitWorkloadKinds, m.GVK.Kind) &&
		slices.Contains(splitFields[m.Index], workv1alpha1.DefaultSplitFieldPath)
}

func hpaTarget(hpa template.Manifest, manifests []template.Manifest, splitFields map[int][]string) (int, bool) {
	ref, _, _ := unstructured.NestedMap(hpa.Object.Object, "spec", "scaleTargetRef")
	kind, _ := ref["kind"].(string)
	name, _ := ref["name"].(string)
	apiVersion, _ := ref["apiVersion"].(string)
	for _, w := range manifests {
		if w.Object.GetNamespace() != hpa.Object.GetNamespace() || w.GVK.Kind != kind || w.Object.GetName() != name {
			continue
		}
		if apiVersion != "" {
			if gv, err := schema.ParseGroupVersion(apiVersion); err != nil || gv.Group != w.GVK.Group {
				continue
			}
		}
		if splitWorkload(w, splitFields) {
			return w.Index, true
		}
	}
	return 0, false
}

// pdbTarget is the split workload whose pods the PDB alone covers (-1 when none), or why it is not apportioned
// and the split workloads whose pods it covers.
func pdbTarget(pdb template.Manifest, manifests []template.Manifest, splitFields map[int][]string) (int, []int, string) {
	sel, err := pdbSelector(pdb)
	if err != nil {
		return -1, nil, fmt.Sprintf("spec.selector: %v", err)
	}
	var matched []template.Manifest
	var split []int
	for _, w := range manifests {
		if w.Object.GetNamespace() != pdb.Object.GetNamespace() {
			continue
		}
		podLabels, found, err := unstructured.NestedStringMap(w.Object.Object, "spec", "template", "metadata", "labels")
		if err != nil || !found {
			continue
		}
		if sel.Matches(labels.Set(podLabels)) {
			matched = append(matched, w)
			if splitWorkload(w, splitFields) {
				split = append(split, w.Index)
			}
		}
	}
	switch {
	case len(split) == 0:
		return -1, nil, ""
	case len(matched) > 1:
		ids := make([]string, len(matched))
		for i, m := range matched {
			ids[i] = m.ID()
		}
		return -1, split, fmt.Sprintf("its selector matches the pods of %d workloads (%v), so it is copied unchanged: give each split workload its own PodDisruptionBudget", len(matched), ids)
	}
	return matched[0].Index, nil, ""
}

// pdbSelector is a PDB's selector: a missing one selects no pods; an empty one selects every pod in policy/v1
// and none in policy/v1beta1.
func pdbSelector(pdb template.Manifest) (labels.Selector, error) {
	raw, found, err := unstructured.NestedMap(pdb.Object.Object, "spec", "selector")
	if err != nil {
		return nil, err
	}
	if !found || raw == nil {
		return labels.Nothing(), nil
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return nil, err
	}
	if len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0 && pdb.GVK.Version != "v1" {
		return labels.Nothing(), nil
	}
	return metav1.LabelSelectorAsSelector(&ls)
}

// Apportion returns a copy of companion (an HPA or a PDB) with its counts divided as its workload's replicas
// are: the cluster holds share of total.
//
//	HPA minReplicas     ceil(min × share / total), at least 1 (as the HPA requires), at most share when share > 0
//	HPA maxReplicas     ceil(max × share / total), at least the new minReplicas and 1
//	PDB minAvailable    ceil(n × share / total), at least 1 when n > 0 and share > 0, at most share, and at most
//	                    share − 1 when n < total
//	PDB maxUnavailable  floor(n × share / total), at least 1 when n > 0 and share > 0, at most share
//
// ceil for the floors of availability, so that the clusters together keep at least what the template asks
// (but, when the template lets a pod go, each cluster lets one go, so that a drain can go on); floor for
// maxUnavailable, so that together they allow no more disruption than it does (but at least one per cluster,
// likewise). Percentages are kept: they already scale. A count that is absent
// stays absent, except minReplicas, whose default 1 is written when the result differs. With total 0 the
// copy is unchanged. An integer that is negative or beyond int32 is an error.
func Apportion(companion *unstructured.Unstructured, share, total int32) (*unstructured.Unstructured, error) {
	out := companion.DeepCopy()
	if total <= 0 {
		return out, nil
	}
	share = max(0, min(share, total))
	gvk := companion.GroupVersionKind()
	switch {
	case gvk.Group == "autoscaling" && gvk.Kind == KindHorizontalPodAutoscaler:
		minReplicas, minSet, err := count(out, "spec", "minReplicas")
		if err != nil {
			return nil, err
		}
		if !minSet {
			minReplicas = 1
		}
		newMin := max(1, ceilShare(minReplicas, share, total))
		if share > 0 {
			newMin = min(newMin, int64(share))
		}
		if minSet || newMin != minReplicas {
			out.Object["spec"].(map[string]any)["minReplicas"] = newMin
		}
		maxReplicas, maxSet, err := count(out, "spec", "maxReplicas")
		if err != nil {
			return nil, err
		}
		if maxSet {
			out.Object["spec"].(map[string]any)["maxReplicas"] = max(newMin, 1, ceilShare(maxReplicas, share, total))
		}
	case gvk.Group == "policy" && gvk.Kind == KindPodDisruptionBudget:
		for _, f := range []struct {
			name string
			ceil bool
		}{{"minAvailable", true}, {"maxUnavailable", false}} {
			n, set, err := count(out, "spec", f.name)
			if err != nil {
				return nil, err
			}
			if !set {
				continue
			}
			v := int64(0)
			if n > 0 && share > 0 {
				if f.ceil {
					v = ceilShare(n, share, total)
				} else {
					v = n * int64(share) / int64(total)
				}
				v = min(max(v, 1), int64(share))
				if f.ceil && n < int64(total) {
					// The template's PDB lets a pod go: so does each cluster's, or a drain there waits for good
					// (4 of 6 over 2/2/2 would otherwise be 2 of 2 everywhere).
					v = min(v, int64(share)-1)
				}
			}
			out.Object["spec"].(map[string]any)[f.name] = v
		}
	default:
		return nil, fmt.Errorf("%s %s is not a HorizontalPodAutoscaler or a PodDisruptionBudget", gvk.Kind, companion.GetName())
	}
	return out, nil
}

// ApportionedFields are the fields of a companion that Apportion divides, as the status names them: an HPA's
// spec.minReplicas (always: its default 1 is written when the result differs) and its integer
// spec.maxReplicas, a PDB's integer spec.minAvailable and spec.maxUnavailable; never a percentage.
func ApportionedFields(companion *unstructured.Unstructured) []string {
	fields := []string{"minReplicas", "maxReplicas"}
	if companion.GetKind() == KindPodDisruptionBudget {
		fields = []string{"minAvailable", "maxUnavailable"}
	}
	var out []string
	for _, f := range fields {
		if _, set, _ := count(companion, "spec", f); set || f == "minReplicas" {
			out = append(out, "spec."+f)
		}
	}
	return out
}

// count reads an integer count: set is false when it is absent or a string (a percentage).
func count(obj *unstructured.Unstructured, keys ...string) (n int64, set bool, err error) {
	v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, keys...)
	if !found {
		return 0, false, nil
	}
	if _, ok := v.(string); ok {
		return 0, false, nil
	}
	path := "." + keys[0]
	for _, k := range keys[1:] {
		path += "." + k
	}
	x, err := template.IntField(obj, path)
	if err != nil {
		return 0, false, err
	}
	return int64(x), true, nil
}

// ceilShare is ceil(n × share / total) for n ≥ 0, 0 ≤ share ≤ total and total > 0, without overflow (n and
// share are at most 2^31-1).
func ceilShare(n int64, share, total int32) int64 {
	return (n*int64(share) + int64(total) - 1) / int64(total)
}
