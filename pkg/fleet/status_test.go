package fleet

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/text"
)

var (
	t0    = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	t0m   = metav1.NewTime(t0)
	later = t0.Add(time.Hour)
)

// fb builds feedback from name, value pairs (ints and strings).
func fb(pairs ...any) health.Feedback {
	f := health.Feedback{}
	for i := 0; i < len(pairs); i += 2 {
		name := pairs[i].(string)
		switch x := pairs[i+1].(type) {
		case int:
			n := int64(x)
			f[name] = workv1.FieldValue{Type: workv1.Integer, Integer: &n}
		case string:
			s := x
			f[name] = workv1.FieldValue{Type: workv1.String, String: &s}
		}
	}
	return f
}

// replicasReport is a cluster that carries the current manifest, observed it (spoke generation 2) and reports
// these counts; healthy when they are all spec.
func replicasReport(cluster string, spec, replicas, updated, ready, available int, extra ...any) ClusterReport {
	r := ClusterReport{Cluster: cluster, CarriesCurrent: true, Applied: true, Available: true,
		Feedback: fb(append([]any{health.SpecReplicas, spec, health.Replicas, replicas, health.UpdatedReplicas, updated,
			health.ReadyReplicas, ready, health.AvailableReplicas, available, health.Generation, 2, health.ObservedGeneration, 2}, extra...)...),
		Health: health.Verdict{State: health.Healthy}}
	if updated < spec || replicas > updated || available < spec {
		r.Health = health.Verdict{State: health.Progressing, Message: "rolling"}
	}
	return r
}

func stale(r ClusterReport) ClusterReport { r.CarriesCurrent = false; return r }

func unobserved(r ClusterReport) ClusterReport {
	r.Feedback[health.ObservedGeneration] = fb(health.ObservedGeneration, 1)[health.ObservedGeneration]
	return r
}

func leaving(r ClusterReport) ClusterReport { r.Leaving = true; return r }

func missing(cluster string) ClusterReport {
	return ClusterReport{Cluster: cluster, Health: health.Verdict{State: health.Progressing, Message: "no ManifestWork yet"}}
}

// away is r reported by a cluster whose ManagedCluster is not available (r is the agent's last report).
func away(r ClusterReport) ClusterReport {
	r.Unavailable = true
	r.Health = health.Verdict{State: health.Degraded, Reason: workv1alpha1.ReasonClusterUnavailable, Message: "the ManagedCluster's availability is Unknown"}
	return r
}

func degradedBy(r ClusterReport, msg string) ClusterReport {
	r.Health = health.Verdict{State: health.Degraded, Message: msg}
	return r
}

// web is the fleet Deployment: generation 4, spec.replicas 6, observedGeneration 3 from the last rollout.
func web(fields ...any) *unstructured.Unstructured {
	return deployment("web", append([]any{"metadata.generation", 4, "spec.replicas", 6, "status.observedGeneration", 3}, fields...)...)
}

func dcond(t appsv1.DeploymentConditionType, s corev1.ConditionStatus, reason, msg string) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: t, Status: s, Reason: reason, Message: msg, LastUpdateTime: t0m, LastTransitionTime: t0m}
}

var (
	available   = dcond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable", "Deployment has minimum availability.")
	unavailable = dcond(appsv1.DeploymentAvailable, corev1.ConditionFalse, "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
)

func progressed(n int) appsv1.DeploymentCondition {
	return dcond(appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable",
		fmt.Sprintf("Deployment \"web\" has successfully progressed on %s.", text.Count(n, "cluster", "clusters")))
}

// progressing is the Progressing condition of web while its 6 replicas roll out.
func progressing(updated, avail, current, n int) appsv1.DeploymentCondition {
	return dcond(appsv1.DeploymentProgressing, corev1.ConditionTrue, "ReplicaSetUpdated",
		fmt.Sprintf("Deployment \"web\" is progressing: %d of 6 replicas updated and %d available; %d of %s on generation 4.",
			updated, avail, current, text.Count(n, "cluster", "clusters")))
}

func TestDeploymentStatus(t *testing.T) {
	cases := map[string]struct {
		obj           *unstructured.Unstructured
		clusters      []ClusterReport
		want          appsv1.DeploymentStatus
		wantRolledOut bool
		wantErr       error
		wantAvailable bool // kubectl wait --for=condition=Available
		wantEvents    []Event
	}{
		"rolled out on both clusters": {
			obj:      web(),
			clusters: []ClusterReport{replicasReport("eu-2", 3, 3, 3, 3, 3), replicasReport("eu-1", 3, 3, 3, 3, 3)},
			want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 6, UpdatedReplicas: 6, ReadyReplicas: 6, AvailableReplicas: 6,
				Conditions: []appsv1.DeploymentCondition{available, progressed(2)}},
			wantRolledOut: true, wantAvailable: true,
		},
		"a cluster still on the previous template holds observedGeneration back": {
			obj:      web(),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3), stale(replicasReport("eu-2", 3, 3, 0, 3, 3))},
			want: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 6, UpdatedReplicas: 3, ReadyReplicas: 6, AvailableReplicas: 6,
				Conditions: []appsv1.DeploymentCondition{available, progressing(3, 6, 1, 2)}},
			wantEvents: []Event{{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-2: 3 of 3 ready", Cluster: "eu-2"}},
		},
		"a cluster that carries it but whose controller has not observed it holds observedGeneration back": {
			obj:      web(),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3), unobserved(replicasReport("eu-2", 3, 3, 3, 3, 3))},
			want: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 6, UpdatedReplicas: 3, ReadyReplicas: 6, AvailableReplicas: 6,
				Conditions: []appsv1.DeploymentCondition{available, progressing(3, 6, 1, 2)}},
		},
		"a move: the leaving clusters' replicas keep it available while the new cluster starts": {
			obj: web("status.observedGeneration", 4), // a move changes no generation
			clusters: []ClusterReport{leaving(replicasReport("eu-1", 3, 3, 3, 3, 3)), leaving(replicasReport("eu-2", 3, 3, 3, 3, 3)),
				missing("us-1")},
			want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 6, UpdatedReplicas: 0, ReadyReplicas: 6, AvailableReplicas: 6,
				Conditions: []appsv1.DeploymentCondition{available, progressing(0, 6, 0, 1)}},
			wantAvailable: true,
			wantEvents:    []Event{{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster us-1: no ManifestWork yet", Cluster: "us-1"}},
		},
		"no cluster selected while the clusters it leaves still serve": {
			obj:      web("status.observedGeneration", 4),
			clusters: []ClusterReport{leaving(replicasReport("eu-1", 6, 6, 6, 6, 6))},
			want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 6, ReadyReplicas: 6, AvailableReplicas: 6,
				Conditions: []appsv1.DeploymentCondition{available, progressing(0, 6, 0, 0)}},
			wantAvailable: true,
			wantEvents: []Event{{Type: corev1.EventTypeWarning, Reason: EventNoClusters,
				Message: "no cluster is selected: only the 1 cluster it is leaving still runs it; check the namespace's placement and the ManagedClusterSets bound to it"}},
		},
		"a move half done: the old replicas pending termination are the leaving clusters'": {
			obj:      web("status.observedGeneration", 4),
			clusters: []ClusterReport{leaving(replicasReport("eu-1", 3, 3, 3, 3, 3)), replicasReport("us-1", 6, 6, 6, 6, 6)},
			want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 9, UpdatedReplicas: 6, ReadyReplicas: 9, AvailableReplicas: 9,
				Conditions: []appsv1.DeploymentCondition{available, progressing(6, 9, 1, 1)}},
			wantAvailable: true,
		},
		"an unavailable cluster's last report counts its replicas, none ready": {
			obj:      web(),
			clusters: []ClusterReport{replicasReport("eu-1", 2, 2, 2, 2, 2), replicasReport("eu-2", 2, 2, 2, 2, 2), away(replicasReport("eu-3", 2, 2, 2, 2, 2))},
			want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 6, UpdatedReplicas: 6, ReadyReplicas: 4, AvailableReplicas: 4,
				UnavailableReplicas: 2, Conditions: []appsv1.DeploymentCondition{unavailable, progressing(6, 4, 3, 3)}},
			wantEvents: []Event{{Type: corev1.EventTypeWarning, Reason: EventClusterDegraded,
				Message: "cluster eu-3: 0 of 2 ready: the ManagedCluster's availability is Unknown", Cluster: "eu-3"}},
		},
		"unavailable without a verdict from the manager is degraded all the same": {
			obj: web(),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3),
				func() ClusterReport { r := replicasReport("eu-2", 3, 3, 3, 3, 3); r.Unavailable = true; return r }()},
			want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 6, UpdatedReplicas: 6, ReadyReplicas: 3, AvailableReplicas: 3,
				UnavailableReplicas: 3, Conditions: []appsv1.DeploymentCondition{unavailable, progressing(6, 3, 2, 2)}},
			wantEvents: []Event{{Type: corev1.EventTypeWarning, Reason: EventClusterDegraded,
				Message: "cluster eu-2: 0 of 3 ready: the ManagedCluster is not available", Cluster: "eu-2"}},
		},
		"a leaving cluster held while it is away counts none ready, and has no event": {
			obj:      web("status.observedGeneration", 4),
			clusters: []ClusterReport{leaving(away(replicasReport("eu-1", 3, 3, 3, 3, 3))), replicasReport("us-1", 6, 6, 6, 6, 6)},
			want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 9, UpdatedReplicas: 6, ReadyReplicas: 6, AvailableReplicas: 6,
				UnavailableReplicas: 3, Conditions: []appsv1.DeploymentCondition{available, progressing(6, 6, 1, 1)}},
			wantAvailable: true,
		},
		"a cluster without a work yet counts as 0 ready": {
			obj:      web(),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3), missing("eu-2")},
			want: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3,
				UnavailableReplicas: 3, Conditions: []appsv1.DeploymentCondition{unavailable, progressing(3, 3, 1, 2)}},
			wantEvents: []Event{{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-2: no ManifestWork yet", Cluster: "eu-2"}},
		},
		"a cluster's surplus is old replicas pending termination, not a share of another's": {
			obj:      web(),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 4, 4, 4, 4), replicasReport("eu-2", 3, 2, 2, 2, 2)},
			want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 6, UpdatedReplicas: 5, ReadyReplicas: 6, AvailableReplicas: 6,
				Conditions: []appsv1.DeploymentCondition{available, progressing(5, 6, 2, 2)}},
			wantAvailable: true,
			wantEvents:    []Event{{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-2: 2 of 3 ready", Cluster: "eu-2"}},
		},
		"a rollout that timed out on one cluster makes kubectl rollout status fail": {
			obj: web(),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3),
				degradedBy(replicasReport("eu-2", 3, 3, 1, 2, 2, health.ProgressingReason, "ProgressDeadlineExceeded"), "progress deadline exceeded")},
			want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 6, UpdatedReplicas: 4, ReadyReplicas: 5, AvailableReplicas: 5,
				UnavailableReplicas: 1, Conditions: []appsv1.DeploymentCondition{available,
					dcond(appsv1.DeploymentProgressing, corev1.ConditionFalse, "ProgressDeadlineExceeded", `Deployment "web" has timed out progressing on 1 cluster eu-2.`)}},
			wantErr: errTimedOut, wantAvailable: true,
			wantEvents: []Event{{Type: corev1.EventTypeWarning, Reason: EventClusterDegraded, Message: "cluster eu-2: 2 of 3 ready: progress deadline exceeded", Cluster: "eu-2"}},
		},
		"a cluster that cannot create pods sets ReplicaFailure": {
			obj: web(),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3),
				degradedBy(replicasReport("eu-2", 3, 0, 0, 0, 0, health.ReplicaFailure, "True", health.ReplicaFailureMessage, "exceeded quota"), "replica failure")},
			want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3,
				UnavailableReplicas: 3, Conditions: []appsv1.DeploymentCondition{unavailable, progressing(3, 3, 2, 2),
					dcond(appsv1.DeploymentReplicaFailure, corev1.ConditionTrue, "FailedCreate", "cluster eu-2: exceeded quota")}},
			wantEvents: []Event{{Type: corev1.EventTypeWarning, Reason: EventClusterDegraded, Message: "cluster eu-2: 0 of 3 ready: replica failure", Cluster: "eu-2"}},
		},
		"replicated: spec.replicas is per cluster, so observedGeneration waits for every cluster": {
			obj:      annotated(web("spec.replicas", 3), workv1alpha1.AnnotationFleetDistribution, "Replicate"),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3), replicasReport("eu-2", 3, 0, 0, 0, 0)},
			want: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3,
				UnavailableReplicas: 3, Conditions: []appsv1.DeploymentCondition{unavailable, progressing(3, 3, 2, 2)}},
			wantEvents: []Event{{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-2: 0 of 3 ready", Cluster: "eu-2"}},
		},
		"replicated and rolled out everywhere: the fleet runs spec.replicas per cluster": {
			obj:      annotated(web("spec.replicas", 3), workv1alpha1.AnnotationFleetDistribution, "Replicate"),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3), replicasReport("eu-2", 3, 3, 3, 3, 3)},
			want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 6, UpdatedReplicas: 6, ReadyReplicas: 6, AvailableReplicas: 6,
				Conditions: []appsv1.DeploymentCondition{available, progressed(2)}},
			wantRolledOut: true, wantAvailable: true,
		},
		"no cluster selected: never rolled out, and observedGeneration held": {
			obj: web(),
			want: appsv1.DeploymentStatus{ObservedGeneration: 3, UnavailableReplicas: 6,
				Conditions: []appsv1.DeploymentCondition{unavailable, progressing(0, 0, 0, 0)}},
			wantEvents: []Event{{Type: corev1.EventTypeWarning, Reason: EventNoClusters,
				Message: "no cluster is selected: nothing runs; check the namespace's placement and the ManagedClusterSets bound to it"}},
		},
		"maxUnavailable 25% of 6 is 1: 5 available is minimum availability": {
			obj:      web(),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3), replicasReport("eu-2", 3, 3, 3, 3, 2)},
			want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 6, UpdatedReplicas: 6, ReadyReplicas: 6, AvailableReplicas: 5,
				UnavailableReplicas: 1, Conditions: []appsv1.DeploymentCondition{available, progressing(6, 5, 2, 2)}},
			wantAvailable: true,
			wantEvents:    []Event{{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-2: 3 of 3 ready", Cluster: "eu-2"}},
		},
		"Recreate: every replica must be available": {
			obj:      web("spec.strategy.type", "Recreate"),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3), replicasReport("eu-2", 3, 3, 3, 3, 2)},
			want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 6, UpdatedReplicas: 6, ReadyReplicas: 6, AvailableReplicas: 5,
				UnavailableReplicas: 1, Conditions: []appsv1.DeploymentCondition{unavailable, progressing(6, 5, 2, 2)}},
			wantEvents: []Event{{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-2: 3 of 3 ready", Cluster: "eu-2"}},
		},
		"maxUnavailable 2 of 6 as a number": {
			obj:      web("spec.strategy.rollingUpdate.maxUnavailable", 2),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 2), replicasReport("eu-2", 3, 3, 3, 3, 2)},
			want: appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 6, UpdatedReplicas: 6, ReadyReplicas: 6, AvailableReplicas: 4,
				UnavailableReplicas: 2, Conditions: []appsv1.DeploymentCondition{available, progressing(6, 4, 2, 2)}},
			wantAvailable: true,
			wantEvents: []Event{
				{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-1: 3 of 3 ready", Cluster: "eu-1"},
				{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-2: 3 of 3 ready", Cluster: "eu-2"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			status, events := Status(tc.obj, tc.clusters, t0)
			fleetObj := withStatus(tc.obj, status)
			got := typed[appsv1.Deployment](t, fleetObj).Status
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			done, err := deploymentRolloutStatus(t, fleetObj)
			if done != tc.wantRolledOut || err != tc.wantErr { //nolint:errorlint // the transcription returns the sentinel itself
				t.Errorf("kubectl rollout status = %v, %v; want %v, %v", done, err, tc.wantRolledOut, tc.wantErr)
			}
			if got := conditionTrue(fleetObj, "Available"); got != tc.wantAvailable {
				t.Errorf("kubectl wait --for=condition=Available = %v, want %v", got, tc.wantAvailable)
			}
			checkAtRest(t, tc.obj, status, tc.clusters)
		})
	}
}

// checkAtRest: the status computed again later, from the same reports and with the status written, is the
// same, so the controller never writes at rest.
func checkAtRest(t *testing.T, o *unstructured.Unstructured, status map[string]any, clusters []ClusterReport) {
	t.Helper()
	again, _ := Status(withStatus(o, status), clusters, later)
	if diff := cmp.Diff(status, again); diff != "" {
		t.Errorf("the same reports an hour later change the status (-first +again):\n%s", diff)
	}
}

// TestConditionTimes: a condition that changes status gets a new lastTransitionTime; one that keeps its status
// but changes its message keeps it and gets a new lastUpdateTime.
func TestConditionTimes(t *testing.T) {
	rolling := []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3), replicasReport("eu-2", 3, 3, 1, 3, 3)}
	first, _ := Status(web(), rolling, t0)
	rolling[1] = replicasReport("eu-2", 3, 3, 2, 3, 3)
	second, _ := Status(withStatus(web(), first), rolling, later)
	done := []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3), replicasReport("eu-2", 3, 3, 3, 3, 3)}
	third, _ := Status(withStatus(web(), second), done, later.Add(time.Hour))
	conds := func(s map[string]any) map[string]appsv1.DeploymentCondition {
		out := map[string]appsv1.DeploymentCondition{}
		for _, c := range typed[appsv1.Deployment](t, withStatus(web(), s)).Status.Conditions {
			out[string(c.Type)] = c
		}
		return out
	}
	c1, c2, c3 := conds(first), conds(second), conds(third)
	if c2["Available"] != c1["Available"] {
		t.Errorf("Available unchanged but its times moved: %+v -> %+v", c1["Available"], c2["Available"])
	}
	if !c2["Progressing"].LastTransitionTime.Time.Equal(t0) || !c2["Progressing"].LastUpdateTime.Time.Equal(later) {
		t.Errorf("Progressing with a new message: %+v, want transition %v and update %v", c2["Progressing"], t0, later)
	}
	if c3["Progressing"].Reason != "NewReplicaSetAvailable" || !c3["Progressing"].LastTransitionTime.Time.Equal(t0) {
		t.Errorf("Progressing done, still True: %+v, want transition %v", c3["Progressing"], t0)
	}
}

// shareOf is cluster c's share of d replicas over n clusters: all of them replicated, else d/n with the
// remainder to the first clusters.
func shareOf(d, n, c int, split bool) int {
	if !split {
		return d
	}
	share := d / n
	if c < d%n {
		share++
	}
	return share
}

// TestRolloutStatusExactly: over random fleets, kubectl rollout status against the fleet object succeeds exactly
// when every cluster carries the new generation, its controller observed it, kubectl rollout status on the
// cluster would succeed and the cluster runs no more than its share (and the shares add up to spec.replicas:
// an object with no cluster runs nothing); it fails exactly when a cluster's rollout timed out; kubectl wait --for=condition=Available waits
// for the new generation too. Statuses always decode and keep status validation's invariants, and are at rest.
func TestRolloutStatusExactly(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for i := range 3000 {
		n, d := r.IntN(4), r.IntN(8)
		split := r.IntN(3) > 0
		o := web("spec.replicas", d)
		if !split {
			o = annotated(o, workv1alpha1.AnnotationFleetDistribution, "Replicate")
		}
		var clusters []ClusterReport
		all, timedOut := true, false
		for c := range n {
			spec := shareOf(d, n, c, split)
			name := fmt.Sprintf("c%d", c)
			if r.IntN(10) == 0 {
				clusters = append(clusters, missing(name))
				all = false
				continue
			}
			replicas := r.IntN(spec + 3)
			updated := r.IntN(replicas + 1)
			ready := r.IntN(replicas + 1)
			avail := r.IntN(ready + 1)
			if r.IntN(2) == 0 { // often rolled out
				replicas, updated, ready, avail = spec, spec, spec, spec
			}
			rep := replicasReport(name, spec, replicas, updated, ready, avail)
			if r.IntN(8) == 0 { // its ManagedCluster is not available: its last report counts none ready
				rep, avail = away(rep), 0
			}
			// kubectl rollout status on the cluster, and no surplus: a replica beyond the cluster's share is one
			// pending termination, for the fleet as for the cluster's deployment controller.
			rolled := updated >= spec && replicas <= updated && avail >= updated && replicas <= spec
			carries, observed := r.IntN(5) > 0, r.IntN(5) > 0
			if !carries {
				rep = stale(rep)
			}
			if !observed {
				rep = unobserved(rep)
			}
			if carries && observed && !rolled && r.IntN(6) == 0 {
				rep.Feedback[health.ProgressingReason] = fb(health.ProgressingReason, "ProgressDeadlineExceeded")[health.ProgressingReason]
				timedOut = true
			}
			all = all && carries && observed && rolled
			clusters = append(clusters, rep)
		}
		if n == 0 {
			all = false // with no cluster selected nothing runs, whatever the replicas: never done
		}
		status, _ := Status(o, clusters, t0)
		fleetObj := withStatus(o, status)
		done, err := deploymentRolloutStatus(t, fleetObj)
		if timedOut {
			if err == nil {
				t.Fatalf("case %d: a cluster timed out but kubectl rollout status = %v, nil\nclusters: %+v\nstatus: %v", i, done, clusters, status)
			}
		} else if err != nil || done != all {
			t.Fatalf("case %d (split %v, %d replicas): kubectl rollout status = %v, %v; every cluster rolled out: %v\nclusters: %+v\nstatus: %v",
				i, split, d, done, err, all, clusters, status)
		}
		got := typed[appsv1.Deployment](t, fleetObj).Status
		if got.UpdatedReplicas > got.Replicas || got.ReadyReplicas > got.Replicas || got.AvailableReplicas > got.ReadyReplicas ||
			got.ObservedGeneration > 4 || got.ObservedGeneration < 3 {
			t.Fatalf("case %d: status breaks validation's invariants: %+v", i, got)
		}
		if conditionTrue(fleetObj, "Available") && got.ObservedGeneration < 4 {
			t.Fatalf("case %d: kubectl wait returns before the new generation is observed", i)
		}
		checkAtRest(t, o, status, clusters)
	}
}

func sts(fields ...any) *unstructured.Unstructured {
	return obj("apps/v1", "StatefulSet", "db", append([]any{"metadata.generation", 4, "spec.replicas", 6, "status.observedGeneration", 3,
		"spec.updateStrategy.type", "RollingUpdate"}, fields...)...)
}

func TestStatefulSetStatus(t *testing.T) {
	cases := map[string]struct {
		obj           *unstructured.Unstructured
		clusters      []ClusterReport
		want          appsv1.StatefulSetStatus
		wantRolledOut bool
	}{
		"rolled out": {
			obj:      sts(),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3), replicasReport("eu-2", 3, 3, 3, 3, 3)},
			want: appsv1.StatefulSetStatus{ObservedGeneration: 4, Replicas: 6, ReadyReplicas: 6, AvailableReplicas: 6, UpdatedReplicas: 6,
				CurrentReplicas: 6, CurrentRevision: "db-4", UpdateRevision: "db-4"},
			wantRolledOut: true,
		},
		"rolling: the current revision stays the previous one": {
			obj:      sts("status.currentRevision", "db-3"),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3), replicasReport("eu-2", 3, 3, 1, 3, 3)},
			want: appsv1.StatefulSetStatus{ObservedGeneration: 4, Replicas: 6, ReadyReplicas: 6, AvailableReplicas: 6, UpdatedReplicas: 4,
				CurrentReplicas: 2, CurrentRevision: "db-3", UpdateRevision: "db-4"},
		},
		"a cluster's surplus of ready replicas does not make up for another's shortage": {
			obj:      sts("status.currentRevision", "db-3"),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 4, 4, 4, 4), replicasReport("eu-2", 3, 3, 3, 2, 2)},
			want: appsv1.StatefulSetStatus{ObservedGeneration: 4, Replicas: 7, ReadyReplicas: 5, AvailableReplicas: 5, UpdatedReplicas: 6,
				CurrentReplicas: 1, CurrentRevision: "db-3", UpdateRevision: "db-4"},
		},
		"a missing cluster holds observedGeneration back": {
			obj:      sts(),
			clusters: []ClusterReport{replicasReport("eu-1", 3, 3, 3, 3, 3), missing("eu-2")},
			want: appsv1.StatefulSetStatus{ObservedGeneration: 3, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3,
				UpdateRevision: "db-4"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			status, _ := Status(tc.obj, tc.clusters, t0)
			fleetObj := withStatus(tc.obj, status)
			if diff := cmp.Diff(tc.want, typed[appsv1.StatefulSet](t, fleetObj).Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			for _, variant := range []*unstructured.Unstructured{fleetObj, withPartition(fleetObj)} {
				if done, err := statefulSetRolloutStatus(t, variant); done != tc.wantRolledOut || err != nil {
					t.Errorf("kubectl rollout status = %v, %v; want %v", done, err, tc.wantRolledOut)
				}
			}
			checkAtRest(t, tc.obj, status, tc.clusters)
		})
	}
}

// withPartition is the StatefulSet as an API server that defaults it stores it: rollingUpdate.partition 0.
func withPartition(o *unstructured.Unstructured) *unstructured.Unstructured {
	c := o.DeepCopy()
	_ = unstructured.SetNestedField(c.Object, int64(0), "spec", "updateStrategy", "rollingUpdate", "partition")
	return c
}

// TestStatefulSetRolloutStatusExactly is TestRolloutStatusExactly for StatefulSets, as an API server that
// defaults rollingUpdate.partition stores them and as one that does not (kubectl then compares revisions).
func TestStatefulSetRolloutStatusExactly(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for i := range 3000 {
		n, d := r.IntN(4), r.IntN(8)
		split := r.IntN(3) > 0
		o := sts("spec.replicas", d)
		if !split {
			o = annotated(o, workv1alpha1.AnnotationFleetDistribution, "Replicate")
		}
		var clusters []ClusterReport
		all := n > 0 // with no cluster selected nothing runs: never done
		for c := range n {
			spec := shareOf(d, n, c, split)
			name := fmt.Sprintf("c%d", c)
			if r.IntN(10) == 0 {
				clusters = append(clusters, missing(name))
				all = false
				continue
			}
			replicas := r.IntN(spec + 3)
			updated, ready := r.IntN(replicas+1), r.IntN(replicas+1)
			if r.IntN(2) == 0 {
				replicas, updated, ready = spec, spec, spec
			}
			rep := replicasReport(name, spec, replicas, updated, ready, r.IntN(ready+1))
			carries, observed := r.IntN(5) > 0, r.IntN(5) > 0
			if !carries {
				rep = stale(rep)
			}
			if !observed {
				rep = unobserved(rep)
			}
			all = all && carries && observed && ready >= spec && updated >= spec
			clusters = append(clusters, rep)
		}
		status, _ := Status(o, clusters, t0)
		fleetObj := withStatus(o, status)
		for _, variant := range []*unstructured.Unstructured{fleetObj, withPartition(fleetObj)} {
			if done, err := statefulSetRolloutStatus(t, variant); err != nil || done != all {
				t.Fatalf("case %d (split %v, %d replicas): kubectl rollout status = %v, %v; every cluster rolled out: %v\nclusters: %+v\nstatus: %v",
					i, split, d, done, err, all, clusters, status)
			}
		}
		got := typed[appsv1.StatefulSet](t, fleetObj).Status
		if got.UpdatedReplicas > got.Replicas || got.ReadyReplicas > got.Replicas || got.CurrentReplicas > got.Replicas ||
			got.AvailableReplicas > got.ReadyReplicas || got.CurrentReplicas < 0 {
			t.Fatalf("case %d: status breaks validation's invariants: %+v", i, got)
		}
		checkAtRest(t, o, status, clusters)
	}
}

func daemonReport(cluster string, desired, ready, updated, available int) ClusterReport {
	return ClusterReport{Cluster: cluster, CarriesCurrent: true, Applied: true, Available: true, Health: health.Verdict{State: health.Healthy},
		Feedback: fb(health.DesiredNumberScheduled, desired, health.NumberReady, ready, health.UpdatedNumberScheduled, updated,
			health.NumberAvailable, available, health.Generation, 2, health.ObservedGeneration, 2)}
}

func TestDaemonSetStatus(t *testing.T) {
	ds := obj("apps/v1", "DaemonSet", "agent", "metadata.generation", 2, "status.observedGeneration", 1, "spec.updateStrategy.type", "RollingUpdate")
	cases := map[string]struct {
		clusters      []ClusterReport
		want          appsv1.DaemonSetStatus
		wantRolledOut bool
	}{
		"rolled out": {
			clusters: []ClusterReport{daemonReport("eu-1", 3, 3, 3, 3), daemonReport("eu-2", 2, 2, 2, 2)},
			want: appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 5, CurrentNumberScheduled: 5, NumberReady: 5,
				UpdatedNumberScheduled: 5, NumberAvailable: 5},
			wantRolledOut: true,
		},
		"one cluster rolling": {
			clusters: []ClusterReport{daemonReport("eu-1", 3, 3, 3, 3), daemonReport("eu-2", 2, 1, 1, 1)},
			want: appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 5, CurrentNumberScheduled: 5, NumberReady: 4,
				UpdatedNumberScheduled: 4, NumberAvailable: 4, NumberUnavailable: 1},
		},
		"an unavailable cluster's pods are scheduled, none ready": {
			clusters: []ClusterReport{daemonReport("eu-1", 3, 3, 3, 3), away(daemonReport("eu-2", 2, 2, 2, 2))},
			want: appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 5, CurrentNumberScheduled: 5, NumberReady: 3,
				UpdatedNumberScheduled: 5, NumberAvailable: 3, NumberUnavailable: 2},
		},
		"a missing cluster holds observedGeneration back": {
			clusters: []ClusterReport{daemonReport("eu-1", 3, 3, 3, 3), missing("eu-2")},
			want: appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 3,
				UpdatedNumberScheduled: 3, NumberAvailable: 3},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			status, _ := Status(ds, tc.clusters, t0)
			fleetObj := withStatus(ds, status)
			if diff := cmp.Diff(tc.want, typed[appsv1.DaemonSet](t, fleetObj).Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if done, err := daemonSetRolloutStatus(t, fleetObj); done != tc.wantRolledOut || err != nil {
				t.Errorf("kubectl rollout status = %v, %v; want %v", done, err, tc.wantRolledOut)
			}
			checkAtRest(t, ds, status, tc.clusters)
		})
	}
	// Exactly: rolled out when every cluster carries and observed the generation and has every desired pod
	// updated and available.
	r := rand.New(rand.NewPCG(5, 8))
	for i := range 2000 {
		var clusters []ClusterReport
		all := true
		for c := range r.IntN(4) {
			desired := r.IntN(4)
			ready := r.IntN(desired + 2)
			rep := daemonReport(fmt.Sprintf("c%d", c), desired, ready, r.IntN(desired+2), r.IntN(ready+1))
			if r.IntN(2) == 0 {
				rep = daemonReport(fmt.Sprintf("c%d", c), desired, desired, desired, desired)
			}
			if r.IntN(5) == 0 {
				rep = stale(rep)
			}
			if r.IntN(5) == 0 {
				rep = unobserved(rep)
			}
			all = all && current(rep) && rep.Feedback.Count(health.UpdatedNumberScheduled) >= int64(desired) &&
				rep.Feedback.Count(health.NumberAvailable) >= int64(desired)
			clusters = append(clusters, rep)
		}
		all = all && len(clusters) > 0 // with no cluster selected nothing runs: never done
		status, _ := Status(ds, clusters, t0)
		if done, err := daemonSetRolloutStatus(t, withStatus(ds, status)); err != nil || done != all {
			t.Fatalf("case %d: kubectl rollout status = %v, %v; every cluster rolled out: %v\nclusters: %+v\nstatus: %v", i, done, err, all, clusters, status)
		}
	}
}

func TestReplicaSetStatus(t *testing.T) {
	rs := obj("apps/v1", "ReplicaSet", "rs", "metadata.generation", 2, "spec.replicas", 4)
	clusters := []ClusterReport{replicasReport("eu-1", 2, 2, 0, 2, 2),
		degradedBy(replicasReport("eu-2", 2, 1, 0, 1, 0, health.ReplicaFailure, "True", health.ReplicaFailureMessage, "exceeded quota"), "replica failure")}
	status, events := Status(rs, clusters, t0)
	want := appsv1.ReplicaSetStatus{ObservedGeneration: 2, Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 2,
		Conditions: []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
			Message: "cluster eu-2: exceeded quota", LastTransitionTime: t0m}}}
	if diff := cmp.Diff(want, typed[appsv1.ReplicaSet](t, withStatus(rs, status)).Status); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	wantEvents := []Event{
		{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-1: 2 of 2 ready", Cluster: "eu-1"},
		{Type: corev1.EventTypeWarning, Reason: EventClusterDegraded, Message: "cluster eu-2: 1 of 2 ready: replica failure", Cluster: "eu-2"},
	}
	if diff := cmp.Diff(wantEvents, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	checkAtRest(t, rs, status, clusters)
}

func TestOtherKindsHaveNoStatus(t *testing.T) {
	svc := obj("v1", "Service", "web")
	status, events := Status(svc, []ClusterReport{
		{Cluster: "eu-1", CarriesCurrent: true, Applied: true, Available: true, Health: health.Verdict{State: health.Healthy}},
		{Cluster: "eu-2", Applied: true, Health: health.Verdict{State: health.Degraded, Message: "not applied: forbidden"}},
		{Cluster: "eu-3"},
	}, t0)
	if status != nil {
		t.Errorf("status = %v, want none", status)
	}
	want := []Event{
		{Type: corev1.EventTypeWarning, Reason: EventClusterDegraded, Message: "cluster eu-2: not applied: forbidden", Cluster: "eu-2"},
		{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: "cluster eu-3: not applied yet", Cluster: "eu-3"},
	}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// WritesStatus names exactly the kinds Status computes a status for.
func TestWritesStatus(t *testing.T) {
	for _, o := range []*unstructured.Unstructured{
		obj("apps/v1", "Deployment", "a"), obj("apps/v1", "StatefulSet", "a"), obj("apps/v1", "ReplicaSet", "a"),
		obj("apps/v1", "DaemonSet", "a"), obj("batch/v1", "Job", "a"), obj("batch/v1", "CronJob", "a"),
		obj("v1", "Service", "a"), obj("v1", "ConfigMap", "a"), obj("example.io/v1", "Deployment", "a"),
	} {
		status, _ := Status(o, nil, t0)
		if got, want := WritesStatus(o.GroupVersionKind().GroupKind()), status != nil; got != want {
			t.Errorf("WritesStatus(%s) = %v, but Status computes one: %v", o.GroupVersionKind().GroupKind(), got, want)
		}
	}
}
