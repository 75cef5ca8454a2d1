package sandbox

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// Snapshot is what the hub holds at one moment, reduced to what the live view shows and the smoke test checks.
type Snapshot struct {
	Clusters     []ClusterView
	PMWs         []PMWView
	Interpreters []InterpreterView
	// Fleet are the namespaces opted in to transparent mode on the fleet API server (the hub, in the sandbox).
	Fleet []FleetNamespaceView
}

// InterpreterView is one ResourceInterpreter: the kind it describes and whether the manager uses it.
type InterpreterView struct {
	Name, Group, Kind string
	// Ready, Reason and Message are its Ready condition's; Ready is empty until the manager has looked at it.
	Ready           metav1.ConditionStatus
	Reason, Message string
}

// interpreterViews reduces ResourceInterpreters to what the live view shows, by name.
func interpreterViews(ris []workv1alpha1.ResourceInterpreter) []InterpreterView {
	out := make([]InterpreterView, 0, len(ris))
	for i := range ris {
		ri := &ris[i]
		v := InterpreterView{Name: ri.Name, Group: ri.Spec.Target.Group, Kind: ri.Spec.Target.Kind}
		if c := meta.FindStatusCondition(ri.Status.Conditions, workv1alpha1.ConditionReady); c != nil && c.ObservedGeneration == ri.Generation {
			v.Ready, v.Reason, v.Message = c.Status, c.Reason, c.Message
		}
		out = append(out, v)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// ClusterView is one ManagedCluster and the ManifestWorks in its namespace.
type ClusterView struct {
	Name string
	// Labels are the cluster's labels without the ones OCM puts on every cluster (name, clusterset).
	Labels   map[string]string
	Behavior Behavior
	Works    []WorkView
}

// WorkView is one ManifestWork as the agent reported it.
type WorkView struct {
	Name string
	// Owner is the owning PlacementManifestWork ("namespace/name"), empty for works nobody owns.
	Owner      string
	Generation int64
	// Applied, Available, Progressing and Degraded are the work's conditions for its current generation;
	// empty when the agent has not reported them for that generation (OCM's agent only reports Progressing
	// and Degraded from condition rules).
	Applied, Available, Progressing, Degraded metav1.ConditionStatus
	Workloads                                 []WorkloadView
	// Shares are the split shares the work carries, by split key ("<kind>.<group> <ns>/<name> <fieldPath>").
	Shares map[string]int32
}

// WorkloadView is one manifest that runs pods: how many it wants on this cluster, and how many are ready.
type WorkloadView struct {
	Kind, Namespace, Name string
	// Desired is the manifest's replicas (its share, when split); Ready comes from the agent's status feedback.
	Desired, Ready int64
	// Split says whether this manifest is one the PlacementManifestWork splits.
	Split bool
	// Stuck says whether the workload gave up on becoming ready (a Deployment past its progress deadline).
	Stuck bool
	// Images are the images of its pod template's containers (init containers first), as the work delivers
	// them: after the PlacementManifestWork's overrides for this cluster.
	Images []string
}

// PMWView is one PlacementManifestWork's status.
type PMWView struct {
	types.NamespacedName
	// Sample says whether it is one of the samples the sandbox applied.
	Sample                         bool
	Generation, ObservedGeneration int64
	Placement                      string
	Conditions                     []metav1.Condition
	Summary                        workv1alpha1.PlacedManifestWorkSummary
	Splits                         []workv1alpha1.SplitStatus
	Manifests                      []workv1alpha1.ManifestSummary
	Unhealthy                      []workv1alpha1.ClusterHealth
	UnhealthyNotListed             int32
	// HasOverrides says whether its spec has overrides, so its works may differ per cluster; Overrides is
	// status.overrides.
	HasOverrides bool
	Overrides    []workv1alpha1.OverrideStatus
}

// BuildSnapshot reduces the hub's objects to a Snapshot. Works outside the clusters' namespaces are left out.
func BuildSnapshot(clusters []clusterv1.ManagedCluster, works []workv1.ManifestWork, pmws []workv1alpha1.PlacementManifestWork,
	behaviors map[string]Behavior, samples []types.NamespacedName) Snapshot {
	var s Snapshot
	byNamespace := map[string][]WorkView{}
	for i := range works {
		byNamespace[works[i].Namespace] = append(byNamespace[works[i].Namespace], workView(&works[i]))
	}
	for i := range clusters {
		c := &clusters[i]
		labels := map[string]string{}
		for k, v := range c.Labels {
			if k != ocmsim.LabelClusterName && k != clusterv1beta2.ClusterSetLabel {
				labels[k] = v
			}
		}
		ws := byNamespace[c.Name]
		sort.Slice(ws, func(a, b int) bool { return ws[a].Owner+" "+ws[a].Name < ws[b].Owner+" "+ws[b].Name })
		s.Clusters = append(s.Clusters, ClusterView{Name: c.Name, Labels: labels, Behavior: behaviors[c.Name], Works: ws})
	}
	sort.Slice(s.Clusters, func(a, b int) bool { return clusterLess(s.Clusters[a].Name, s.Clusters[b].Name) })

	isSample := map[types.NamespacedName]bool{}
	for _, n := range samples {
		isSample[n] = true
	}
	for i := range pmws {
		p := &pmws[i]
		key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
		s.PMWs = append(s.PMWs, PMWView{
			NamespacedName: key, Sample: isSample[key],
			Generation: p.Generation, ObservedGeneration: p.Status.ObservedGeneration,
			Placement: p.Status.Placement, Conditions: p.Status.Conditions,
			Summary: p.Status.PlacedManifestWorkSummary, Splits: p.Status.Splits, Manifests: p.Status.Manifests,
			Unhealthy: p.Status.UnhealthyClusters, UnhealthyNotListed: p.Status.UnhealthyClustersNotListed,
			HasOverrides: len(p.Spec.Overrides) > 0, Overrides: p.Status.Overrides,
		})
	}
	sort.Slice(s.PMWs, func(a, b int) bool { return s.PMWs[a].String() < s.PMWs[b].String() })
	return s
}

// clusterLess orders cluster2 before cluster10.
func clusterLess(a, b string) bool {
	if len(a) != len(b) && strings.TrimRight(a, "0123456789") == strings.TrimRight(b, "0123456789") {
		return len(a) < len(b)
	}
	return a < b
}

func workView(w *workv1.ManifestWork) WorkView {
	v := WorkView{Name: w.Name, Generation: w.Generation, Shares: manifestwork.Shares(w)}
	if owner, ok := manifestwork.OwnerOf(w); ok {
		v.Owner = owner.String()
	}
	current := func(t string) *metav1.Condition {
		c := meta.FindStatusCondition(w.Status.Conditions, t)
		if c == nil || c.ObservedGeneration != w.Generation {
			return nil
		}
		return c
	}
	for t, into := range map[string]*metav1.ConditionStatus{
		workv1.WorkApplied: &v.Applied, workv1.WorkAvailable: &v.Available,
		workv1.WorkProgressing: &v.Progressing, workv1.WorkDegraded: &v.Degraded,
	} {
		if c := current(t); c != nil {
			*into = c.Status
		}
	}

	manifests, err := template.Parse(w.Spec.Workload.Manifests)
	if err != nil {
		return v
	}
	feedback := map[int32][]workv1.FeedbackValue{}
	if v.Applied != "" {
		// Feedback is only as current as the conditions the agent wrote with it.
		for _, m := range w.Status.ResourceStatus.Manifests {
			feedback[m.ResourceMeta.Ordinal] = m.StatusFeedbacks.Values
		}
	}
	for _, m := range manifests {
		if !ocmsim.IsWorkload(m.GVK) {
			continue
		}
		wl := WorkloadView{Kind: m.GVK.Kind, Namespace: m.Object.GetNamespace(), Name: m.Object.GetName(), Desired: desiredPods(m),
			Images: containerImages(m.GVK.Kind, m.Object)}
		wl.Ready = readyPods(m.GVK.Kind, feedback[int32(m.Index)])
		if stuck, ok := stuckFeedback[m.GVK.Kind]; ok {
			for _, f := range feedback[int32(m.Index)] {
				if f.Value.String != nil && *f.Value.String == stuck {
					wl.Stuck = true
				}
			}
		}
		prefix := m.ID() + " "
		for k := range v.Shares {
			if strings.HasPrefix(k, prefix) {
				wl.Split = true
			}
		}
		v.Workloads = append(v.Workloads, wl)
	}
	return v
}

// containerImages lists the images of a workload's pod template, init containers first; nil for a kind
// without one.
func containerImages(kind string, obj *unstructured.Unstructured) []string {
	switch kind {
	case "Pod", "CronJob", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job":
	default:
		return nil
	}
	spec := template.PodSpecPath(schema.GroupKind{Kind: kind})
	var out []string
	for _, field := range []string{"initContainers", "containers"} {
		containers, _, _ := unstructured.NestedSlice(obj.Object, append(spec, field)...)
		for _, c := range containers {
			if c, ok := c.(map[string]any); ok {
				if image, ok := c["image"].(string); ok {
					out = append(out, image)
				}
			}
		}
	}
	return out
}

// desiredPods is how many pods of a workload should be ready (or, for a Job, succeed) on one cluster.
func desiredPods(m template.Manifest) int64 {
	switch m.GVK.Kind {
	case "Deployment", "StatefulSet", "ReplicaSet", DatabaseKind:
		return DesiredReplicas(m.Object)
	case "Job":
		return ocmsim.JobCompletions(m.Object)
	}
	return 1 // a DaemonSet on a one-node cluster, a Pod
}

// DesiredReplicas is a manifest's spec.replicas, defaulted to 1 as the API server does: the pods a simulated
// cluster runs for it (ocmsim.DesiredReplicas).
func DesiredReplicas(obj *unstructured.Unstructured) int64 { return ocmsim.DesiredReplicas(obj) }

// readyFeedback names, per kind, the feedback values that count ready pods: the manager's own (named after
// the status field, with its prefix) and those of OCM's WellKnownStatus rule.
var readyFeedback = map[string][]string{
	"Deployment":  {"readyReplicas"},
	"StatefulSet": {"readyReplicas"},
	"ReplicaSet":  {"readyReplicas"},
	"DaemonSet":   {"numberReady"},
	"Job":         {"succeeded", "JobSucceeded"},
	"Pod":         {"ready", "PodReady"},
	// The interpreter sample's kind: its interpreter's feedback name.
	DatabaseKind: {"readyInstances"},
}

// stuckFeedback is, per kind, the reported value that says a workload gave up on becoming ready.
var stuckFeedback = map[string]string{
	"Deployment": "ProgressDeadlineExceeded",
	DatabaseKind: databasePhaseFailed,
}

// readyPods reads the ready pods of a workload from its status feedback; a missing value is zero, as the
// status omits zero counts.
func readyPods(kind string, values []workv1.FeedbackValue) int64 {
	for _, want := range readyFeedback[kind] {
		for _, v := range values {
			if !strings.EqualFold(strings.TrimPrefix(v.Name, health.FeedbackPrefix), want) {
				continue
			}
			switch {
			case v.Value.Integer != nil:
				return *v.Value.Integer
			case v.Value.String != nil && *v.Value.String == "True":
				return 1
			}
		}
	}
	return 0
}

// Ready says whether every workload of the work has all its pods ready.
func (w WorkView) Ready() bool {
	for _, wl := range w.Workloads {
		if wl.Ready < wl.Desired {
			return false
		}
	}
	return true
}

// Settled reports whether every sample PlacementManifestWork has reached its goal on its clusters (all n, or
// for the scores sample the two nearest and for the transparent-mode sample the ones its selector picks, see
// SampleClusters): its status describes its current spec, each of those clusters has its work Applied and
// Available with no cluster progressing or degraded, no other cluster has one, every split is placed in full,
// and every workload reports all its pods ready. For a PlacementManifestWork generated from a fleet namespace,
// the status the manager wrote back on the fleet objects must say so too (FleetObjectView.Settled: a
// Deployment's readyReplicas at its replicas, Available). When it has not, the reasons say what is missing,
// for a timeout's message.
func Settled(s Snapshot, samples []types.NamespacedName, n int) (bool, []string) {
	var why []string
	byName := map[types.NamespacedName]PMWView{}
	for _, p := range s.PMWs {
		byName[p.NamespacedName] = p
	}
	for _, name := range samples {
		p, ok := byName[name]
		switch {
		case !ok:
			why = append(why, fmt.Sprintf("%s does not exist", name))
			continue
		case p.ObservedGeneration != p.Generation:
			why = append(why, fmt.Sprintf("%s: status is for generation %d, spec is at %d", name, p.ObservedGeneration, p.Generation))
			continue
		}
		want := map[string]bool{}
		for _, c := range SampleClusters(name, n) {
			want[c] = true
		}
		sum := p.Summary
		if int(sum.Total) != len(want) || sum.Applied != sum.Total || sum.Available != sum.Total || sum.Progressing != 0 || sum.Degraded != 0 {
			why = append(why, fmt.Sprintf("%s: %d clusters of %d, %d applied, %d available, %d progressing, %d degraded",
				name, sum.Total, len(want), sum.Applied, sum.Available, sum.Progressing, sum.Degraded))
		}
		for _, sp := range p.Splits {
			if sp.Placed != sp.Total {
				why = append(why, fmt.Sprintf("%s: split %s places %d of %d", name, sp.Name, sp.Placed, sp.Total))
			}
		}
		for _, c := range s.Clusters {
			w, ok := c.workOf(name.String())
			switch {
			case !want[c.Name] && ok:
				why = append(why, fmt.Sprintf("%s: a ManifestWork on %s, which is not among its clusters %s", name, c.Name, strings.Join(SampleClusters(name, n), ", ")))
			case !want[c.Name]:
			case !ok:
				why = append(why, fmt.Sprintf("%s: no ManifestWork on %s", name, c.Name))
			case !w.Ready():
				why = append(why, fmt.Sprintf("%s: workloads on %s are not ready", name, c.Name))
			}
		}
		if name.Name == workv1alpha1.FleetGeneratedName {
			why = append(why, fleetSettled(s, name)...)
		}
	}
	return len(why) == 0, why
}

// NearestSample is the scores sample's PlacementManifestWork (samples/nearest.yaml).
var NearestSample = types.NamespacedName{Namespace: "default", Name: "nearest"}

// SampleClusters are the clusters a sample PlacementManifestWork settles on with n sandbox clusters: every
// one, except for the scores sample, whose Placement picks the two with the lowest simulated latency, and the
// transparent-mode sample, whose cluster selector picks the production clusters.
func SampleClusters(name types.NamespacedName, n int) []string {
	all := ClusterNames(n)
	switch name {
	case FleetSample:
		return FleetSampleClusters(n)
	case NearestSample:
	default:
		return all
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return SimulatedLatency(idx[a]) < SimulatedLatency(idx[b]) })
	out := make([]string, 0, 2)
	for _, i := range idx[:min(2, n)] {
		out = append(out, all[i])
	}
	sort.Strings(out)
	return out
}

func (c ClusterView) workOf(owner string) (WorkView, bool) {
	for _, w := range c.Works {
		if w.Owner == owner {
			return w, true
		}
	}
	return WorkView{}, false
}

// collect reads the hub into a Snapshot.
func collect(ctx context.Context, c client.Reader, behaviors map[string]Behavior, samples []types.NamespacedName) (Snapshot, error) {
	clusters := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, clusters); err != nil {
		return Snapshot{}, fmt.Errorf("listing ManagedClusters: %w", err)
	}
	works := &workv1.ManifestWorkList{}
	if err := c.List(ctx, works); err != nil {
		return Snapshot{}, fmt.Errorf("listing ManifestWorks: %w", err)
	}
	pmws := &workv1alpha1.PlacementManifestWorkList{}
	if err := c.List(ctx, pmws); err != nil {
		return Snapshot{}, fmt.Errorf("listing PlacementManifestWorks: %w", err)
	}
	interpreters := &workv1alpha1.ResourceInterpreterList{}
	if err := c.List(ctx, interpreters); err != nil {
		return Snapshot{}, fmt.Errorf("listing ResourceInterpreters: %w", err)
	}
	s := BuildSnapshot(clusters.Items, works.Items, pmws.Items, behaviors, samples)
	s.Interpreters = interpreterViews(interpreters.Items)
	fleet, err := collectFleet(ctx, c, pmws.Items)
	if err != nil {
		return Snapshot{}, err
	}
	s.Fleet = fleet
	return s, nil
}
