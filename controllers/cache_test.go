package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/trimmedlist/trimmedlisttest"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/watchlist"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// worksByObject is what the cache options say of the ManifestWork cache.
func worksByObject(t testing.TB, opts cache.Options) cache.ByObject {
	t.Helper()
	for obj, by := range opts.ByObject {
		if _, ok := obj.(*workv1.ManifestWork); ok {
			return by
		}
	}
	t.Fatal("CacheOptions has no ManifestWork entry")
	return cache.ByObject{}
}

// workTransform is the transform CacheOptions gives the ManifestWork cache.
func workTransform(t testing.TB) func(any) (any, error) {
	t.Helper()
	opts, err := CacheOptions(&rest.Config{Host: "https://hub.invalid"})
	if err != nil {
		t.Fatal(err)
	}
	return worksByObject(t, opts).Transform
}

// TestTrimWork: the cached work keeps, field by field, what its readers read (see trimWork), and loses the rest.
func TestTrimWork(t *testing.T) {
	ts := metav1.NewTime(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	gone := metav1.NewTime(ts.Add(time.Hour))
	cond := func(typ string, s metav1.ConditionStatus, gen int64, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, ObservedGeneration: gen, LastTransitionTime: ts, Reason: "SomeReason", Message: msg}
	}
	kept := func(c metav1.Condition, msg string) metav1.Condition { c.Reason, c.Message = "", msg; return c }
	ruleEntry := workv1.ManifestConfigOption{
		ResourceIdentifier: workv1.ResourceIdentifier{Group: "batch", Resource: "jobs", Name: "migrate", Namespace: "app"},
		ConditionRules: []workv1.ConditionRule{
			{Type: workv1.WellKnownConditionsType, Condition: workv1.ManifestComplete},
			{Type: workv1.CelConditionExpressionsType, Condition: conditionFeedbackSynced, CelExpressions: []string{"true"}, Message: "m"},
		},
	}
	rm := func(ordinal int32, kind, name string) workv1.ManifestResourceMeta {
		return workv1.ManifestResourceMeta{Ordinal: ordinal, Group: "apps", Version: "v1", Kind: kind, Resource: strings.ToLower(kind) + "s", Name: name, Namespace: "app"}
	}
	feedback := []workv1.FeedbackValue{
		{Name: "pmw.readyReplicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](2)}},
		{Name: "pmw.serviceType", Value: workv1.FieldValue{Type: workv1.String, String: ptr.To("ClusterIP")}},
		{Name: "user.raw", Value: workv1.FieldValue{Type: workv1.JsonRaw, JsonRaw: ptr.To(`{"a":1}`)}},
		{Name: "user.ok", Value: workv1.FieldValue{Type: workv1.Boolean, Boolean: ptr.To(true)}},
	}
	objMeta := metav1.ObjectMeta{
		Name: "web-x", Namespace: "cluster1", UID: "u1", ResourceVersion: "42", Generation: 3, CreationTimestamp: ts,
		DeletionTimestamp: &gone, Finalizers: []string{workv1.ManifestWorkFinalizer},
		Labels: map[string]string{workv1alpha1.LabelPlacementManifestWork: "ns.web", "team": "a"},
		Annotations: map[string]string{
			workv1alpha1.AnnotationOwner: "ns/web", workv1alpha1.AnnotationTemplateHash: "t", workv1alpha1.AnnotationSpecHash: "s",
			workv1alpha1.AnnotationShares: `{"x":1}`, workv1alpha1.AnnotationUpdatedAt: "2026-11-24T09:00:00Z",
			"kubectl.kubernetes.io/last-applied-configuration": `{"big":"object"}`,
		},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u2"}},
		ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "agent", Operation: metav1.ManagedFieldsOperationUpdate}},
	}
	in := &workv1.ManifestWork{
		ObjectMeta: *objMeta.DeepCopy(),
		Spec: workv1.ManifestWorkSpec{
			Workload:     workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: k8sruntime.RawExtension{Raw: []byte(`{"kind":"ConfigMap"}`)}}}},
			DeleteOption: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan},
			Executor:     &workv1.ManifestWorkExecutor{Subject: workv1.ManifestWorkExecutorSubject{Type: workv1.ExecutorSubjectTypeServiceAccount}},
			ManifestConfigs: []workv1.ManifestConfigOption{
				{ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Name: "web", Namespace: "app"},
					FeedbackRules: []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: []workv1.JsonPath{{Name: "pmw.readyReplicas", Path: ".status.readyReplicas"}}}}},
				func() workv1.ManifestConfigOption {
					e := *ruleEntry.DeepCopy()
					e.FeedbackRules = []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}}
					e.UpdateStrategy = &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply}
					return e
				}(),
			},
		},
		Status: workv1.ManifestWorkStatus{
			Conditions: []metav1.Condition{
				cond(workv1.WorkApplied, metav1.ConditionFalse, 3, "apply failed: quota"),
				cond(workv1.WorkAvailable, metav1.ConditionTrue, 3, "All resources are available"),
				cond(workv1.WorkDegraded, metav1.ConditionTrue, 3, "a rule says degraded"),
				cond(workv1.WorkProgressing, metav1.ConditionTrue, 3, "Applying"),
				cond("Custom", metav1.ConditionTrue, 3, "nobody reads it"),
			},
			ResourceStatus: workv1.ManifestResourceStatus{Manifests: []workv1.ManifestCondition{
				{ResourceMeta: rm(0, "Deployment", "web"), StatusFeedbacks: workv1.StatusFeedbackResult{Values: feedback},
					Conditions: []metav1.Condition{
						cond(workv1.ManifestApplied, metav1.ConditionFalse, 3, "forbidden"),
						cond(workv1.ManifestAvailable, metav1.ConditionTrue, 0, "Resource is available"),
						cond(conditionFeedbackSynced, metav1.ConditionTrue, 3, ""),
						cond(workv1.ManifestDegraded, metav1.ConditionTrue, 3, "rule: degraded"),
						cond("Failed", metav1.ConditionTrue, 3, "rule: failed"),
						cond("Ready", metav1.ConditionFalse, 3, "rule: not ready"),
					}},
				{ResourceMeta: rm(1, "Job", "migrate")},
			}},
		},
	}
	want := &workv1.ManifestWork{
		ObjectMeta: func() metav1.ObjectMeta { m := *objMeta.DeepCopy(); m.ManagedFields = nil; return m }(),
		Spec:       workv1.ManifestWorkSpec{ManifestConfigs: []workv1.ManifestConfigOption{ruleEntry}},
		Status: workv1.ManifestWorkStatus{
			Conditions: []metav1.Condition{
				kept(in.Status.Conditions[0], "apply failed: quota"),
				kept(in.Status.Conditions[1], ""),
				kept(in.Status.Conditions[2], "a rule says degraded"),
			},
			ResourceStatus: workv1.ManifestResourceStatus{Manifests: []workv1.ManifestCondition{
				{ResourceMeta: rm(0, "Deployment", "web"), StatusFeedbacks: workv1.StatusFeedbackResult{Values: feedback},
					Conditions: []metav1.Condition{
						kept(in.Status.ResourceStatus.Manifests[0].Conditions[0], "forbidden"),
						kept(in.Status.ResourceStatus.Manifests[0].Conditions[1], ""),
						// Kept: the work's own condition rules name it.
						kept(in.Status.ResourceStatus.Manifests[0].Conditions[2], ""),
						kept(in.Status.ResourceStatus.Manifests[0].Conditions[3], "rule: degraded"),
						kept(in.Status.ResourceStatus.Manifests[0].Conditions[4], "rule: failed"),
						kept(in.Status.ResourceStatus.Manifests[0].Conditions[5], ""),
					}},
				{ResourceMeta: rm(1, "Job", "migrate")},
			}},
		},
	}
	transform := workTransform(t)
	out, err := transform(in.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("cached work (-want +got):\n%s", diff)
	}

	t.Run("StatusFeedbackSynced without a rule that names it, and an earlier generation's work conditions", func(t *testing.T) {
		w := in.DeepCopy()
		w.Spec.ManifestConfigs = nil
		w.Generation = 4 // the agent has not reported the new generation yet
		out, err := transform(w)
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*workv1.ManifestWork)
		if got.Status.Conditions != nil {
			t.Errorf("work conditions of generation 3 on a work of generation 4 kept: %v", got.Status.Conditions)
		}
		var types []string
		for _, c := range got.Status.ResourceStatus.Manifests[0].Conditions {
			types = append(types, c.Type)
		}
		if want := []string{"Applied", "Available", "Degraded", "Failed", "Ready"}; !cmp.Equal(types, want) {
			t.Errorf("manifest conditions %v, want %v", types, want)
		}
		if got.Spec.ManifestConfigs != nil {
			t.Errorf("manifestConfigs without condition rules kept: %v", got.Spec.ManifestConfigs)
		}
	})
}

// benchManifests are test/bench's workload (targets.go manifests): a ConfigMap and a Service, and a Deployment
// of the given replicas.
func benchManifests(version string, replicas int) []map[string]any {
	dep := framework.Deployment("bench-app", "bench-app", replicas)
	pod := dep["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	pod["containers"].([]any)[0].(map[string]any)["image"] = "registry.example/app:" + version
	return []map[string]any{
		framework.ConfigMap("bench-config", "bench-app", map[string]string{"version": version, "settings": strings.Repeat("x", 256)}),
		dep,
		{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "bench-app", "namespace": "bench-app"},
			"spec": map[string]any{
				"selector": map[string]any{"app": "bench-app"},
				"ports":    []any{map[string]any{"port": 80, "targetPort": 8080}},
			},
		},
	}
}

// benchPMW is test/bench's PlacementManifestWork: the workload with the Deployment split (Balance) over the
// clusters, at version.
func benchPMW(version string, clusters int, configs []workv1.ManifestConfigOption) *workv1alpha1.PlacementManifestWork {
	w := framework.MakePMW("bench", "bench-ns").Placement("p").Strategy(workv1alpha1.DistributionStrategy{
		Name: "bench-app", Namespace: "bench-app", Group: "apps", Kind: "Deployment",
		Type: workv1alpha1.DistributionSplit, Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance},
	})
	for _, m := range benchManifests(version, 2*clusters) {
		w.Manifest(m)
	}
	p := w.Obj()
	p.UID, p.Generation = "0b6f3c55-6c3e-4c1e-9a57-1f0b7b2c9d11", 1
	p.Spec.ManifestWorkTemplate.ManifestConfigs = configs
	return p
}

// agentWorks are pmw's works on the clusters as the hub's cache receives them once each cluster's simulated
// agent (ocmsim, as test/bench's) reported them: built by the manager's planner and builder, given what the API
// server adds, the agent's status, and decoded from JSON like a watch event. spoke gives each cluster's agent,
// status edits the reported work afterwards (nil: none).
func agentWorks(t testing.TB, pmw *workv1alpha1.PlacementManifestWork, clusters []string, spoke func(i int) ocmsim.Spoke,
	status func(i int, w *workv1.ManifestWork)) ([]*workv1.ManifestWork, *planner.Plan, []template.Manifest) {
	t.Helper()
	manifests, err := planner.ParseTemplate(pmw)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := planner.Compute(pmw, manifests, planner.Input{Clusters: clusters})
	if err != nil {
		t.Fatal(err)
	}
	b, err := manifestwork.NewBuilder(pmw, health.ManifestConfigs(manifests, pmw.Spec.ManifestWorkTemplate.ManifestConfigs))
	if err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(Scheme()).UniversalDeserializer()
	created := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	out := make([]*workv1.ManifestWork, len(clusters))
	for i, c := range clusters {
		w, err := b.Build(c, plan.Manifests[c], plan.Shares[c])
		if err != nil {
			t.Fatal(err)
		}
		w.Annotations[workv1alpha1.AnnotationUpdatedAt] = created.Format(time.RFC3339)
		w.UID = types.UID(fmt.Sprintf("4a1d2f6e-0000-4000-8000-%012d", i))
		w.ResourceVersion, w.Generation, w.CreationTimestamp = fmt.Sprint(1000+i), 1, metav1.NewTime(created)
		w.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "manager", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "work.open-cluster-management.io/v1", Time: &w.CreationTimestamp, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{}},"f:spec":{}}`)}}}
		w.Status = ocmsim.Simulate(w, spoke(i), created, created.Add(time.Minute)).Status
		if status != nil {
			status(i, w)
		}
		raw, err := json.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		decoded := &workv1.ManifestWork{}
		if _, _, err := decoder.Decode(raw, nil, decoded); err != nil {
			t.Fatal(err)
		}
		out[i] = decoded
	}
	return out, plan, manifests
}

// reads is everything the manager's readers of the cache read of a work (see trimWork), computed by them
// where they are functions of the work alone.
type reads struct {
	Meta metav1.ObjectMeta
	// Health is health.Cluster against the template (with the work's shares), as for a work that carries it.
	Health health.ClusterResult
	// OwnHealth is health.Cluster against the work's own manifests, as for a work of an earlier template.
	OwnHealth health.ClusterResult
	// AvailableReplicas is what the budget reads of the split Deployment.
	AvailableReplicas int32
	AvailableKnown    bool
	// UpdatedAt and AvailableSince are the rollout's LastTransitionTime of the work.
	UpdatedAt, AvailableSince *metav1.Time
	// Fleet is transparent mode's report of each manifest (internal/fleet/status.go report).
	Fleet []fleetRead
}

type fleetRead struct {
	Meta                workv1.ManifestResourceMeta
	CarriesCurrent      bool
	Applied, Available  bool
	Feedback            health.Feedback
	Health              health.Verdict
	HasMeta, HasOrdinal bool
}

func readsOf(w *workv1.ManifestWork, template []health.ManifestInput) reads {
	r := reads{Meta: *w.ObjectMeta.DeepCopy()}
	r.Meta.ManagedFields = nil
	r.Health = health.Cluster(health.ClusterInput{Work: w, Manifests: withShares(template, manifestwork.Shares(w))})
	r.OwnHealth = health.Cluster(health.ClusterInput{Work: w, Manifests: health.WorkManifests(w)})
	r.AvailableReplicas, r.AvailableKnown = availableReplicas(w, workv1alpha1.SplitStatus{Group: "apps", Kind: "Deployment", Name: "bench-app", Namespace: "bench-app"})
	r.UpdatedAt = updatedAt(w)
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkAvailable); c != nil && c.ObservedGeneration == w.Generation {
		r.AvailableSince = &c.LastTransitionTime
	}
	// As internal/fleet/status.go's report, for every manifest the agent reports.
	conditionTrue := func(conds []metav1.Condition, t string) bool {
		c := meta.FindStatusCondition(conds, t)
		return c != nil && c.Status == metav1.ConditionTrue && (c.ObservedGeneration == 0 || c.ObservedGeneration == w.Generation)
	}
	inputs := health.WorkManifests(w)
	for i := range w.Status.ResourceStatus.Manifests {
		mc := &w.Status.ResourceStatus.Manifests[i]
		f := fleetRead{Meta: mc.ResourceMeta, Feedback: health.FeedbackOf(mc.StatusFeedbacks.Values),
			CarriesCurrent: conditionTrue(w.Status.Conditions, workv1.WorkApplied) &&
				meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied).ObservedGeneration == w.Generation,
			Applied: conditionTrue(mc.Conditions, workv1.ManifestApplied), Available: conditionTrue(mc.Conditions, workv1.ManifestAvailable)}
		if o := int(mc.ResourceMeta.Ordinal); o >= 0 && o < len(inputs) {
			in := inputs[o]
			in.Status = mc
			f.Health, f.HasOrdinal = health.Manifest(in), true
		}
		r.Fleet = append(r.Fleet, f)
	}
	return r
}

// TestTrimWorkChangesNoRead: for works as the agents report them in each state the manager judges (available,
// failing to apply, never ready, not yet reported, reported for an earlier generation, being deleted, with
// condition rules and the user's own feedback), every reader reads the same of the cached work as of the
// work the API server sent, and the PlacementManifestWork's status computed from them is the same.
func TestTrimWorkChangesNoRead(t *testing.T) {
	rules := []workv1.ManifestConfigOption{{
		ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Name: "bench-config", Namespace: "bench-app"},
		ConditionRules:     []workv1.ConditionRule{{Type: workv1.CelConditionExpressionsType, Condition: "Degraded", CelExpressions: []string{"false"}}},
		FeedbackRules: []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: []workv1.JsonPath{
			{Name: "version", Path: ".data.version"}}}},
	}}
	const clusters = 9
	names := make([]string, clusters)
	for i := range names {
		names[i] = fmt.Sprintf("cluster-%d", i)
	}
	pmw := benchPMW("v1", clusters, rules)
	spoke := func(i int) ocmsim.Spoke {
		switch i {
		case 1:
			return ocmsim.Spoke{Behavior: ocmsim.FailApply, FailureCause: "quota"}
		case 2:
			return ocmsim.Spoke{Behavior: ocmsim.NeverReady}
		case 3:
			return ocmsim.Spoke{Behavior: ocmsim.Healthy, ReadyDelay: time.Hour} // not ready yet
		}
		return ocmsim.Spoke{Behavior: ocmsim.Healthy}
	}
	status := func(i int, w *workv1.ManifestWork) {
		switch i {
		case 4: // the manager wrote generation 2, the agent has not reported it
			w.Generation = 2
		case 5: // not reported at all
			w.Status = workv1.ManifestWorkStatus{}
		case 6: // being deleted
			w.DeletionTimestamp = ptr.To(metav1.NewTime(w.CreationTimestamp.Add(time.Hour)))
			w.Finalizers = []string{workv1.ManifestWorkFinalizer}
		case 7: // the ConfigMap's condition rule reports Degraded, the work Degraded and Progressing too
			cm := &w.Status.ResourceStatus.Manifests[0]
			meta.SetStatusCondition(&cm.Conditions, metav1.Condition{Type: "Degraded", Status: metav1.ConditionTrue, ObservedGeneration: 1, Reason: "Rule", Message: "settings are wrong"})
			meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1.WorkDegraded, Status: metav1.ConditionTrue, ObservedGeneration: 1, Reason: "Rule", Message: "1 resource degraded"})
			meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1.WorkProgressing, Status: metav1.ConditionFalse, ObservedGeneration: 1, Reason: "Completed"})
		case 8: // a work of an earlier template (a rollout holds it), its ConfigMap not reported
			w.Annotations[workv1alpha1.AnnotationTemplateHash] = "earlier"
			w.Status.ResourceStatus.Manifests = w.Status.ResourceStatus.Manifests[1:]
		}
	}
	works, plan, manifests := agentWorks(t, pmw, names, spoke, status)
	template := health.Inputs(manifests, pmw.Spec.ManifestWorkTemplate.ManifestConfigs)
	transform := workTransform(t)

	before, after := map[string]*workv1.ManifestWork{}, map[string]*workv1.ManifestWork{}
	for i, w := range works {
		cached, err := transform(w.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		before[names[i]], after[names[i]] = w, cached.(*workv1.ManifestWork)
		if diff := cmp.Diff(readsOf(w, template), readsOf(after[names[i]], template)); diff != "" {
			t.Errorf("%s: what the readers read changed (-sent +cached):\n%s", names[i], diff)
		}
		// A paged list trims each page, and the informer trims what it stores again.
		again, err := transform(after[names[i]].DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(after[names[i]], again); diff != "" {
			t.Errorf("%s: trimming a trimmed work changed it (-once +twice):\n%s", names[i], diff)
		}
	}
	// The works must be in the states named above, or the comparison proves less than it says.
	states := map[health.State]int{}
	for _, w := range before {
		states[readsOf(w, template).Health.State]++
	}
	if states[health.Healthy] == 0 || states[health.Degraded] == 0 || states[health.Progressing] == 0 {
		t.Errorf("the works are not in every state: %v", states)
	}
	if len(after[names[0]].Status.ResourceStatus.Manifests[1].StatusFeedbacks.Values) == 0 {
		t.Error("the Deployment reports no feedback")
	}

	upToDate := map[string]bool{}
	for _, c := range names {
		upToDate[c] = true
	}
	statusOf := func(owned map[string]*workv1.ManifestWork) workv1alpha1.PlacementManifestWorkStatus {
		obs := &observation{
			inputs: inputs{placementName: "p", placementFound: true, clusters: names, workName: manifestwork.WorkName(manifestwork.Owner(pmw)),
				owned: owned, shares: ownedShares(owned), template: manifests},
			desired: desired{plan: plan, upToDate: upToDate},
		}
		return computeStatus(pmw, obs)
	}
	// computeStatus stamps its conditions' transitions with the time it runs.
	if diff := cmp.Diff(statusOf(before), statusOf(after), cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
		t.Errorf("status computed from the cached works differs (-sent +cached):\n%s", diff)
	}
}

// retainedPerWork is the heap that n works as test/bench's agents report them hold per work once each went
// through transform, all garbage collected.
func retainedPerWork(b *testing.B, n int, transform func(any) (any, error)) float64 {
	b.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("cluster-%05d", i)
	}
	pmw := benchPMW("v1", n, nil)
	healthy := func(int) ocmsim.Spoke { return ocmsim.Spoke{Behavior: ocmsim.Healthy} }
	// Built in batches so the heap measured holds the cached works, not the bytes they were decoded from.
	const batch = 500
	kept := make([]any, 0, n)
	runtime.GC()
	var start runtime.MemStats
	runtime.ReadMemStats(&start)
	for from := 0; from < n; from += batch {
		works, _, _ := agentWorks(b, pmw, names[from:min(from+batch, n)], healthy, nil)
		for _, w := range works {
			o, err := transform(w)
			if err != nil {
				b.Fatal(err)
			}
			kept = append(kept, o)
		}
	}
	runtime.GC()
	runtime.GC()
	var end runtime.MemStats
	runtime.ReadMemStats(&end)
	runtime.KeepAlive(kept)
	return float64(int64(end.HeapAlloc)-int64(start.HeapAlloc)) / float64(n)
}

// BenchmarkCachedWorkSize reports the heap a cached ManifestWork holds (bytes/work) as test/bench's agents
// report it (3 manifests, the Deployment's feedback, healthy), with the cache's transform before #23 (only
// managedFields and the manifests dropped) and with CacheOptions' (trimWork). Run with
// go test ./controllers -run '^$' -bench CachedWorkSize -benchtime 1x.
func BenchmarkCachedWorkSize(b *testing.B) {
	const n = 5000
	old := func(o any) (any, error) {
		w := o.(*workv1.ManifestWork)
		w.Spec.Workload.Manifests, w.ManagedFields = nil, nil
		return w, nil
	}
	for _, tc := range []struct {
		name      string
		transform func(any) (any, error)
	}{
		{"as sent", func(o any) (any, error) { return o, nil }},
		{"manifests and managedFields dropped", old},
		{"CacheOptions", workTransform(b)},
		{"CacheOptions, strings not shared", func(o any) (any, error) {
			o, err := workTransform(b)(o)
			unshare(o.(*workv1.ManifestWork))
			return o, err
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var perWork float64
			for range b.N {
				perWork = retainedPerWork(b, n, tc.transform)
			}
			b.ReportMetric(perWork, "bytes/work")
		})
	}
}

// unshare gives every string trimWork shares a copy of its own, to tell what trimming saves from what sharing
// saves.
func unshare(w *workv1.ManifestWork) {
	c := strings.Clone
	w.Name, w.Namespace = c(w.Name), c(w.Namespace)
	labels, annotations := map[string]string{}, map[string]string{}
	for k, v := range w.Labels {
		labels[c(k)] = c(v)
	}
	for k, v := range w.Annotations {
		annotations[c(k)] = c(v)
	}
	w.Labels, w.Annotations = labels, annotations
	conds := func(cs []metav1.Condition) {
		for i := range cs {
			cs[i].Type, cs[i].Status, cs[i].Message = c(cs[i].Type), metav1.ConditionStatus(c(string(cs[i].Status))), c(cs[i].Message)
		}
	}
	conds(w.Status.Conditions)
	for i := range w.Status.ResourceStatus.Manifests {
		m := &w.Status.ResourceStatus.Manifests[i]
		rm := &m.ResourceMeta
		rm.Group, rm.Version, rm.Kind, rm.Resource, rm.Name, rm.Namespace = c(rm.Group), c(rm.Version), c(rm.Kind), c(rm.Resource), c(rm.Name), c(rm.Namespace)
		for j := range m.StatusFeedbacks.Values {
			v := &m.StatusFeedbacks.Values[j]
			v.Name, v.Value.Type = c(v.Name), workv1.ValueType(c(string(v.Value.Type)))
		}
		conds(m.Conditions)
	}
}

// TestCacheListsWorksTrimmed: the ManifestWork informer CacheOptions makes lists this manager's works (the owner
// label) through the config it is given, in one request as the reflector asks, and stores each work trimmed
// (internal/trimmedlist), even with client-go's streamed lists on for the process.
func TestCacheListsWorksTrimmed(t *testing.T) {
	watchlist.Off()
	t.Setenv(watchlist.EnvVar, "true") // read by the gate watchlist.Off installs: the process would stream its lists
	pmw := benchPMW("v1", 1, nil)
	works, _, _ := agentWorks(t, pmw, []string{"cluster-0"}, func(int) ocmsim.Spoke { return ocmsim.Spoke{Behavior: ocmsim.Healthy} }, nil)
	var (
		mu    sync.Mutex
		asked []*http.Request
	)
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(workv1.ManifestWorkList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}, Items: []workv1.ManifestWork{*works[0]}})
	}))
	defer hub.Close()
	opts, err := CacheOptions(&rest.Config{Host: hub.URL})
	if err != nil || opts.NewInformer == nil {
		t.Fatalf("CacheOptions gives no informer constructor: %v", err)
	}
	// The trimmed list reads every namespace's works: per-namespace informers would each list them all.
	if by := worksByObject(t, opts); len(by.Namespaces) > 0 || len(opts.DefaultNamespaces) > 0 {
		t.Fatalf("the works' cache is restricted to namespaces %v %v, which its list does not follow", by.Namespaces, opts.DefaultNamespaces)
	}
	watchOnly := &toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (k8sruntime.Object, error) {
			return nil, errors.New("the works are not listed through controller-runtime's lister")
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}
	inf := opts.NewInformer(watchOnly, &workv1.ManifestWork{}, 0, toolscache.Indexers{})
	trimmedlisttest.Sync(t, inf)
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0].URL.Path != "/apis/work.open-cluster-management.io/v1/manifestworks" ||
		asked[0].URL.Query().Get("labelSelector") != workv1alpha1.LabelPlacementManifestWork || asked[0].URL.Query().Has("limit") {
		t.Fatalf("the works' list asked %v; want one list of every namespace's works with the owner label, no limit", asked)
	}
	stored := inf.GetStore().List()
	if len(stored) != 1 || len(stored[0].(*workv1.ManifestWork).Spec.Workload.Manifests) != 0 {
		t.Fatalf("stored %d works; want the one work, trimmed of its manifests", len(stored))
	}
}
