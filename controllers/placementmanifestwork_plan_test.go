package controllers

import (
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/failover"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/revision"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// TestPlanWrites covers what the desired state asks of the ManifestWorks: rollout gating, shares that move at
// once, make before break and the hold of works when nothing is decided.
func TestPlanWrites(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	healthy := health.ClusterResult{Verdict: health.Verdict{State: health.Healthy}}
	progressing := health.ClusterResult{Verdict: health.Verdict{State: health.Progressing}}
	progressive := &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
		Progressive: &clusterv1alpha1.RolloutProgressive{MaxConcurrency: intstr.FromInt32(1)}}
	broken := &clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive,
		Progressive: &clusterv1alpha1.RolloutProgressive{RolloutConfig: clusterv1alpha1.RolloutConfig{ProgressDeadline: "soon"}}}
	immediate := &workv1alpha1.MoveStrategy{Type: workv1alpha1.MoveImmediate}

	// A PMW splitting 6 replicas of a Deployment; its works as the manager writes them for the given clusters,
	// or with the template (or the shares) of an earlier plan.
	newPMW := func(image string, rollout *clusterv1alpha1.RolloutStrategy, move *workv1alpha1.MoveStrategy) *workv1alpha1.PlacementManifestWork {
		d := framework.Deployment("web", "default", 6)
		d["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = image
		p := framework.MakePMW("web", "ns").Manifest(d).Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default",
			Type: workv1alpha1.DistributionSplit, Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
		p.UID = "uid"
		p.Spec.RolloutStrategy, p.Spec.MoveStrategy = rollout, move
		return p
	}
	works := func(p *workv1alpha1.PlacementManifestWork, clusters ...string) map[string]*workv1.ManifestWork {
		out, _, _ := plannedWorks(t, p, clusters...)
		return out
	}
	merge := func(ms ...map[string]*workv1.ManifestWork) map[string]*workv1.ManifestWork {
		out := map[string]*workv1.ManifestWork{}
		for _, m := range ms {
			for c, w := range m {
				out[c] = w
			}
		}
		return out
	}

	// paused sets spec.paused, and status.completedRevision to the template of completed when it is set.
	paused := func(p, completed *workv1alpha1.PlacementManifestWork) *workv1alpha1.PlacementManifestWork {
		p.Spec.Paused = true
		if completed != nil {
			data, err := revision.Data(completed)
			if err != nil {
				t.Fatal(err)
			}
			p.Status.CompletedRevision = &workv1alpha1.RevisionReference{Revision: 1, Name: revision.Name(completed.Name, data)}
		}
		return p
	}

	type want struct {
		writes, deletes []string
		upToDate        []string
		leaving         int32
		recheck         time.Duration
	}
	cases := map[string]struct {
		pmw          *workv1alpha1.PlacementManifestWork
		clusters     []string
		owned        map[string]*workv1.ManifestWork
		current      map[string]health.ClusterResult
		leavingSince map[string]time.Time
		// unavailable and availableSince are the leaving clusters' ManagedClusters, as gather reads them.
		unavailable    map[string]string
		availableSince map[string]time.Time
		detached       map[string]bool
		want           want
	}{
		"new clusters get their works": {
			pmw: newPMW("app:1", nil, nil), clusters: []string{"a", "b"},
			want: want{writes: []string{"a", "b"}},
		},
		"works that carry the plan need no write": {
			pmw: newPMW("app:1", nil, nil), clusters: []string{"a", "b"}, owned: works(newPMW("app:1", nil, nil), "a", "b"),
			want: want{upToDate: []string{"a", "b"}},
		},
		"a progressive rollout takes one cluster at a time": {
			pmw: newPMW("app:2", progressive, nil), clusters: []string{"a", "b", "c"},
			owned:   works(newPMW("app:1", nil, nil), "a", "b", "c"),
			current: map[string]health.ClusterResult{"a": healthy, "b": healthy, "c": healthy},
			want:    want{writes: []string{"a"}},
		},
		"a cluster joining under a rollout waits its turn; the shares of the others change at once": {
			pmw: newPMW("app:1", broken, nil), clusters: []string{"a", "b", "c"},
			owned:   works(newPMW("app:1", nil, nil), "a", "b"),
			current: map[string]health.ClusterResult{"a": healthy, "b": healthy},
			want:    want{writes: []string{"a", "b"}, upToDate: []string{"a", "b"}},
		},
		"a leaving cluster's work is kept while a joining one is on its way": {
			pmw: newPMW("app:1", nil, nil), clusters: []string{"b"},
			owned:        merge(works(newPMW("app:1", nil, nil), "a"), works(newPMW("app:1", nil, nil), "b")),
			current:      map[string]health.ClusterResult{"a": healthy, "b": progressing},
			leavingSince: map[string]time.Time{"a": now.Add(-time.Minute)},
			want:         want{upToDate: []string{"b"}, leaving: 1, recheck: defaultMoveTimeout - time.Minute},
		},
		"a leaving cluster's work goes once the joining one is available": {
			pmw: newPMW("app:1", nil, nil), clusters: []string{"b"},
			owned:        merge(works(newPMW("app:1", nil, nil), "a"), works(newPMW("app:1", nil, nil), "b")),
			current:      map[string]health.ClusterResult{"a": healthy, "b": healthy},
			leavingSince: map[string]time.Time{"a": now},
			want:         want{deletes: []string{"a"}, upToDate: []string{"b"}},
		},
		"a shrink keeps the leaving cluster's work while the remaining clusters' shares rise": {
			// 6 replicas over a, b, c are 2 each; c leaves, and a and b get 3 each in this reconcile.
			pmw: newPMW("app:1", nil, nil), clusters: []string{"a", "b"},
			owned:        works(newPMW("app:1", nil, nil), "a", "b", "c"),
			current:      map[string]health.ClusterResult{"a": healthy, "b": healthy, "c": healthy},
			leavingSince: map[string]time.Time{"c": now},
			want:         want{writes: []string{"a", "b"}, upToDate: []string{"a", "b"}, leaving: 1, recheck: defaultMoveTimeout},
		},
		"a shrink removes the leaving cluster's work once the others are available with their new share": {
			pmw: newPMW("app:1", nil, nil), clusters: []string{"a", "b"},
			owned:        merge(works(newPMW("app:1", nil, nil), "a", "b", "c"), works(newPMW("app:1", nil, nil), "a", "b")),
			current:      map[string]health.ClusterResult{"a": healthy, "b": healthy, "c": healthy},
			leavingSince: map[string]time.Time{"c": now.Add(-time.Minute)},
			want:         want{deletes: []string{"c"}, upToDate: []string{"a", "b"}},
		},
		"a shrink whose remaining clusters are still scaling up keeps the leaving work": {
			pmw: newPMW("app:1", nil, nil), clusters: []string{"a", "b"},
			owned:        merge(works(newPMW("app:1", nil, nil), "a", "b", "c"), works(newPMW("app:1", nil, nil), "a", "b")),
			current:      map[string]health.ClusterResult{"a": healthy, "b": progressing, "c": healthy},
			leavingSince: map[string]time.Time{"c": now.Add(-time.Minute)},
			want:         want{upToDate: []string{"a", "b"}, leaving: 1, recheck: defaultMoveTimeout - time.Minute},
		},
		"a shrink waits for the raised shares at most the move timeout": {
			pmw: newPMW("app:1", nil, nil), clusters: []string{"a", "b"},
			owned:        works(newPMW("app:1", nil, nil), "a", "b", "c"),
			current:      map[string]health.ClusterResult{"a": healthy, "b": healthy, "c": healthy},
			leavingSince: map[string]time.Time{"c": now.Add(-defaultMoveTimeout)},
			want:         want{writes: []string{"a", "b"}, deletes: []string{"c"}, upToDate: []string{"a", "b"}},
		},
		"a leaving cluster's work goes after the move timeout": {
			pmw: newPMW("app:1", nil, nil), clusters: []string{"b"},
			owned:        merge(works(newPMW("app:1", nil, nil), "a"), works(newPMW("app:1", nil, nil), "b")),
			current:      map[string]health.ClusterResult{"a": healthy, "b": progressing},
			leavingSince: map[string]time.Time{"a": now.Add(-defaultMoveTimeout)},
			want:         want{deletes: []string{"a"}, upToDate: []string{"b"}},
		},
		"nothing decided: the works wait out the move timeout": {
			pmw: newPMW("app:1", nil, nil), owned: works(newPMW("app:1", nil, nil), "a", "b"),
			current:      map[string]health.ClusterResult{"a": healthy, "b": healthy},
			leavingSince: map[string]time.Time{"a": now, "b": now},
			want:         want{leaving: 2, recheck: defaultMoveTimeout},
		},
		"the works of a run removed after ttlSecondsAfterFinished are deleted, and none is written": {
			pmw: func() *workv1alpha1.PlacementManifestWork {
				p := newPMW("app:1", nil, nil)
				p.Status.Completion = &workv1alpha1.CompletionStatus{WorksRemovedTime: &metav1.Time{Time: now}}
				return p
			}(),
			clusters: []string{"a", "b", "c"}, owned: works(newPMW("app:1", nil, nil), "a", "b"),
			current: map[string]health.ClusterResult{"a": healthy, "b": healthy},
			want:    want{deletes: []string{"a", "b"}},
		},
		"paused: no cluster gets the new template, a joining one waits; the shares of the current ones change at once": {
			pmw: paused(newPMW("app:2", nil, nil), nil), clusters: []string{"a", "b", "c", "d"},
			owned:   merge(works(newPMW("app:1", nil, nil), "a", "b"), works(newPMW("app:2", nil, nil), "c")),
			current: map[string]health.ClusterResult{"a": healthy, "b": healthy, "c": healthy},
			want:    want{writes: []string{"c"}, upToDate: []string{"c"}},
		},
		"paused with the current template completed: a joining cluster gets it": {
			pmw: paused(newPMW("app:1", nil, nil), newPMW("app:1", nil, nil)), clusters: []string{"a", "b"},
			owned:   works(newPMW("app:1", nil, nil), "a"),
			current: map[string]health.ClusterResult{"a": healthy},
			want:    want{writes: []string{"a", "b"}, upToDate: []string{"a"}},
		},
		"paused with an earlier template completed: a joining cluster waits": {
			pmw: paused(newPMW("app:2", nil, nil), newPMW("app:1", nil, nil)), clusters: []string{"a", "b"},
			owned:   works(newPMW("app:1", nil, nil), "a"),
			current: map[string]health.ClusterResult{"a": healthy},
			want:    want{},
		},
		"paused under a progressive rollout: the cluster whose turn it is waits too": {
			pmw: paused(newPMW("app:2", progressive, nil), nil), clusters: []string{"a", "b", "c"},
			owned:   works(newPMW("app:1", nil, nil), "a", "b", "c"),
			current: map[string]health.ClusterResult{"a": healthy, "b": healthy, "c": healthy},
			want:    want{},
		},
		"a cluster dropped while unreachable keeps its work, whatever the move timeout": {
			pmw: newPMW("app:1", nil, nil), clusters: []string{"b"},
			owned:        merge(works(newPMW("app:1", nil, nil), "a"), works(newPMW("app:1", nil, nil), "b")),
			current:      map[string]health.ClusterResult{"b": healthy},
			leavingSince: map[string]time.Time{"a": now.Add(-time.Hour)},
			unavailable:  map[string]string{"a": "the ManagedCluster's availability is Unknown"},
			want:         want{upToDate: []string{"b"}, leaving: 1},
		},
		"a cluster being detached is not held, unavailable as it is": {
			pmw: newPMW("app:1", nil, nil), clusters: []string{"b"},
			owned:        merge(works(newPMW("app:1", nil, nil), "a"), works(newPMW("app:1", nil, nil), "b")),
			current:      map[string]health.ClusterResult{"b": healthy},
			leavingSince: map[string]time.Time{"a": now.Add(-time.Hour)},
			unavailable:  map[string]string{"a": "the ManagedCluster's availability is Unknown"},
			detached:     map[string]bool{"a": true},
			want:         want{deletes: []string{"a"}, upToDate: []string{"b"}},
		},
		"every cluster dropped while unreachable, moveStrategy Immediate: the works are kept": {
			pmw: newPMW("app:1", nil, immediate), owned: works(newPMW("app:1", nil, nil), "a", "b"),
			leavingSince: map[string]time.Time{"a": now, "b": now},
			unavailable:  map[string]string{"a": "Unknown", "b": "not available"},
			want:         want{leaving: 2},
		},
		"a cluster back from being unreachable keeps its work for the recovery period": {
			pmw: newPMW("app:1", nil, nil), clusters: []string{"b"},
			owned:          merge(works(newPMW("app:1", nil, nil), "a"), works(newPMW("app:1", nil, nil), "b")),
			current:        map[string]health.ClusterResult{"b": healthy},
			leavingSince:   map[string]time.Time{"a": now.Add(-time.Hour)},
			availableSince: map[string]time.Time{"a": now.Add(-30 * time.Second)},
			want:           want{upToDate: []string{"b"}, leaving: 1, recheck: failover.DefaultRecoveryPeriod - 30*time.Second},
		},
		"a cluster that left while available is not held, however recently it became available": {
			pmw: newPMW("app:1", nil, nil), clusters: []string{"b"},
			owned:          merge(works(newPMW("app:1", nil, nil), "a"), works(newPMW("app:1", nil, nil), "b")),
			current:        map[string]health.ClusterResult{"b": healthy},
			leavingSince:   map[string]time.Time{"a": now},
			availableSince: map[string]time.Time{"a": now.Add(-30 * time.Second)},
			want:           want{deletes: []string{"a"}, upToDate: []string{"b"}},
		},
		"a cluster available for the recovery period and still not decided loses its work": {
			pmw: newPMW("app:1", nil, nil), clusters: []string{"b"},
			owned:          merge(works(newPMW("app:1", nil, nil), "a"), works(newPMW("app:1", nil, nil), "b")),
			current:        map[string]health.ClusterResult{"b": healthy},
			leavingSince:   map[string]time.Time{"a": now.Add(-time.Hour)},
			availableSince: map[string]time.Time{"a": now.Add(-failover.DefaultRecoveryPeriod)},
			want:           want{deletes: []string{"a"}, upToDate: []string{"b"}},
		},
		"nothing decided with moveStrategy Immediate: the works go at once": {
			pmw: newPMW("app:1", nil, immediate), owned: works(newPMW("app:1", nil, nil), "a", "b"),
			leavingSince: map[string]time.Time{"a": now, "b": now},
			want:         want{deletes: []string{"a", "b"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// The works as the manager plans them (the template marker stamped too).
			_, plan, builder := plannedWorks(t, tc.pmw, tc.clusters...)
			decision := decisionOf(tc.clusters...)
			obs := &observation{
				inputs: inputs{placement: &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}},
					decisions: []clusterv1beta1.PlacementDecision{decision}, clusters: tc.clusters, owned: tc.owned,
					unavailable: tc.unavailable, availableSince: tc.availableSince, detached: tc.detached},
				desired: desired{builder: builder, templateHash: builder.TemplateHash(), current: tc.current, plan: plan},
			}
			if obs.owned == nil {
				obs.owned = map[string]*workv1.ManifestWork{}
			}
			// As decide sets it: the spec's template is the completed revision.
			data, err := revision.Data(tc.pmw)
			if err != nil {
				t.Fatal(err)
			}
			c := tc.pmw.Status.CompletedRevision
			obs.onCompleted = c != nil && c.Name == revision.Name(tc.pmw.Name, data)
			wp := planWrites(tc.pmw, obs, tc.leavingSince, now)
			got := want{leaving: wp.leaving, recheck: wp.recheck}
			for _, op := range wp.ops {
				if op.delete {
					got.deletes = append(got.deletes, op.cluster)
				} else {
					got.writes = append(got.writes, op.cluster)
				}
			}
			for c := range wp.upToDate {
				got.upToDate = append(got.upToDate, c)
			}
			sort.Strings(got.writes)
			sort.Strings(got.deletes)
			sort.Strings(got.upToDate)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestWrittenUpdatedAt: updatedAt marks when an update brought a new template; a create carries none (its
// creationTimestamp says it, and the rollout reads that), and an update of the shares alone keeps the time the
// template arrived.
func TestWrittenUpdatedAt(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	earlier := "2026-11-24T11:00:00Z"
	desired := func() *workv1.ManifestWork {
		return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "c", Annotations: map[string]string{}}}
	}
	existing := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "c",
		CreationTimestamp: metav1.NewTime(now.Add(-2 * time.Hour)),
		Annotations:       map[string]string{workv1alpha1.AnnotationUpdatedAt: earlier}}}
	cases := map[string]struct {
		op   writeOp
		want string // "" for no annotation
	}{
		"a create":                          {op: writeOp{desired: desired(), templateChange: true}},
		"an update bringing a new template": {op: writeOp{desired: desired(), existing: existing, templateChange: true}, want: now.Format(time.RFC3339)},
		"an update of the shares alone":     {op: writeOp{desired: desired(), existing: existing}, want: earlier},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := tc.op.written(now).Annotations[workv1alpha1.AnnotationUpdatedAt]
			if got != tc.want || ok != (tc.want != "") {
				t.Errorf("updatedAt = %q (set: %v), want %q", got, ok, tc.want)
			}
		})
	}
	// The rollout counts a created work's step from its creation.
	created := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now)}}
	if got := updatedAt(created); !got.Time.Equal(now) {
		t.Errorf("updatedAt of a created work = %v, want its creationTimestamp %v", got, now)
	}
}

// TestAdoptUpdate: a create refused because the work exists finds, most often, this manager's own earlier
// create that its cache has not seen: nothing is written again. A work of this PlacementManifestWork with
// another spec gets the desired one, with updatedAt when that brings it a template it lacks.
func TestAdoptUpdate(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	p := framework.MakePMW("web", "ns").Manifest(framework.ConfigMap("cfg", "default", map[string]string{"v": "1"})).Obj()
	p.UID = "uid"
	planned := func() *workv1.ManifestWork {
		works, _, _ := plannedWorks(t, p, "c1")
		return works["c1"]
	}
	own := planned()
	own.CreationTimestamp, own.ResourceVersion = metav1.NewTime(now.Add(-time.Minute)), "7"
	if got := adoptUpdate(own, writeOp{cluster: "c1", desired: planned(), templateChange: true}, now); got != nil {
		t.Errorf("the manager's own earlier create is written again:\n%+v", got.Annotations)
	}

	// Other shares of the same template: the spec changes, the cluster's rollout step does not start again.
	shares := planned()
	shares.Annotations[workv1alpha1.AnnotationSpecHash] = "other shares"
	got := adoptUpdate(shares, writeOp{cluster: "c1", desired: planned(), templateChange: true}, now)
	if got == nil {
		t.Fatal("a work with other shares is not updated")
	}
	if v, ok := got.Annotations[workv1alpha1.AnnotationUpdatedAt]; ok {
		t.Errorf("updatedAt %q on a work that carried the template already", v)
	}

	other := planned()
	other.Annotations[workv1alpha1.AnnotationSpecHash] = "an earlier spec"
	other.Annotations[workv1alpha1.AnnotationTemplateHash] = "an earlier template"
	got = adoptUpdate(other, writeOp{cluster: "c1", desired: planned(), templateChange: true}, now)
	if got == nil {
		t.Fatal("a work with another spec is not updated")
	}
	if want := planned().Annotations[workv1alpha1.AnnotationSpecHash]; got.Annotations[workv1alpha1.AnnotationSpecHash] != want {
		t.Errorf("spec hash %q, want %q", got.Annotations[workv1alpha1.AnnotationSpecHash], want)
	}
	if got.Annotations[workv1alpha1.AnnotationUpdatedAt] != now.Format(time.RFC3339) {
		t.Errorf("updatedAt %q, want %s: the adopted work was created earlier", got.Annotations[workv1alpha1.AnnotationUpdatedAt], now.Format(time.RFC3339))
	}

	// An update refused as stale: the op's first write stamped updatedAt on what it wrote, not on the desired
	// work, so the work as it is now, carrying the template since an earlier write, is not written again.
	stale := writeOp{cluster: "c1", desired: planned(), existing: other, templateChange: true}
	if w := stale.written(now); w.Annotations[workv1alpha1.AnnotationUpdatedAt] != now.Format(time.RFC3339) {
		t.Fatalf("the template update carries updatedAt %q", w.Annotations[workv1alpha1.AnnotationUpdatedAt])
	}
	if v, ok := stale.desired.Annotations[workv1alpha1.AnnotationUpdatedAt]; ok {
		t.Errorf("written stamped updatedAt %q on the desired work", v)
	}
	current := planned()
	current.Annotations[workv1alpha1.AnnotationUpdatedAt] = now.Add(-time.Minute).Format(time.RFC3339)
	if got := adoptUpdate(current, stale, now); got != nil {
		t.Errorf("a work carrying the template is written again after a stale update:\n%+v", got.Annotations)
	}
}
