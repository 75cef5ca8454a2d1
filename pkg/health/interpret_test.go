package health

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

func parse(t *testing.T, raw string) template.Manifest {
	t.Helper()
	ms, err := template.Parse([]workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(raw)}}})
	if err != nil {
		t.Fatal(err)
	}
	return ms[0]
}

// status is a manifest's status as OCM's agent reports it: Applied and Available conditions and the feedback
// values of the manager's rules (names without the prefix, which is added here; a name "user:x" is the user's
// own value x, without the prefix).
func status(applied metav1.ConditionStatus, values map[string]any) *workv1.ManifestCondition {
	mc := &workv1.ManifestCondition{Conditions: []metav1.Condition{
		{Type: workv1.ManifestApplied, Status: applied, Message: "apply failed: admission webhook denied"},
		{Type: workv1.ManifestAvailable, Status: metav1.ConditionTrue},
	}}
	for name, v := range values {
		fv := workv1.FeedbackValue{Name: FeedbackPrefix + name}
		if user, ok := strings.CutPrefix(name, "user:"); ok {
			fv.Name = user
		}
		switch x := v.(type) {
		case int:
			n := int64(x)
			fv.Value = workv1.FieldValue{Type: workv1.Integer, Integer: &n}
		case string:
			fv.Value = workv1.FieldValue{Type: workv1.String, String: &x}
		}
		mc.StatusFeedbacks.Values = append(mc.StatusFeedbacks.Values, fv)
	}
	return mc
}

const (
	deploymentJSON  = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":3}}`
	statefulSetJSON = `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"default"},"spec":{"replicas":2}}`
	replicaSetJSON  = `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs","namespace":"default"}}`
	daemonSetJSON   = `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent","namespace":"default"}}`
	jobJSON         = `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"crunch","namespace":"default"}}`
	podJSON         = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"}}`
	pvcJSON         = `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data","namespace":"default"}}`
	lbServiceJSON   = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"lb","namespace":"default"},"spec":{"type":"LoadBalancer"}}`
	serviceJSON     = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc","namespace":"default"},"spec":{"type":"ClusterIP"}}`
	configMapJSON   = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"}}`
	ingressJSON     = `{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"web","namespace":"default"}}`
	hpaJSON         = `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"web","namespace":"default"}}`
	cronJobJSON     = `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"nightly","namespace":"default"}}`
	widgetJSON      = `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"}}`
)

func TestManifest(t *testing.T) {
	T, F := metav1.ConditionTrue, metav1.ConditionFalse
	ready := map[string]any{Generation: 2, ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3}
	two := int64(2)
	cases := map[string]struct {
		manifest string
		status   *workv1.ManifestCondition
		rules    []string
		replicas *int64
		want     State
		reason   string
	}{
		"not reported yet":                        {manifest: deploymentJSON, want: Progressing, reason: ReasonNotReported},
		"apply failed":                            {manifest: deploymentJSON, status: status(F, nil), want: Degraded, reason: ReasonApplyFailed},
		"deployment ready":                        {manifest: deploymentJSON, status: status(T, ready), want: Healthy},
		"deployment applied, feedback not synced": {manifest: deploymentJSON, status: status(T, nil), want: Progressing, reason: ReasonWaitingForFeedback},
		"deployment applied but not ready":        {manifest: deploymentJSON, status: status(T, with(ready, ReadyReplicas, 1, AvailableReplicas, 1)), want: Progressing, reason: ReasonRolloutInProgress},
		"deployment generation not observed":      {manifest: deploymentJSON, status: status(T, with(ready, Generation, 3)), want: Progressing, reason: ReasonRolloutInProgress},
		"deployment rolling, old pods remain":     {manifest: deploymentJSON, status: status(T, with(ready, Replicas, 4)), want: Progressing},
		"deployment past its progress deadline":   {manifest: deploymentJSON, status: status(T, with(ready, ProgressingReason, "ProgressDeadlineExceeded")), want: Degraded, reason: ReasonProgressDeadlineExceeded},
		"split deployment judged by its share":    {manifest: deploymentJSON, replicas: &two, status: status(T, with(ready, Replicas, 2, ReadyReplicas, 2, AvailableReplicas, 2, UpdatedReplicas, 2)), want: Healthy},
		"statefulset ready":                       {manifest: statefulSetJSON, status: status(T, with(ready, Replicas, 2, ReadyReplicas, 2, AvailableReplicas, 2, UpdatedReplicas, 2)), want: Healthy},
		"statefulset one replica short":           {manifest: statefulSetJSON, status: status(T, with(ready, Replicas, 2, ReadyReplicas, 1, AvailableReplicas, 1, UpdatedReplicas, 2)), want: Progressing},
		"replicaset defaults to one replica":      {manifest: replicaSetJSON, status: status(T, map[string]any{Generation: 1, ObservedGeneration: 1, Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}), want: Healthy},
		"replicaset failure":                      {manifest: replicaSetJSON, status: status(T, map[string]any{ReplicaFailure: "True"}), want: Degraded, reason: ReasonReplicaFailure},
		"daemonset ready":                         {manifest: daemonSetJSON, status: status(T, map[string]any{Generation: 1, ObservedGeneration: 1, DesiredNumberScheduled: 4, UpdatedNumberScheduled: 4, NumberAvailable: 4, NumberReady: 4}), want: Healthy},
		"daemonset updating":                      {manifest: daemonSetJSON, status: status(T, map[string]any{Generation: 1, ObservedGeneration: 1, DesiredNumberScheduled: 4, UpdatedNumberScheduled: 2, NumberAvailable: 4}), want: Progressing},
		"job complete":                            {manifest: jobJSON, status: status(T, map[string]any{Succeeded: 2, Complete: "True"}), want: Healthy},
		"job running":                             {manifest: jobJSON, status: status(T, map[string]any{Active: 2}), want: Progressing, reason: ReasonJobRunning},
		"job failed":                              {manifest: jobJSON, status: status(T, map[string]any{Failed: 6, FailedCondition: "True"}), want: Degraded, reason: ReasonJobFailed},
		"pod running and ready":                   {manifest: podJSON, status: status(T, map[string]any{Phase: "Running", Ready: "True"}), want: Healthy},
		"pod running, not ready":                  {manifest: podJSON, status: status(T, map[string]any{Phase: "Running", Ready: "False"}), want: Progressing, reason: ReasonPodNotReady},
		"pod failed":                              {manifest: podJSON, status: status(T, map[string]any{Phase: "Failed"}), want: Degraded, reason: ReasonPodFailed},
		"claim bound":                             {manifest: pvcJSON, status: status(T, map[string]any{Phase: "Bound"}), want: Healthy},
		"claim pending":                           {manifest: pvcJSON, status: status(T, map[string]any{Phase: "Pending"}), want: Progressing, reason: ReasonClaimPending},
		"claim lost":                              {manifest: pvcJSON, status: status(T, map[string]any{Phase: "Lost"}), want: Degraded, reason: ReasonClaimLost},
		"load balancer with ingress":              {manifest: lbServiceJSON, status: status(T, map[string]any{IngressIP: "10.0.0.1"}), want: Healthy},
		"load balancer waiting for ingress":       {manifest: lbServiceJSON, status: status(T, nil), want: Progressing, reason: ReasonNoLoadBalancerIngress},
		"ingress with an address":                 {manifest: ingressJSON, status: status(T, map[string]any{IngressHostname: "lb.example"}), want: Healthy},
		"ingress waiting for an address":          {manifest: ingressJSON, status: status(T, nil), want: Progressing, reason: ReasonNoLoadBalancerIngress},
		"autoscaler active":                       {manifest: hpaJSON, status: status(T, map[string]any{AbleToScale: "True", ScalingActive: "True", CurrentReplicas: 2, DesiredReplicas: 2}), want: Healthy},
		"autoscaler scaled to zero on purpose":    {manifest: hpaJSON, status: status(T, map[string]any{AbleToScale: "True", ScalingActive: "False", ScalingActiveReason: "ScalingDisabled"}), want: Healthy},
		"autoscaler without metrics":              {manifest: hpaJSON, status: status(T, map[string]any{AbleToScale: "True", ScalingActive: "False", ScalingActiveReason: "FailedGetResourceMetric"}), want: Degraded, reason: ReasonAutoscalerInactive},
		"autoscaler that cannot scale":            {manifest: hpaJSON, status: status(T, map[string]any{AbleToScale: "False", ScalingActive: "True"}), want: Degraded, reason: ReasonAutoscalerCannotScale},
		"autoscaler not yet reported":             {manifest: hpaJSON, status: status(T, nil), want: Progressing, reason: ReasonWaitingForFeedback},
		"cronjob once applied":                    {manifest: cronJobJSON, status: status(T, map[string]any{LastScheduleTime: "2026-11-24T00:00:00Z"}), want: Healthy},
		"cluster IP service once applied":         {manifest: serviceJSON, status: status(T, nil), want: Healthy},
		"other kind: applied and available":       {manifest: configMapJSON, status: status(T, nil), want: Healthy},
		"condition rule true":                     {manifest: widgetJSON, rules: []string{"Ready"}, status: withCondition(status(T, nil), "Ready", T), want: Healthy},
		"condition rule not yet true":             {manifest: widgetJSON, rules: []string{"Ready"}, status: status(T, nil), want: Progressing, reason: ReasonConditionRulePending},
		"condition rule degraded":                 {manifest: widgetJSON, rules: []string{"Ready", "Degraded"}, status: withCondition(withCondition(status(T, nil), "Ready", T), "Degraded", T), want: Degraded, reason: ReasonConditionRuleDegraded},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Manifest(ManifestInput{Manifest: parse(t, tc.manifest), Status: tc.status, ConditionRules: tc.rules, Replicas: tc.replicas})
			if got.State != tc.want || (tc.reason != "" && got.Reason != tc.reason) {
				t.Errorf("Manifest = %+v, want state %s reason %q", got, tc.want, tc.reason)
			}
		})
	}
}

func withCondition(mc *workv1.ManifestCondition, t string, s metav1.ConditionStatus) *workv1.ManifestCondition {
	mc.Conditions = append(mc.Conditions, metav1.Condition{Type: t, Status: s})
	return mc
}

func TestManifestConfigs(t *testing.T) {
	manifests := []template.Manifest{parse(t, deploymentJSON), parse(t, configMapJSON), parse(t, serviceJSON), parse(t, lbServiceJSON)}
	user := []workv1.ManifestConfigOption{{
		ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Name: "web", Namespace: "default"},
		FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
		UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply},
	}}
	got := ManifestConfigs(manifests, user)
	if len(got) != 2 {
		t.Fatalf("got %d manifestConfigs, want 2 (the user's deployment entry, merged, and the load balancer)", len(got))
	}
	dep := got[0]
	if len(dep.FeedbackRules) != 2 || dep.FeedbackRules[0].Type != workv1.WellKnownStatusType || dep.FeedbackRules[1].Type != workv1.JSONPathsType {
		t.Errorf("the user's rule was not kept first with ours added: %+v", dep.FeedbackRules)
	}
	if dep.UpdateStrategy == nil || dep.UpdateStrategy.Type != workv1.UpdateStrategyTypeServerSideApply {
		t.Errorf("the user's update strategy was dropped: %+v", dep.UpdateStrategy)
	}
	if got[1].ResourceIdentifier.Resource != "services" || got[1].ResourceIdentifier.Name != "lb" {
		t.Errorf("the load balancer entry is %+v", got[1].ResourceIdentifier)
	}
	if len(user[0].FeedbackRules) != 1 {
		t.Error("ManifestConfigs modified the user's slice")
	}
}

// TestManifestAbsentMeansZero: Kubernetes omits zero counts from status and the agent reports no value for a
// missing path, so a count that is not reported is 0, never "as many as wanted".
func TestManifestAbsentMeansZero(t *testing.T) {
	T := metav1.ConditionTrue
	cases := map[string]struct {
		manifest string
		values   map[string]any
		want     Verdict
	}{
		"deployment whose new pods are refused: the old pods are available, none updated": {
			manifest: deploymentJSON,
			values:   map[string]any{Generation: 2, ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3},
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "Deployment.apps default/web: 0 of 3 replicas updated"},
		},
		"statefulset without updated replicas": {
			manifest: statefulSetJSON,
			values:   map[string]any{Generation: 1, ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2},
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "StatefulSet.apps default/db: 0 of 2 replicas updated"},
		},
		"statefulset without available replicas": {
			manifest: statefulSetJSON,
			values:   map[string]any{Generation: 1, ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: 2},
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "StatefulSet.apps default/db: 0 of 2 replicas available"},
		},
		"replicaset: it has no updatedReplicas, its replicas are its template's": {
			manifest: replicaSetJSON,
			values:   map[string]any{Generation: 1, ObservedGeneration: 1, Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1},
			want:     Verdict{State: Healthy},
		},
		"replicaset without replicas": {
			manifest: replicaSetJSON,
			values:   map[string]any{Generation: 1, ObservedGeneration: 1},
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "ReplicaSet.apps default/rs: 0 of 1 replicas updated"},
		},
		"deployment without observedGeneration is waiting, not zero": {
			manifest: deploymentJSON,
			values:   map[string]any{Generation: 1, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3},
			want:     Verdict{State: Progressing, Reason: ReasonWaitingForFeedback, Message: "Deployment.apps default/web: waiting for status feedback"},
		},
		"deployment scaled to zero reports no counts": {
			manifest: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":0}}`,
			values:   map[string]any{Generation: 1, ObservedGeneration: 1},
			want:     Verdict{State: Healthy},
		},
		"daemonset whose status has no desired count yet": {
			manifest: daemonSetJSON,
			values:   map[string]any{Generation: 1, ObservedGeneration: 1},
			want:     Verdict{State: Progressing, Reason: ReasonWaitingForFeedback, Message: "DaemonSet.apps default/agent: waiting for status feedback"},
		},
		"daemonset on no node": {
			manifest: daemonSetJSON,
			values:   map[string]any{Generation: 1, ObservedGeneration: 1, DesiredNumberScheduled: 0, NumberReady: 0},
			want:     Verdict{State: Healthy},
		},
		"daemonset without available pods": {
			manifest: daemonSetJSON,
			values:   map[string]any{Generation: 1, ObservedGeneration: 1, DesiredNumberScheduled: 4, NumberReady: 4, UpdatedNumberScheduled: 4},
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "DaemonSet.apps default/agent: 4 of 4 pods updated and 0 available"},
		},
		"job with no counts": {
			manifest: jobJSON,
			values:   map[string]any{Complete: "False"},
			want:     Verdict{State: Progressing, Reason: ReasonJobRunning, Message: "Job.batch default/crunch: running (0 active, 0 succeeded)"},
		},
		"pod without ready condition": {
			manifest: podJSON,
			values:   map[string]any{Phase: "Running"},
			want:     Verdict{State: Progressing, Reason: ReasonPodNotReady, Message: "Pod default/p: the pod is Running and not ready"},
		},
		"load balancer without ingress": {
			manifest: lbServiceJSON,
			values:   map[string]any{},
			want:     Verdict{State: Progressing, Reason: ReasonNoLoadBalancerIngress, Message: "Service default/lb: the load balancer has no ingress yet"},
		},
		"a user's value with the name of one of ours is not ours": {
			manifest: deploymentJSON,
			values:   map[string]any{Generation: 1, ObservedGeneration: 1, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, "user:" + UpdatedReplicas: 3},
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "Deployment.apps default/web: 0 of 3 replicas updated"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Manifest(ManifestInput{Manifest: parse(t, tc.manifest), Status: status(T, tc.values)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Manifest (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeploymentReplicaFailure: a Deployment whose pods cannot be created (quota, PodSecurity, a missing
// ServiceAccount) says so in its ReplicaFailure condition.
func TestDeploymentReplicaFailure(t *testing.T) {
	T := metav1.ConditionTrue
	ready := map[string]any{Generation: 2, ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3}
	cases := map[string]struct {
		manifest string
		values   map[string]any
		want     Verdict
	}{
		"deployment with a replica failure and its message": {
			manifest: deploymentJSON,
			values:   with(ready, UpdatedReplicas, 0, ReplicaFailure, "True", ReplicaFailureMessage, `pods "web-7d9" is forbidden: exceeded quota: compute`),
			want: Verdict{State: Degraded, Reason: ReasonReplicaFailure,
				Message: `Deployment.apps default/web: replica failure: pods "web-7d9" is forbidden: exceeded quota: compute`},
		},
		"deployment with a replica failure, no message": {
			manifest: deploymentJSON,
			values:   with(ready, ReplicaFailure, "True"),
			want:     Verdict{State: Degraded, Reason: ReasonReplicaFailure, Message: "Deployment.apps default/web: replica failure"},
		},
		"deployment whose replica failure is over": {
			manifest: deploymentJSON,
			values:   with(ready, ReplicaFailure, "False"),
			want:     Verdict{State: Healthy},
		},
		"replicaset with a replica failure": {
			manifest: replicaSetJSON,
			values:   map[string]any{ReplicaFailure: "True", ReplicaFailureMessage: "serviceaccount \"x\" not found"},
			want:     Verdict{State: Degraded, Reason: ReasonReplicaFailure, Message: `ReplicaSet.apps default/rs: replica failure: serviceaccount "x" not found`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Manifest(ManifestInput{Manifest: parse(t, tc.manifest), Status: status(T, tc.values)})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Manifest (-want +got):\n%s", diff)
			}
		})
	}
	var paths []string
	for _, c := range ManifestConfigs([]template.Manifest{parse(t, deploymentJSON)}, nil) {
		for _, r := range c.FeedbackRules {
			for _, p := range r.JsonPaths {
				paths = append(paths, p.Name+"="+p.Path)
			}
		}
	}
	for _, want := range []string{
		FeedbackPrefix + ReplicaFailure + `=.status.conditions[?(@.type=="ReplicaFailure")].status`,
		FeedbackPrefix + ReplicaFailureMessage + `=.status.conditions[?(@.type=="ReplicaFailure")].message`,
	} {
		if !slices.Contains(paths, want) {
			t.Errorf("the Deployment's feedback rule lacks %s; it has %v", want, paths)
		}
	}
}

// with is base with the key-value pairs kv set; a nil value removes the key.
func with(base map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(base)+len(kv)/2)
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// TestManifestZeroShare: a split manifest whose share on a cluster is 0 asks nothing of that cluster, so it is
// healthy once applied, whatever its kind's feedback says.
func TestManifestZeroShare(t *testing.T) {
	T, F := metav1.ConditionTrue, metav1.ConditionFalse
	zero, two := int64(0), int64(2)
	splitJob := `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"crunch","namespace":"default"},"spec":{"parallelism":0}}`
	cases := map[string]struct {
		manifest string
		share    *int64
		replicas *int64
		status   *workv1.ManifestCondition
		want     Verdict
	}{
		"job with parallelism 0, applied": {
			manifest: splitJob, share: &zero, status: status(T, nil),
			want: Verdict{State: Healthy},
		},
		"job with parallelism 0 that reports it runs nothing": {
			manifest: splitJob, share: &zero, status: status(T, map[string]any{Complete: "False"}),
			want: Verdict{State: Healthy},
		},
		"deployment with a share of 0 replicas, no feedback yet": {
			manifest: deploymentJSON, share: &zero, replicas: &zero, status: status(T, nil),
			want: Verdict{State: Healthy},
		},
		"zero share not applied": {
			manifest: splitJob, share: &zero, status: status(F, nil),
			want: Verdict{State: Degraded, Reason: ReasonApplyFailed, Message: "Job.batch default/crunch: not applied: apply failed: admission webhook denied"},
		},
		"zero share not reported": {
			manifest: splitJob, share: &zero,
			want: Verdict{State: Progressing, Reason: ReasonNotReported, Message: "Job.batch default/crunch: not reported by the agent yet"},
		},
		"zero share without an Applied condition yet": {
			manifest: splitJob, share: &zero, status: &workv1.ManifestCondition{},
			want: Verdict{State: Healthy},
		},
		"job with a share of 2 is judged by its feedback": {
			manifest: jobJSON, share: &two, status: status(T, map[string]any{Active: 2}),
			want: Verdict{State: Progressing, Reason: ReasonJobRunning, Message: "Job.batch default/crunch: running (2 active, 0 succeeded)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Manifest(ManifestInput{Manifest: parse(t, tc.manifest), Status: tc.status, Share: tc.share, Replicas: tc.replicas})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Manifest (-want +got):\n%s", diff)
			}
		})
	}
}

// TestVerdictOf: the words ResourceInterpreters' expressions and webhooks answer, read in one place.
func TestVerdictOf(t *testing.T) {
	cases := map[string]struct {
		want Verdict
		ok   bool
	}{
		"Healthy":     {want: Verdict{State: Healthy}, ok: true},
		"Progressing": {want: Verdict{State: Progressing}, ok: true},
		"Degraded":    {want: Verdict{State: Degraded}, ok: true},
		"Completed":   {want: Verdict{State: Healthy, Finished: true}, ok: true},
		"Failed":      {want: Verdict{State: Degraded, Finished: true}, ok: true},
		"healthy":     {},
		"":            {},
		"Unknown":     {},
	}
	for word, tc := range cases {
		got, ok := VerdictOf(word)
		if ok != tc.ok || got != tc.want {
			t.Errorf("VerdictOf(%q) = %+v, %v; want %+v, %v", word, got, ok, tc.want, tc.ok)
		}
	}
}

// TestManifestUpdateStrategy: a StatefulSet's or DaemonSet's update strategy decides how many pods take a new
// pod template. A partitioned StatefulSet updates only the ordinals at or above its partition, and with OnDelete
// no pod is replaced until it is deleted: waiting for all of them to be updated would never end.
func TestManifestUpdateStrategy(t *testing.T) {
	T := metav1.ConditionTrue
	const (
		stsPartition2 = `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"default"},"spec":{"replicas":3,"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":2}}}}`
		stsPartition5 = `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"default"},"spec":{"replicas":3,"updateStrategy":{"rollingUpdate":{"partition":5}}}}`
		stsPartition0 = `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"default"},"spec":{"replicas":3,"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":0}}}}`
		stsOnDelete   = `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"default"},"spec":{"replicas":3,"updateStrategy":{"type":"OnDelete"}}}`
		dsOnDelete    = `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent","namespace":"default"},"spec":{"updateStrategy":{"type":"OnDelete"}}}`
	)
	sts := map[string]any{Generation: 2, ObservedGeneration: 2, Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3}
	ds := map[string]any{Generation: 2, ObservedGeneration: 2, DesiredNumberScheduled: 4, NumberReady: 4, NumberAvailable: 4, UpdatedNumberScheduled: 4}
	two := int64(2)
	cases := map[string]struct {
		manifest ManifestInput
		values   map[string]any
		want     Verdict
	}{
		"statefulset with partition 2 of 3: the one pod above it updated": {
			manifest: ManifestInput{Manifest: parse(t, stsPartition2)},
			values:   with(sts, UpdatedReplicas, 1),
			want:     Verdict{State: Healthy},
		},
		"statefulset with partition 2 of 3: no pod updated yet": {
			manifest: ManifestInput{Manifest: parse(t, stsPartition2)},
			values:   with(sts, UpdatedReplicas, nil),
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "StatefulSet.apps default/db: 0 of 1 replicas updated"},
		},
		"statefulset with partition: a pod not ready": {
			manifest: ManifestInput{Manifest: parse(t, stsPartition2)},
			values:   with(sts, UpdatedReplicas, 1, ReadyReplicas, 2),
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "StatefulSet.apps default/db: 2 of 3 replicas available"},
		},
		"statefulset with partition: generation not observed": {
			manifest: ManifestInput{Manifest: parse(t, stsPartition2)},
			values:   with(sts, UpdatedReplicas, 1, Generation, 3),
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "StatefulSet.apps default/db: generation 3 not yet observed (observed 2)"},
		},
		"statefulset with partition, scaling down: an extra pod remains": {
			manifest: ManifestInput{Manifest: parse(t, stsPartition2)},
			values:   with(sts, UpdatedReplicas, 1, Replicas, 4),
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "StatefulSet.apps default/db: 1 replicas above 3 pending termination"},
		},
		"a deployment an autoscaler scaled above its manifest's replicas, all updated": {
			manifest: ManifestInput{Manifest: parse(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{"replicas":3}}`)},
			values:   map[string]any{Generation: 2, ObservedGeneration: 2, Replicas: 5, ReadyReplicas: 5, AvailableReplicas: 5, UpdatedReplicas: 5},
			want:     Verdict{State: Healthy},
		},
		"statefulset with a partition above its replicas updates none": {
			manifest: ManifestInput{Manifest: parse(t, stsPartition5)},
			values:   with(sts, UpdatedReplicas, nil),
			want:     Verdict{State: Healthy},
		},
		"statefulset with partition 0 updates all": {
			manifest: ManifestInput{Manifest: parse(t, stsPartition0)},
			values:   with(sts, UpdatedReplicas, 1),
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "StatefulSet.apps default/db: 1 of 3 replicas updated"},
		},
		"split statefulset with partition 2: its share of 2 leaves none to update": {
			manifest: ManifestInput{Manifest: parse(t, stsPartition2), Replicas: &two},
			values:   with(sts, Replicas, 2, ReadyReplicas, 2, AvailableReplicas, 2, UpdatedReplicas, nil),
			want:     Verdict{State: Healthy},
		},
		"statefulset OnDelete after a template change: all ready, none updated": {
			manifest: ManifestInput{Manifest: parse(t, stsOnDelete)},
			values:   with(sts, UpdatedReplicas, nil),
			want:     Verdict{State: Healthy},
		},
		"statefulset OnDelete: generation not observed": {
			manifest: ManifestInput{Manifest: parse(t, stsOnDelete)},
			values:   with(sts, UpdatedReplicas, nil, ObservedGeneration, 1),
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "StatefulSet.apps default/db: generation 2 not yet observed (observed 1)"},
		},
		"statefulset OnDelete: a pod not available": {
			manifest: ManifestInput{Manifest: parse(t, stsOnDelete)},
			values:   with(sts, UpdatedReplicas, nil, AvailableReplicas, 2),
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "StatefulSet.apps default/db: 2 of 3 replicas available"},
		},
		"statefulset known only from its work: its strategy is unknown, so all pods must be updated": {
			manifest: ManifestInput{Manifest: reportedManifest(workv1.ManifestResourceMeta{Group: "apps", Version: "v1", Kind: "StatefulSet", Name: "db", Namespace: "default"}), FromWork: true},
			values:   with(sts, UpdatedReplicas, nil, SpecReplicas, 3),
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "StatefulSet.apps default/db: 0 of 3 replicas updated"},
		},
		"daemonset OnDelete after a template change: all available, none updated": {
			manifest: ManifestInput{Manifest: parse(t, dsOnDelete)},
			values:   with(ds, UpdatedNumberScheduled, nil),
			want:     Verdict{State: Healthy},
		},
		"daemonset OnDelete: a pod not available": {
			manifest: ManifestInput{Manifest: parse(t, dsOnDelete)},
			values:   with(ds, UpdatedNumberScheduled, nil, NumberAvailable, 3),
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "DaemonSet.apps default/agent: 3 of 4 pods available"},
		},
		"daemonset OnDelete: generation not observed": {
			manifest: ManifestInput{Manifest: parse(t, dsOnDelete)},
			values:   with(ds, UpdatedNumberScheduled, nil, Generation, 3),
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "DaemonSet.apps default/agent: generation 3 not yet observed (observed 2)"},
		},
		"daemonset rolling: still waits for every pod updated": {
			manifest: ManifestInput{Manifest: parse(t, daemonSetJSON)},
			values:   with(ds, UpdatedNumberScheduled, 2),
			want:     Verdict{State: Progressing, Reason: ReasonRolloutInProgress, Message: "DaemonSet.apps default/agent: 2 of 4 pods updated and 4 available"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := tc.manifest
			in.Status = status(T, tc.values)
			if diff := cmp.Diff(tc.want, Manifest(in)); diff != "" {
				t.Errorf("Manifest (-want +got):\n%s", diff)
			}
		})
	}
}
