package controllers

import (
	"reflect"
	"strings"
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/trimmedlist"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
)

// CacheOptions restricts the manager's ManifestWork and ControllerRevision caches to the objects
// PlacementManifestWorks own, so memory follows this manager's works, not every ManifestWork on the hub, and drops what the manager never reads from
// a cached object: managedFields (about a tenth of the cache at thousands of clusters), of a work all but what
// judges its health (trimWork: its manifests, which can reach hundreds of KiB per work, among the rest), and all
// of a ManagedCluster but its labels, conditions and ClusterClaims. Updates of cached objects keep the API server's managedFields: an object without them
// leaves them as they are. The ManifestWorks are listed through cfg, the manager's, each trimmed as it is decoded
// (internal/trimmedlist).
func CacheOptions(cfg *rest.Config) (cache.Options, error) {
	owned, err := labels.NewRequirement(workv1alpha1.LabelPlacementManifestWork, selection.Exists, nil)
	if err != nil {
		panic(err) // the key is a constant; an error here is a programming error
	}
	ownedOnly := labels.NewSelector().Add(*owned)
	stripManagedFields := cache.TransformStripManagedFields()
	byObject := map[client.Object]cache.ByObject{
		// The manager reads a ManagedCluster's labels, its Available condition and its ClusterClaims (which
		// overrides select by and read: a few short name/value pairs), nothing of its spec (client configs with
		// CA bundles) or the rest of its status (capacity, allocatable, versions).
		&clusterv1.ManagedCluster{}: {
			Transform: func(o any) (any, error) {
				if mc, ok := o.(*clusterv1.ManagedCluster); ok {
					mc.Spec = clusterv1.ManagedClusterSpec{}
					mc.Status = clusterv1.ManagedClusterStatus{Conditions: mc.Status.Conditions, ClusterClaims: mc.Status.ClusterClaims}
				}
				return stripManagedFields(o)
			},
		},
		// The PlacementManifestWorks' own ControllerRevisions, not the StatefulSets' and DaemonSets' of the hub,
		// without their data (a copy of the template each): the manager compares names and numbers only, and
		// patches what it changes (the data is immutable).
		&appsv1.ControllerRevision{}: {
			Label: ownedOnly,
			Transform: func(o any) (any, error) {
				if cr, ok := o.(*appsv1.ControllerRevision); ok {
					cr.Data = runtime.RawExtension{}
				}
				return stripManagedFields(o)
			},
		},
		&workv1.ManifestWork{}: {
			Label:     ownedOnly,
			Transform: trimWorks,
		},
	}
	// The ConfigMaps, Secrets and ServiceAccounts PMWs may carry along are watched as metadata only
	// (setup.go), which is still a list of every one of them on the hub: only what maps an event to its
	// PlacementManifestWorks is kept.
	for _, kind := range webhook.DependencyKinds { // the kinds a ResourceInterpreter's dependencies may name
		byObject[&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kind}}] = cache.ByObject{
			Transform: keepIdentity(stripManagedFields),
		}
	}
	// The works, with the agents' status, are what a list holds the most of: decoded one by one, each trimmed
	// before the next (a restart at 50,000 works peaked at 2.9 times the steady memory decoding them at once).
	newInformer, err := trimmedlist.NewInformer(cfg, map[reflect.Type]trimmedlist.Source{
		reflect.TypeOf(&workv1.ManifestWork{}): {
			Path:          "/apis/" + workv1.GroupVersion.String() + "/manifestworks",
			LabelSelector: ownedOnly.String(),
			Trim:          trimWorks,
		},
	})
	if err != nil {
		return cache.Options{}, err
	}
	return cache.Options{DefaultTransform: stripManagedFields, ByObject: byObject, NewInformer: newInformer}, nil
}

// trimWorks is the ManifestWork cache's transform (trimWork, without managedFields). It is idempotent, as the
// trimmed list, which applies it to each object as it is decoded, needs.
func trimWorks(o any) (any, error) {
	if w, ok := o.(*workv1.ManifestWork); ok {
		trimWork(w)
	}
	return cache.TransformStripManagedFields()(o)
}

// keepIdentity keeps of an object's metadata its name, namespace, UID and resourceVersion: not its labels and
// annotations, which for an object written with kubectl apply hold a copy of all of it (a Secret's data
// included), nor managedFields. Other objects of the same kind (none: the manager reads them from the API
// server) only lose their managedFields.
func keepIdentity(other toolscache.TransformFunc) toolscache.TransformFunc {
	return func(o any) (any, error) {
		m, ok := o.(*metav1.PartialObjectMetadata)
		if !ok {
			return other(o)
		}
		m.ObjectMeta = metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion}
		return m, nil
	}
}

// trimWork keeps of a ManifestWork what the manager reads from its cache, and shares the strings that repeat
// from work to work. Its readers are the PlacementManifestWork reconciler (health.Cluster and
// health.WorkManifests, availableReplicas in placementmanifestwork_budget.go, the rollout's
// ClusterRolloutStatus in placementmanifestwork_rollout.go, the owner, template-hash, spec-hash, shares and
// updated-at annotations) and transparent mode's status (internal/fleet/status.go: the same conditions,
// resourceMeta and feedback, through health.WorkManifests too). What stays:
//
//   - All of the metadata: a write is an Update of a copy of the cached work (manifestwork.Merge), which must
//     carry the labels, annotations, finalizers and owner references of others as they are.
//   - Of the spec, the manifestConfigs entries that have condition rules (health.WorkManifests finds a
//     manifest's condition rules among them; an entry without any is skipped there), without their feedback
//     rules and update strategy. A write replaces the whole spec with the desired one, so neither the
//     manifests, deleteOption, executor nor feedback rules are read.
//   - The work's Applied, Available and Degraded conditions of its current generation: every reader takes these
//     only when their observedGeneration is the work's generation (so an earlier generation's reads as none),
//     and no other type.
//   - Every manifest's resourceMeta and feedback values, and its conditions but StatusFeedbackSynced, which no
//     reader asks for (unless the work's own condition rules name it).
//   - Of each condition its type, status, observedGeneration and lastTransitionTime (the rollout reads the
//     Available one's), not its reason, which no reader reads; its message only for the types whose message
//     health quotes: Applied, Degraded and Failed.
func trimWork(w *workv1.ManifestWork) {
	rules := ruleConfigs(w.Spec.ManifestConfigs)
	w.Spec = workv1.ManifestWorkSpec{ManifestConfigs: rules}
	ruleTypes := map[string]bool{}
	for _, c := range rules {
		for _, r := range c.ConditionRules {
			ruleTypes[r.Condition] = true
		}
	}

	conds := w.Status.Conditions[:0]
	for _, c := range w.Status.Conditions {
		if workConditionTypes[c.Type] && c.ObservedGeneration == w.Generation {
			conds = append(conds, trimCondition(c))
		}
	}
	w.Status.Conditions = clipConditions(conds)
	for i := range w.Status.ResourceStatus.Manifests {
		m := &w.Status.ResourceStatus.Manifests[i]
		rm := &m.ResourceMeta
		rm.Group, rm.Version, rm.Kind = intern(rm.Group), intern(rm.Version), intern(rm.Kind)
		rm.Resource, rm.Name, rm.Namespace = intern(rm.Resource), intern(rm.Name), intern(rm.Namespace)
		for j := range m.StatusFeedbacks.Values {
			v := &m.StatusFeedbacks.Values[j]
			v.Name, v.Value.Type = intern(v.Name), workv1.ValueType(intern(string(v.Value.Type)))
			if v.Value.String != nil {
				*v.Value.String = intern(*v.Value.String)
			}
		}
		mconds := m.Conditions[:0]
		for _, c := range m.Conditions {
			if c.Type != conditionFeedbackSynced || ruleTypes[c.Type] {
				mconds = append(mconds, trimCondition(c))
			}
		}
		m.Conditions = clipConditions(mconds)
	}
	internMeta(&w.ObjectMeta)
}

// conditionFeedbackSynced is the condition OCM's agent sets on every manifest to say whether its status
// feedback could be read (ocm pkg/work/spoke/controllers/statuscontroller); the work API has no constant for it.
const conditionFeedbackSynced = "StatusFeedbackSynced"

// workConditionTypes are the work's conditions the cache keeps (of its current generation).
var workConditionTypes = map[string]bool{workv1.WorkApplied: true, workv1.WorkAvailable: true, workv1.WorkDegraded: true}

// quotedConditionTypes are the conditions whose message health quotes: Applied (work and manifest) when False,
// the work's Degraded and a manifest's Degraded or Failed condition rule when True.
var quotedConditionTypes = map[string]bool{workv1.WorkApplied: true, workv1.WorkDegraded: true, "Failed": true}

// trimCondition is c without its reason, and without its message unless health quotes it.
func trimCondition(c metav1.Condition) metav1.Condition {
	c.Type, c.Status, c.Reason = intern(c.Type), metav1.ConditionStatus(intern(string(c.Status))), ""
	if quotedConditionTypes[c.Type] {
		c.Message = intern(c.Message)
	} else {
		c.Message = ""
	}
	return c
}

// clipConditions is conds without the capacity left by what was dropped, nil when empty.
func clipConditions(conds []metav1.Condition) []metav1.Condition {
	if len(conds) == 0 {
		return nil
	}
	if cap(conds) == len(conds) {
		return conds
	}
	return append([]metav1.Condition(nil), conds...)
}

// ruleConfigs are the entries of configs that have condition rules, with nothing else than their resource
// identifier and condition rules.
func ruleConfigs(configs []workv1.ManifestConfigOption) []workv1.ManifestConfigOption {
	var out []workv1.ManifestConfigOption
	for _, c := range configs {
		if len(c.ConditionRules) == 0 {
			continue
		}
		id := c.ResourceIdentifier
		id.Group, id.Resource, id.Name, id.Namespace = intern(id.Group), intern(id.Resource), intern(id.Name), intern(id.Namespace)
		out = append(out, workv1.ManifestConfigOption{ResourceIdentifier: id, ConditionRules: c.ConditionRules})
	}
	return out
}

// internMeta shares the strings of a work's metadata that repeat from work to work: its name (the same on
// every cluster), namespace (the cluster's), labels, finalizers, annotation keys and the values of the
// manager's own annotations (owner, UID, hashes, shares: the same on many clusters). Others' annotation values,
// which may be large and unique, are left as they are.
func internMeta(m *metav1.ObjectMeta) {
	m.Name, m.Namespace, m.GenerateName = intern(m.Name), intern(m.Namespace), intern(m.GenerateName)
	for k, v := range m.Labels {
		m.Labels[intern(k)] = intern(v)
	}
	for k, v := range m.Annotations {
		if strings.HasPrefix(k, managerAnnotationPrefix) {
			v = intern(v)
		}
		m.Annotations[intern(k)] = v
	}
	for i, f := range m.Finalizers {
		m.Finalizers[i] = intern(f)
	}
}

// managerAnnotationPrefix starts the keys of the annotations the manager writes on its works.
const managerAnnotationPrefix = "work.open-cluster-management.io/placementmanifestwork"

// intern returns s as one copy shared by every cached object that holds the same string; unique drops that
// copy once no object holds it.
func intern(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}
