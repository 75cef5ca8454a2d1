package ocmsim_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// makeWork is a ManifestWork with the manifests and the manifestConfigs the manager writes for them, so the
// simulated agent is asked for the feedback the manager really asks for.
func makeWork(t *testing.T, generation int64, manifests ...map[string]any) *workv1.ManifestWork {
	t.Helper()
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "cluster1", Generation: generation}}
	for _, m := range manifests {
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	parsed, err := template.Parse(w.Spec.Workload.Manifests)
	if err != nil {
		t.Fatal(err)
	}
	w.Spec.ManifestConfigs = health.ManifestConfigs(parsed, nil)
	return w
}

// verdict is how the manager judges the simulated status: the point of the simulation is that it judges it as
// it would judge a real agent's.
func verdict(t *testing.T, w *workv1.ManifestWork) health.State {
	t.Helper()
	parsed, err := template.Parse(w.Spec.Workload.Manifests)
	if err != nil {
		t.Fatal(err)
	}
	return health.Cluster(health.ClusterInput{Work: w, Manifests: health.Inputs(parsed, nil)}).State
}

func TestSimulate(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	delay := 2 * time.Second
	cases := map[string]struct {
		behavior    ocmsim.Behavior
		elapsed     time.Duration
		conditions  map[string]string
		ready       int64
		requeue     time.Duration
		wantVerdict health.State
	}{
		"healthy, just applied: pods starting": {
			behavior: ocmsim.Healthy, elapsed: 500 * time.Millisecond,
			conditions:  map[string]string{"Applied": "True AppliedManifestWorkComplete", "Available": "True ResourcesAvailable"},
			requeue:     1500 * time.Millisecond,
			wantVerdict: health.Progressing,
		},
		"healthy, after the delay: ready": {
			behavior: ocmsim.Healthy, elapsed: delay,
			conditions:  map[string]string{"Applied": "True AppliedManifestWorkComplete", "Available": "True ResourcesAvailable"},
			ready:       3,
			wantVerdict: health.Healthy,
		},
		"fail-apply": {
			behavior: ocmsim.FailApply, elapsed: time.Minute,
			conditions:  map[string]string{"Applied": "False AppliedManifestWorkFailed", "Available": "False ResourcesNotAvailable"},
			wantVerdict: health.Degraded,
		},
		"never-ready, before the deadline": {
			behavior: ocmsim.NeverReady, elapsed: time.Second,
			conditions:  map[string]string{"Applied": "True AppliedManifestWorkComplete", "Available": "True ResourcesAvailable"},
			requeue:     time.Second,
			wantVerdict: health.Progressing,
		},
		"never-ready, past the deadline": {
			behavior: ocmsim.NeverReady, elapsed: time.Minute,
			conditions:  map[string]string{"Applied": "True AppliedManifestWorkComplete", "Available": "True ResourcesAvailable"},
			wantVerdict: health.Degraded,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := makeWork(t, 4, framework.ConfigMap("web-config", "default", map[string]string{"a": "b"}), framework.Deployment("web", "default", 3))
			got := ocmsim.Simulate(w, ocmsim.Spoke{Behavior: tc.behavior, ReadyDelay: delay}, start, start.Add(tc.elapsed))
			conds := map[string]string{}
			for _, c := range got.Status.Conditions {
				conds[c.Type] = string(c.Status) + " " + c.Reason
				if c.ObservedGeneration != 4 {
					t.Errorf("condition %s has observedGeneration %d, want 4", c.Type, c.ObservedGeneration)
				}
			}
			if diff := cmp.Diff(tc.conditions, conds); diff != "" {
				t.Errorf("work conditions (-want +got):\n%s", diff)
			}
			if got.RequeueAfter != tc.requeue {
				t.Errorf("requeue after %s, want %s", got.RequeueAfter, tc.requeue)
			}
			w.Status = got.Status
			if ready := feedbackInt(w, 1, health.ReadyReplicas); ready != tc.ready {
				t.Errorf("ready replicas %d, want %d", ready, tc.ready)
			}
			if v := verdict(t, w); v != tc.wantVerdict {
				t.Errorf("the manager judges the cluster %s, want %s", v, tc.wantVerdict)
			}
		})
	}
}

// feedbackInt is the manager's integer feedback value name of the manifest at ordinal; zero when missing, as
// the status omits zero counts.
func feedbackInt(w *workv1.ManifestWork, ordinal int32, name string) int64 {
	for _, m := range w.Status.ResourceStatus.Manifests {
		if m.ResourceMeta.Ordinal != ordinal {
			continue
		}
		for _, v := range m.StatusFeedbacks.Values {
			if v.Name == health.FeedbackPrefix+name && v.Value.Integer != nil {
				return *v.Value.Integer
			}
		}
	}
	return 0
}

func TestSimulateResourceStatus(t *testing.T) {
	w := makeWork(t, 1, framework.ConfigMap("c", "default", nil), framework.Deployment("web", "default", 2))
	got := ocmsim.Simulate(w, ocmsim.Spoke{Behavior: ocmsim.Healthy}, time.Now(), time.Now())
	var metas []workv1.ManifestResourceMeta
	for _, m := range got.Status.ResourceStatus.Manifests {
		metas = append(metas, m.ResourceMeta)
	}
	want := []workv1.ManifestResourceMeta{
		{Ordinal: 0, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Name: "c", Namespace: "default"},
		{Ordinal: 1, Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Name: "web", Namespace: "default"},
	}
	if diff := cmp.Diff(want, metas); diff != "" {
		t.Errorf("resourceMeta (-want +got):\n%s", diff)
	}
	values := map[string]any{}
	for _, v := range got.Status.ResourceStatus.Manifests[1].StatusFeedbacks.Values {
		switch {
		case v.Value.Integer != nil:
			values[v.Name] = *v.Value.Integer
		case v.Value.String != nil:
			values[v.Name] = *v.Value.String
		}
	}
	wantValues := map[string]any{
		"pmw.replicas": int64(2), "pmw.readyReplicas": int64(2), "pmw.availableReplicas": int64(2), "pmw.updatedReplicas": int64(2), "pmw.specReplicas": int64(2),
		"pmw.generation": int64(1), "pmw.observedGeneration": int64(1), "pmw.progressingReason": "NewReplicaSetAvailable",
	}
	if diff := cmp.Diff(wantValues, values); diff != "" {
		t.Errorf("feedback (-want +got):\n%s", diff)
	}
	synced := meta.FindStatusCondition(got.Status.ResourceStatus.Manifests[0].Conditions, ocmsim.ConditionFeedbackSynced)
	if synced == nil || synced.Reason != ocmsim.ReasonNoFeedback {
		t.Errorf("a ConfigMap nobody asks feedback of reports %+v, want reason %s", synced, ocmsim.ReasonNoFeedback)
	}
}

// OCM's WellKnownStatus rule returns its own names, and leaves out what the object's status omits.
func TestFeedbackWellKnownStatus(t *testing.T) {
	obj := &unstructured.Unstructured{Object: framework.Deployment("web", "default", 3)}
	rules := []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}}
	cases := map[string]struct {
		rollout ocmsim.Rollout
		want    map[string]int64
	}{
		"starting": {rollout: ocmsim.Rollout{Generation: 1}, want: map[string]int64{"Replicas": 3}},
		"ready":    {rollout: ocmsim.Rollout{Ready: true, Generation: 1}, want: map[string]int64{"Replicas": 3, "ReadyReplicas": 3, "AvailableReplicas": 3}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			live := ocmsim.LiveObject(roundTrip(t, obj), tc.rollout)
			values, synced := ocmsim.Feedback(live, rules)
			got := map[string]int64{}
			for _, v := range values {
				got[v.Name] = *v.Value.Integer
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("feedback (-want +got):\n%s", diff)
			}
			if synced.Status != metav1.ConditionTrue {
				t.Errorf("StatusFeedbackSynced = %+v", synced)
			}
		})
	}
}

// roundTrip decodes a manifest as the agent gets it, from JSON, so numbers are int64.
func roundTrip(t *testing.T, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSimulateJob(t *testing.T) {
	w := makeWork(t, 1, framework.Job("batch", "default", 3))
	done := ocmsim.Simulate(w, ocmsim.Spoke{Behavior: ocmsim.Healthy, ReadyDelay: time.Second}, time.Time{}, time.Time{}.Add(time.Hour))
	w.Status = done.Status
	if got := feedbackInt(w, 0, health.Succeeded); got != 3 {
		t.Errorf("succeeded pods %d, want 3", got)
	}
	if v := verdict(t, w); v != health.Healthy {
		t.Errorf("a completed Job is %s, want Healthy", v)
	}
	w.Status = ocmsim.Simulate(w, ocmsim.Spoke{Behavior: ocmsim.Healthy, ReadyDelay: time.Second}, time.Time{}, time.Time{}).Status
	if v := verdict(t, w); v != health.Progressing {
		t.Errorf("a running Job is %s, want Progressing", v)
	}
}

// A status the agent wrote, simulated again later with nothing changed, must compare equal, or the agent
// would write on every reconcile.
func TestSimulateIsStable(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := makeWork(t, 2, framework.Deployment("web", "default", 1))
	healthy := ocmsim.Spoke{Behavior: ocmsim.Healthy, ReadyDelay: time.Second}
	w.Status = ocmsim.Simulate(w, healthy, start, start.Add(5*time.Second)).Status
	again := ocmsim.Simulate(w, healthy, start, start.Add(time.Minute))
	if !equality.Semantic.DeepEqual(w.Status, again.Status) {
		t.Errorf("status changed without cause:\n%s", cmp.Diff(w.Status, again.Status))
	}

	// A new generation keeps the transition time of conditions whose status stays.
	w.Generation = 3
	next := ocmsim.Simulate(w, healthy, start.Add(time.Minute), start.Add(time.Minute))
	applied := meta.FindStatusCondition(next.Status.Conditions, workv1.WorkApplied)
	if !applied.LastTransitionTime.Time.Equal(start.Add(5*time.Second)) || applied.ObservedGeneration != 3 {
		t.Errorf("Applied = %+v, want its old transition time and generation 3", applied)
	}
}

// A failing agent names its cluster, and what asked for the failure when told.
func TestSimulateFailureCause(t *testing.T) {
	w := makeWork(t, 1, framework.ConfigMap("c", "default", nil))
	cases := map[string]struct {
		cause, work, manifest string
	}{
		"no cause": {work: "Failed to apply manifest work: simulated failure on cluster1", manifest: "Failed to apply manifest: simulated failure"},
		"a flag": {cause: "--fail-apply", work: "Failed to apply manifest work: simulated failure on cluster1 (--fail-apply)",
			manifest: "Failed to apply manifest: simulated failure (--fail-apply)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ocmsim.Simulate(w, ocmsim.Spoke{Behavior: ocmsim.FailApply, FailureCause: tc.cause}, time.Now(), time.Now()).Status
			applied := meta.FindStatusCondition(got.Conditions, workv1.WorkApplied)
			manifest := meta.FindStatusCondition(got.ResourceStatus.Manifests[0].Conditions, workv1.ManifestApplied)
			if diff := cmp.Diff([]string{tc.work, tc.manifest}, []string{applied.Message, manifest.Message}); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGuessResource(t *testing.T) {
	cases := map[string]string{
		"Deployment": "deployments", "ConfigMap": "configmaps", "Ingress": "ingresses", "NetworkPolicy": "networkpolicies",
		"Endpoints": "endpoints", "Gateway": "gateways", "": "",
	}
	for kind, want := range cases {
		if got := ocmsim.GuessResource(kind); got != want {
			t.Errorf("GuessResource(%q) = %q, want %q", kind, got, want)
		}
	}
}

func TestWildcardMatch(t *testing.T) {
	cases := map[[2]string]bool{
		{"web", "web"}: true, {"web", "*"}: true, {"web-1", "web-*"}: true, {"api", "web-*"}: false, {"web.x", "web"}: false,
	}
	for in, want := range cases {
		if got := ocmsim.WildcardMatch(in[0], in[1]); got != want {
			t.Errorf("wildcardMatch(%q, %q) = %v, want %v", in[0], in[1], got, want)
		}
	}
}

func TestReadyDelays(t *testing.T) {
	got := ocmsim.ReadyDelays([]string{"a", "b", "c", "d"}, 4*time.Second)
	want := map[string]time.Duration{"a": 4 * time.Second, "b": 5 * time.Second, "c": 6 * time.Second, "d": 4 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
}
