package health

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// TestWorkManifests: a cluster that a rollout holds on the previous template is judged by the manifests its
// work carries, known from the agent's report alone (the hub's cache drops the work's manifests).
func TestWorkManifests(t *testing.T) {
	T := metav1.ConditionTrue
	// reported is the agent's report of one manifest at ordinal.
	reported := func(ordinal int32, group, kind, resource, name string, values map[string]any) workv1.ManifestCondition {
		mc := status(T, values)
		mc.ResourceMeta = workv1.ManifestResourceMeta{Ordinal: ordinal, Group: group, Version: "v1", Kind: kind, Resource: resource, Name: name, Namespace: "default"}
		return *mc
	}
	deployment := func(ordinal int32, values map[string]any) workv1.ManifestCondition {
		return reported(ordinal, "apps", "Deployment", "deployments", "web", values)
	}
	work := func(configs []workv1.ManifestConfigOption, manifests ...workv1.ManifestCondition) *workv1.ManifestWork {
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
		w.Spec.ManifestConfigs = configs
		for _, ty := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
			w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: ty, Status: T, ObservedGeneration: 4})
		}
		w.Status.ResourceStatus.Manifests = manifests
		return w
	}
	ready2 := map[string]any{Generation: 1, ObservedGeneration: 1, SpecReplicas: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}
	healthyCluster := Verdict{State: Healthy}
	cases := map[string]struct {
		work      *workv1.ManifestWork
		want      Verdict
		manifests []Verdict
	}{
		"deployment judged against its own .spec.replicas": {
			work:      work(nil, deployment(0, ready2)),
			want:      healthyCluster,
			manifests: []Verdict{{State: Healthy}},
		},
		"deployment short of its own .spec.replicas": {
			work: work(nil, deployment(0, with(ready2, SpecReplicas, 3))),
			want: Verdict{State: Progressing, Reason: workv1alpha1.ReasonManifestProgressing, Message: "Deployment.apps default/web: 2 of 3 replicas updated"},
			manifests: []Verdict{
				{State: Progressing, Reason: ReasonRolloutInProgress, Message: "Deployment.apps default/web: 2 of 3 replicas updated"},
			},
		},
		"deployment whose .spec.replicas is not reported": {
			work: work(nil, deployment(0, with(ready2, SpecReplicas, nil))),
			want: Verdict{State: Progressing, Reason: workv1alpha1.ReasonManifestProgressing, Message: "Deployment.apps default/web: waiting for status feedback (.spec.replicas)"},
			manifests: []Verdict{
				{State: Progressing, Reason: ReasonWaitingForFeedback, Message: "Deployment.apps default/web: waiting for status feedback (.spec.replicas)"},
			},
		},
		"statuses matched by the work's own ordinals": {
			work: work(nil,
				reported(1, "", "ConfigMap", "configmaps", "cfg", nil),
				deployment(0, with(ready2, ReadyReplicas, 1)),
			),
			want: Verdict{State: Progressing, Reason: workv1alpha1.ReasonManifestProgressing, Message: "Deployment.apps default/web: 1 of 2 replicas available"},
			manifests: []Verdict{
				{State: Progressing, Reason: ReasonRolloutInProgress, Message: "Deployment.apps default/web: 1 of 2 replicas available"},
				{State: Healthy},
			},
		},
		"a report with a hole: the missing manifest is not reported, the one past the end is dropped": {
			work: work(nil, deployment(0, ready2), reported(2, "", "ConfigMap", "configmaps", "cfg", nil)),
			want: Verdict{State: Progressing, Reason: workv1alpha1.ReasonManifestProgressing, Message: "Manifest #1: not reported by the agent yet"},
			manifests: []Verdict{
				{State: Healthy},
				{State: Progressing, Reason: ReasonNotReported, Message: "Manifest #1: not reported by the agent yet"},
			},
		},
		"load balancer without ingress": {
			work: work(nil, reported(0, "", "Service", "services", "lb", map[string]any{ServiceType: "LoadBalancer"})),
			want: Verdict{State: Progressing, Reason: workv1alpha1.ReasonManifestProgressing, Message: "Service default/lb: the load balancer has no ingress yet"},
			manifests: []Verdict{
				{State: Progressing, Reason: ReasonNoLoadBalancerIngress, Message: "Service default/lb: the load balancer has no ingress yet"},
			},
		},
		"load balancer with ingress": {
			work:      work(nil, reported(0, "", "Service", "services", "lb", map[string]any{ServiceType: "LoadBalancer", IngressIP: "10.0.0.1"})),
			want:      healthyCluster,
			manifests: []Verdict{{State: Healthy}},
		},
		"service of another type: applied and available": {
			work:      work(nil, reported(0, "", "Service", "services", "svc", nil)),
			want:      healthyCluster,
			manifests: []Verdict{{State: Healthy}},
		},
		"job: its feedback needs no spec": {
			work: work(nil, reported(0, "batch", "Job", "jobs", "crunch", map[string]any{Active: 1})),
			want: Verdict{State: Progressing, Reason: workv1alpha1.ReasonManifestProgressing, Message: "Job.batch default/crunch: running (1 active, 0 succeeded)"},
			manifests: []Verdict{
				{State: Progressing, Reason: ReasonJobRunning, Message: "Job.batch default/crunch: running (1 active, 0 succeeded)"},
			},
		},
		"the work's own condition rules": {
			work: work([]workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Group: "example.io", Resource: "widgets", Namespace: "default", Name: "*"},
				ConditionRules:     []workv1.ConditionRule{{Condition: "Ready", Type: workv1.CelConditionExpressionsType}},
			}}, reported(0, "example.io", "Widget", "widgets", "w", nil)),
			want: Verdict{State: Progressing, Reason: workv1alpha1.ReasonManifestProgressing, Message: "Widget.example.io default/w: condition Ready is not True yet"},
			manifests: []Verdict{
				{State: Progressing, Reason: ReasonConditionRulePending, Message: "Widget.example.io default/w: condition Ready is not True yet"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Cluster(ClusterInput{Work: tc.work, Manifests: WorkManifests(tc.work)})
			if diff := cmp.Diff(tc.want, got.Verdict); diff != "" {
				t.Errorf("Cluster (-want +got):\n%s", diff)
			}
			var manifests []Verdict
			for _, m := range got.Manifests {
				manifests = append(manifests, m.Verdict)
			}
			if diff := cmp.Diff(tc.manifests, manifests); diff != "" {
				t.Errorf("manifests (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSpecFeedbackPaths: the manager asks for the spec values WorkManifests needs.
func TestSpecFeedbackPaths(t *testing.T) {
	cases := map[string]struct {
		manifest string
		want     []string
	}{
		"deployment":    {manifest: deploymentJSON, want: []string{FeedbackPrefix + SpecReplicas + "=.spec.replicas"}},
		"statefulset":   {manifest: statefulSetJSON, want: []string{FeedbackPrefix + SpecReplicas + "=.spec.replicas"}},
		"replicaset":    {manifest: replicaSetJSON, want: []string{FeedbackPrefix + SpecReplicas + "=.spec.replicas"}},
		"load balancer": {manifest: lbServiceJSON, want: []string{FeedbackPrefix + ServiceType + "=.spec.type"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			have := map[string]bool{}
			for _, c := range ManifestConfigs([]template.Manifest{parse(t, tc.manifest)}, nil) {
				for _, r := range c.FeedbackRules {
					for _, p := range r.JsonPaths {
						have[p.Name+"="+p.Path] = true
					}
				}
			}
			for _, w := range tc.want {
				if !have[w] {
					t.Errorf("no feedback path %s among %v", w, have)
				}
			}
		})
	}
}

// TestFromWorkReplicas: a caller that knows a held cluster's share still has it count.
func TestFromWorkReplicas(t *testing.T) {
	three := int64(3)
	in := WorkManifests(&workv1.ManifestWork{Status: workv1.ManifestWorkStatus{ResourceStatus: workv1.ManifestResourceStatus{
		Manifests: []workv1.ManifestCondition{{ResourceMeta: workv1.ManifestResourceMeta{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Name: "web", Namespace: "default"}}},
	}}})[0]
	in.Replicas = &three
	in.Status = status(metav1.ConditionTrue, map[string]any{Generation: 1, ObservedGeneration: 1, SpecReplicas: 2, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2})
	want := Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "Deployment.apps default/web: 2 of 3 replicas updated"}
	if diff := cmp.Diff(want, Manifest(in)); diff != "" {
		t.Errorf("Manifest (-want +got):\n%s", diff)
	}
}
