package controllers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/failover"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// TestDesiredState covers what only envtest reached before: failover shares, the check of the works' shares
// after a restart, and an invalid split.
func TestDesiredState(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	const key = "Deployment.apps default/web .spec.replicas"
	splitPMW := func(replicas int) *workv1alpha1.PlacementManifestWork {
		p := framework.MakePMW("web", "ns").Manifest(framework.Deployment("web", "default", replicas)).
			Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit,
				Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
		p.UID = "uid"
		p.Spec.Failover = &workv1alpha1.FailoverPolicy{GracePeriod: &metav1.Duration{Duration: time.Minute}}
		return p
	}
	// degraded is a work its agent reports degraded for its current generation.
	degraded := func() *workv1.ManifestWork {
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
		framework.WorkConditions(w, map[string]metav1.ConditionStatus{workv1.WorkApplied: metav1.ConditionTrue, workv1.WorkDegraded: metav1.ConditionTrue})
		return w
	}
	withStatus := func(p *workv1alpha1.PlacementManifestWork, splits ...workv1alpha1.SplitStatus) *workv1alpha1.PlacementManifestWork {
		p.Status.Splits = splits
		return p
	}
	splitStatus := func(placed int32, shares ...workv1alpha1.ShareCount) workv1alpha1.SplitStatus {
		return workv1alpha1.SplitStatus{Name: "web", Namespace: "default", Group: "apps", Kind: "Deployment",
			FieldPath: ".spec.replicas", Total: 6, Placed: placed, Shares: shares}
	}

	cases := map[string]struct {
		pmw         *workv1alpha1.PlacementManifestWork
		owned       map[string]*workv1.ManifestWork
		shares      map[string]map[string]int32
		mem         remembered
		kinds       *health.Interpreters
		wantShares  map[string]int32
		wantFailed  map[string]bool
		wantDropped bool
		wantRecheck time.Duration
		wantInvalid string
	}{
		"a degraded cluster is failed over once its unbroken spell lasts the grace period": {
			pmw:        splitPMW(6),
			owned:      map[string]*workv1.ManifestWork{"c": degraded()},
			mem:        remembered{failover: map[string]failover.State{"c": {UnhealthySince: now.Add(-time.Minute)}}, deliveredKnown: true},
			wantShares: map[string]int32{"a": 3, "b": 3, "c": 0},
			wantFailed: map[string]bool{"c": true},
		},
		"within the grace period it keeps its share, and time alone changes that": {
			pmw:         splitPMW(6),
			owned:       map[string]*workv1.ManifestWork{"c": degraded()},
			mem:         remembered{failover: map[string]failover.State{"c": {UnhealthySince: now.Add(-20 * time.Second)}}, deliveredKnown: true},
			wantShares:  map[string]int32{"a": 2, "b": 2, "c": 2},
			wantFailed:  map[string]bool{},
			wantRecheck: 40 * time.Second,
		},
		"after a restart the works' shares stand in when they reproduce the status": {
			pmw:        withStatus(splitPMW(6), splitStatus(6, workv1alpha1.ShareCount{Share: 2, Clusters: 3})),
			shares:     map[string]map[string]int32{"a": {key: 2}, "b": {key: 2}, "c": {key: 2}},
			wantShares: map[string]int32{"a": 2, "b": 2, "c": 2},
			wantFailed: map[string]bool{},
		},
		"after a restart a forged share is caught and the division starts afresh": {
			pmw:         withStatus(splitPMW(6), splitStatus(6, workv1alpha1.ShareCount{Share: 2, Clusters: 3})),
			shares:      map[string]map[string]int32{"a": {key: 6}, "b": {key: 2}, "c": {key: 2}},
			wantShares:  map[string]int32{"a": 2, "b": 2, "c": 2},
			wantFailed:  map[string]bool{},
			wantDropped: true,
		},
		"a split field that is not an integer is invalid": {
			pmw: func() *workv1alpha1.PlacementManifestWork {
				p := splitPMW(6)
				p.Spec.DistributionStrategy[0].Split.FieldPath = ".spec.paused"
				return p
			}(),
			mem:         remembered{deliveredKnown: true},
			wantInvalid: workv1alpha1.ReasonInvalidSplitField,
		},
		"a weights clusterSelector that does not parse is an invalid spec, not a weight of 0": {
			pmw: func() *workv1alpha1.PlacementManifestWork {
				p := splitPMW(6)
				p.Spec.DistributionStrategy[0].Split = &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitWeighted, Weights: []workv1alpha1.ClusterWeight{{
					ClusterSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: "tier", Operator: metav1.LabelSelectorOpExists, Values: []string{"big"}}}},
					Weight: 1}}}
				return p
			}(),
			mem:         remembered{deliveredKnown: true},
			wantInvalid: workv1alpha1.ReasonInvalidSpec,
		},
		"a webhook that does not revise the replicas keeps what was delivered, and is asked again later": {
			pmw: splitPMW(6),
			mem: remembered{deliveredKnown: true},
			kinds: func() *health.Interpreters {
				k := health.NewInterpreters()
				k.Add(schema.GroupKind{Group: "apps", Kind: "Deployment"}, nil, unansweredReviser{health.Builtin(schema.GroupKind{Group: "apps", Kind: "Deployment"})})
				return k
			}(),
			wantInvalid: workv1alpha1.ReasonInterpreterFailed,
			wantRecheck: interpreterRetry,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			manifests, err := planner.ParseTemplate(tc.pmw)
			if err != nil {
				t.Fatal(err)
			}
			in := &inputs{placementFound: true, clusters: []string{"a", "b", "c"}, owned: tc.owned, shares: tc.shares, template: manifests, kinds: tc.kinds}
			d, invalid, recheck, err := desiredState(tc.pmw, in, tc.mem, now)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantInvalid != "" {
				if invalid == nil || invalid.Reason != tc.wantInvalid {
					t.Fatalf("invalid = %v, want reason %s", invalid, tc.wantInvalid)
				}
				if recheck != tc.wantRecheck {
					t.Errorf("recheck = %v, want %v", recheck, tc.wantRecheck)
				}
				return
			}
			if invalid != nil {
				t.Fatalf("invalid: %v", invalid)
			}
			got := map[string]int32{}
			for c, s := range d.plan.Shares {
				got[c] = s[key]
			}
			if diff := cmp.Diff(tc.wantShares, got); diff != "" {
				t.Errorf("shares (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFailed, d.failedOver); diff != "" {
				t.Errorf("failed over (-want +got):\n%s", diff)
			}
			if d.sharesDropped != tc.wantDropped {
				t.Errorf("sharesDropped = %v, want %v", d.sharesDropped, tc.wantDropped)
			}
			if recheck != tc.wantRecheck {
				t.Errorf("recheck = %v, want %v", recheck, tc.wantRecheck)
			}
		})
	}
}

// unansweredReviser is an interpreter whose webhook does not answer ReviseReplica under a Fail policy.
type unansweredReviser struct{ health.Interpreter }

func (unansweredReviser) ReviseReplicas(template.Manifest, int32) (map[string]any, bool, error) {
	return nil, false, errors.New("webhook ReviseReplica: timed out after 10s")
}

// TestSharesRecordedAfterRestart: after a restart whose works' shares annotations do not match the status, the
// division starts afresh, and the record of the shares delivered after that reconcile covers every decided
// cluster, not only the works it rewrote: the status counts the clusters whose share did not change, and later
// divisions (a failover, a tie) start from every cluster's share.
func TestSharesRecordedAfterRestart(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	const key = "Deployment.apps default/web .spec.replicas"
	p := framework.MakePMW("web", "ns").Placement("p").Manifest(framework.Deployment("web", "default", 6)).
		Strategy(workv1alpha1.DistributionStrategy{Name: "web", Namespace: "default", Type: workv1alpha1.DistributionSplit,
			Split: &workv1alpha1.SplitStrategy{Type: workv1alpha1.SplitBalance}}).Obj()
	p.UID = "uid"
	p.Status.Splits = []workv1alpha1.SplitStatus{{Name: "web", Namespace: "default", Group: "apps", Kind: "Deployment",
		FieldPath: ".spec.replicas", Total: 6, Placed: 6, Shares: []workv1alpha1.ShareCount{{Share: 2, Clusters: 3}}}}
	clusters := []string{"a", "b", "c"}
	owned, _, _ := plannedWorks(t, p, clusters...)
	// a's agent claims all 6 replicas as its share.
	owned["a"].Annotations[workv1alpha1.AnnotationShares] = `{"` + key + `":6}`
	manifests, err := planner.ParseTemplate(p)
	if err != nil {
		t.Fatal(err)
	}
	decision := decisionOf(clusters...)
	obs := &observation{inputs: inputs{placementName: "p", placementFound: true,
		placement: &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}},
		decisions: []clusterv1beta1.PlacementDecision{decision}, clusters: clusters, owned: owned,
		shares: ownedShares(owned), template: manifests, workName: manifestwork.WorkName(manifestwork.Owner(p))}}

	// A restarted manager: nothing in memory.
	r := &PlacementManifestWorkReconciler{Now: func() time.Time { return now }}
	wp, _, err := r.decide(context.Background(), p, obs)
	if err != nil || wp == nil {
		t.Fatalf("decide: %v, plan %v", err, wp)
	}
	if !obs.sharesDropped {
		t.Fatal("the forged share is not caught")
	}
	// The writes, as the API server takes them.
	obs.written = map[string]*workv1.ManifestWork{}
	var writes []string
	for _, op := range wp.ops {
		writes = append(writes, op.cluster)
		obs.written[op.cluster] = op.written(now)
	}
	if diff := cmp.Diff([]string{"a"}, writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}

	record := map[string]int32{}
	for c, s := range delivered(obs) {
		record[c] = s[key]
	}
	if diff := cmp.Diff(map[string]int32{"a": 2, "b": 2, "c": 2}, record); diff != "" {
		t.Errorf("shares recorded as delivered (-want +got):\n%s", diff)
	}
	st := computeStatus(p, obs)
	if len(st.Splits) != 1 {
		t.Fatalf("status.splits = %+v", st.Splits)
	}
	if got := st.Splits[0]; got.Placed != 6 || !cmp.Equal(got.Shares, []workv1alpha1.ShareCount{{Share: 2, Clusters: 3}}) {
		t.Errorf("status.splits[0] placed %d shares %+v, want 6 and 3 clusters of 2", got.Placed, got.Shares)
	}
}
