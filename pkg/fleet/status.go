package fleet

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/text"
)

// ClusterReport is what one cluster the namespace's placement decided reports of one fleet object.
type ClusterReport struct {
	// Cluster is the ManagedCluster's name.
	Cluster string
	// CarriesCurrent is true when the cluster's ManifestWork carries the manifest made from the object's
	// current metadata.generation (Translation.Generation of the template the work carries). False for a
	// cluster without a work yet, or one a rollout still holds on an earlier template.
	CarriesCurrent bool
	// Feedback is the manifest's status feedback on the cluster, named without health.FeedbackPrefix
	// (health.FeedbackOf); nil when the agent reported none. A count it lacks is 0, as Kubernetes omits zero
	// counts.
	Feedback health.Feedback
	// Applied and Available are the agent's conditions of the manifest on the cluster.
	Applied, Available bool
	// Health is the manifest's verdict on the cluster (pkg/health); its message goes into the cluster's event.
	Health health.Verdict
	// Leaving is true for a cluster the placement no longer decides whose work stays until the move completes
	// (make before break): its replicas still serve, so they count in replicas, ready and available, but not in
	// updated, not among the clusters a replicated object wants, and it holds back neither observedGeneration
	// nor a Job's completion, and has no event.
	Leaving bool
	// Unavailable is true when the cluster's ManagedCluster is not available (OCM no longer hears from its
	// agent): Feedback is the agent's last report, which says nothing of now. As Kubernetes stops counting the
	// pods of an unreachable node as ready, its replicas still count in replicas and updated (and a DaemonSet's
	// in desiredNumberScheduled), but none as ready or available; a decided cluster gets a ClusterDegraded event
	// (Health, when it is not Degraded already, becomes ClusterUnavailable). A Job's counts are kept.
	Unavailable bool
}

// unreachable is the report r as Status counts it: an Unavailable cluster's last feedback without its ready and
// available counts, and its health degraded.
func unreachable(r ClusterReport) ClusterReport {
	if !r.Unavailable {
		return r
	}
	if r.Health.State != health.Degraded {
		r.Health = health.Verdict{State: health.Degraded, Reason: workv1alpha1.ReasonClusterUnavailable, Message: "the ManagedCluster is not available"}
	}
	if r.Feedback == nil {
		return r
	}
	r.Feedback = maps.Clone(r.Feedback)
	zero := int64(0)
	for _, name := range []string{health.ReadyReplicas, health.AvailableReplicas, health.NumberReady, health.NumberAvailable} {
		if _, ok := r.Feedback[name]; ok {
			r.Feedback[name] = workv1.FieldValue{Type: workv1.Integer, Integer: &zero}
		}
	}
	return r
}

// Event is something about one cluster for kubectl describe on the fleet object.
type Event struct {
	// Type is corev1.EventTypeNormal or corev1.EventTypeWarning.
	Type string
	// Reason is EventClusterDegraded, EventClusterProgressing or EventNoClusters.
	Reason string
	// Message starts with the cluster: "cluster eu-1: 0 of 2 ready".
	Message string
	// Cluster is the cluster the event is about; "" for one about the object (EventNoClusters). The controller
	// records it as the event's related object, so each cluster's events are a series of their own: Kubernetes
	// folds the events of one object with the same reason into one series otherwise, whatever their message.
	Cluster string
}

// Condition reasons Status writes, as Kubernetes' own controllers write them where they have one.
const (
	reasonMinimumReplicasAvailable   = "MinimumReplicasAvailable"
	reasonMinimumReplicasUnavailable = "MinimumReplicasUnavailable"
	reasonNewReplicaSetAvailable     = "NewReplicaSetAvailable"
	reasonReplicaSetUpdated          = "ReplicaSetUpdated"
	reasonProgressDeadlineExceeded   = "ProgressDeadlineExceeded" // kubectl's deploymentutil.TimedOutReason
	reasonFailedCreate               = "FailedCreate"
	reasonCompletionsReached         = "CompletionsReached"
	// JobReasonFailedOnCluster is the reason of a fleet Job's FailureTarget and Failed conditions: its Job
	// failed on a cluster (the cluster's own reason is in its event).
	JobReasonFailedOnCluster = "FailedOnCluster"
)

// Status computes the .status of the fleet object obj (not nil) from what its clusters report, shaped as Kubernetes'
// own controller shapes it, so kubectl rollout status, kubectl wait and GitOps health checks read it
// unchanged on the fleet API server; and an event per cluster that is not healthy (Warning when degraded).
// obj gives the kind, metadata.generation, the spec the status is judged against (replicas, strategy) and
// the previous status, whose condition times and observedGeneration are kept where nothing changed: the same
// reports give the same status whatever now is, so a status at rest is never written again.
//
// The status is nil for kinds without one to compute (anything but Deployment, StatefulSet, ReplicaSet,
// DaemonSet and Job): leave their status alone.
//
// The rules (each cluster's counts summed; missing clusters count 0; an Unavailable cluster counts none ready
// or available):
//   - observedGeneration is metadata.generation once every cluster carries the current manifest and its own
//     controller observed it (feedback observedGeneration >= generation on the cluster); until then the
//     previous one, so kubectl rollout status and kubectl wait keep waiting. For a replicated Deployment or
//     StatefulSet, whose spec.replicas is per cluster, it waits further, until every cluster is rolled out or
//     timed out: kubectl compares the summed counts with spec.replicas, which only a split object's sum
//     matches. A Deployment whose rollout timed out on a cluster has observed it at once, so that kubectl
//     rollout status fails rather than waits.
//   - updated counts come from clusters that carry the current manifest and observed it, at most the
//     cluster's own spec.replicas (a surplus is old replicas pending termination): kubectl rollout status
//     succeeds exactly when every cluster is rolled out (as kubectl rollout status there says, and with no
//     replica beyond its share) and the shares add up to spec.replicas.
//   - Deployment: Available as the deployment controller sets it (availableReplicas >= spec.replicas -
//     maxUnavailable, per cluster for a replicated one); Progressing NewReplicaSetAvailable when complete,
//     ProgressDeadlineExceeded (False) when a cluster's rollout timed out, else ReplicaSetUpdated;
//     ReplicaFailure when a cluster cannot create pods.
//   - StatefulSet: readyReplicas and availableReplicas count at most a cluster's spec.replicas, as kubectl
//     compares readyReplicas with spec.replicas; updateRevision names the fleet generation
//     ("<name>-<generation>"); currentRevision becomes it when every replica is updated and ready, and is
//     kept otherwise.
//   - DaemonSet: currentNumberScheduled is desiredNumberScheduled (the feedback has no count of it).
//   - Job: active, succeeded and failed summed (succeeded and failed never decrease, as the API server
//     requires); Complete (with SuccessCriteriaMet, startTime and completionTime, as status validation
//     requires) when the Job completed on every cluster; FailureTarget when it failed on one, Failed once no
//     cluster still runs it. Complete and Failed are final.
func Status(obj *unstructured.Unstructured, clusters []ClusterReport, now time.Time) (map[string]any, []Event) {
	v := view{
		obj:      obj,
		name:     obj.GetName(),
		gen:      obj.GetGeneration(),
		clusters: make([]ClusterReport, 0, len(clusters)),
		now:      metav1.NewTime(now.UTC().Truncate(time.Second)),
	}
	for _, c := range clusters {
		v.clusters = append(v.clusters, unreachable(c))
	}
	v.split, _ = wantSplit(obj, nil)
	v.clusters = slices.DeleteFunc(v.clusters, func(c ClusterReport) bool {
		if c.Leaving {
			v.leaving = append(v.leaving, c)
		}
		return c.Leaving
	})
	slices.SortFunc(v.clusters, func(a, b ClusterReport) int { return strings.Compare(a.Cluster, b.Cluster) })
	gk := obj.GroupVersionKind().GroupKind()
	var status any
	switch gk {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		status = v.deployment()
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		status = v.statefulSet()
	case schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		status = v.replicaSet()
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		status = v.daemonSet()
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		status = v.job()
	}
	events := v.events(gk)
	if status == nil {
		return nil, events
	}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(status)
	if err != nil {
		// Typed Kubernetes statuses always convert; should one not, say so rather than write half a status.
		return nil, append(events, Event{Type: corev1.EventTypeWarning, Reason: EventClusterDegraded,
			Message: fmt.Sprintf("cannot compute the status: %v", err)})
	}
	return out, events
}

// WritesStatus tells whether Status computes a status for objects of the kind gk: the manager writes it, and
// clears it when the namespace opts out.
func WritesStatus(gk schema.GroupKind) bool {
	switch gk {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "StatefulSet"},
		schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, schema.GroupKind{Group: "apps", Kind: "DaemonSet"},
		schema.GroupKind{Group: "batch", Kind: "Job"}:
		return true
	}
	return false
}

type view struct {
	obj   *unstructured.Unstructured
	name  string
	gen   int64
	split bool
	// clusters are the decided clusters, sorted; leaving those still serving on the way out (Leaving).
	clusters, leaving []ClusterReport
	now               metav1.Time
}

// previous decodes the object's status into a typed status; an empty one when it has none or it does not
// decode.
func (v view) previous(into any) {
	st, ok := v.obj.Object["status"].(map[string]any)
	if !ok {
		return
	}
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(st, into)
}

// observedGeneration is the generation when ready, else the previous observedGeneration (never above the
// generation, never going back).
func (v view) observedGeneration(ready bool, prev int64) int64 {
	if ready {
		return v.gen
	}
	return min(prev, v.gen)
}

// specReplicas is the object's .spec.replicas, 1 when unset as the API server defaults it.
func (v view) specReplicas() int64 {
	n, found, err := unstructured.NestedInt64(v.obj.Object, "spec", "replicas")
	if err != nil || !found {
		return 1
	}
	return max(n, 0)
}

// want is how many replicas the fleet should run in all: spec.replicas when split, that many per cluster when
// replicated.
func (v view) want(perObject int64) int64 {
	if v.split {
		return perObject
	}
	return perObject * int64(len(v.clusters))
}

// current reports whether the cluster carries the current manifest and its controller observed it.
func current(c ClusterReport) bool {
	if !c.CarriesCurrent {
		return false
	}
	gen, ok1 := c.Feedback.Integer(health.Generation)
	obs, ok2 := c.Feedback.Integer(health.ObservedGeneration)
	return ok1 && ok2 && obs >= gen
}

// replicaCounts are one cluster's counts of a Deployment, StatefulSet or ReplicaSet, made consistent as status
// validation requires (ready <= replicas, available <= ready, updated <= replicas) and updated capped at the
// cluster's spec.replicas.
type replicaCounts struct {
	spec                                int64
	hasSpec                             bool
	replicas, ready, available, updated int64
}

func countsOf(f health.Feedback) replicaCounts {
	c := replicaCounts{replicas: f.Count(health.Replicas)}
	c.spec, c.hasSpec = f.Integer(health.SpecReplicas)
	c.ready = min(f.Count(health.ReadyReplicas), c.replicas)
	c.available = min(f.Count(health.AvailableReplicas), c.ready)
	c.updated = min(f.Count(health.UpdatedReplicas), c.replicas)
	if c.hasSpec {
		c.updated = min(c.updated, c.spec)
	}
	return c
}

// rolledOut is kubectl rollout status's verdict on one cluster's Deployment (observed, as current checks).
func (c replicaCounts) rolledOut() bool {
	return c.hasSpec && c.updated >= c.spec && c.replicas <= c.updated && c.available >= c.updated
}

// sums adds the clusters' counts up; updated only of the decided clusters that carry and observed the current
// manifest. leaving are the leaving clusters' counts, included in replicas, ready and available.
type sums struct {
	replicas, ready, available, updated int64
	allCurrent                          bool
	currentClusters                     int
	leaving                             replicaCounts
}

// sum adds up the counts of every cluster, and returns the decided clusters' own (in v.clusters' order).
func (v view) sum() (sums, []replicaCounts) {
	// With no cluster decided nothing carries the current generation: it is not observed.
	s := sums{allCurrent: len(v.clusters) > 0}
	for _, c := range v.leaving {
		l := countsOf(c.Feedback)
		s.leaving.replicas += l.replicas
		s.leaving.ready += l.ready
		s.leaving.available += l.available
	}
	s.replicas, s.ready, s.available = s.leaving.replicas, s.leaving.ready, s.leaving.available
	per := make([]replicaCounts, len(v.clusters))
	for i, c := range v.clusters {
		per[i] = countsOf(c.Feedback)
		s.replicas += per[i].replicas
		s.ready += per[i].ready
		s.available += per[i].available
		if current(c) {
			s.updated += per[i].updated
			s.currentClusters++
		} else {
			s.allCurrent = false
		}
	}
	return s, per
}

func (v view) deployment() *appsv1.DeploymentStatus {
	var prev appsv1.DeploymentStatus
	v.previous(&prev)
	d := v.specReplicas()
	want := v.want(d)
	s, per := v.sum()

	var timedOut, failures []string
	settled := true // every cluster rolled out or timed out: what a replicated Deployment waits for
	for i, c := range v.clusters {
		if !current(c) {
			continue
		}
		out := c.Feedback.Text(health.ProgressingReason) == reasonProgressDeadlineExceeded
		if out {
			timedOut = append(timedOut, c.Cluster)
		}
		if c.Feedback.Text(health.ReplicaFailure) == string(corev1.ConditionTrue) {
			msg := c.Feedback.Text(health.ReplicaFailureMessage)
			if msg == "" {
				msg = "cannot create pods"
			}
			failures = append(failures, "cluster "+c.Cluster+": "+msg)
		}
		if !out && !per[i].rolledOut() {
			settled = false
		}
	}
	// A rollout that timed out on a cluster has failed: observing the generation lets kubectl rollout status
	// read the ProgressDeadlineExceeded condition and fail, rather than wait for the other clusters.
	observed := s.allCurrent && (v.split || settled) || len(timedOut) > 0

	st := &appsv1.DeploymentStatus{
		ObservedGeneration:  v.observedGeneration(observed, prev.ObservedGeneration),
		Replicas:            int32Of(s.replicas),
		UpdatedReplicas:     int32Of(s.updated),
		ReadyReplicas:       int32Of(s.ready),
		AvailableReplicas:   int32Of(s.available),
		UnavailableReplicas: int32Of(max(max(want, s.replicas)-s.available, 0)),
		CollisionCount:      prev.CollisionCount, // never decremented, as status validation requires
	}

	minAvailable := d - v.maxUnavailable(d)
	if !v.split {
		minAvailable *= int64(max(len(v.clusters), 1)) // with no cluster decided, one cluster's worth is missing
	}
	if s.available >= minAvailable {
		st.Conditions = append(st.Conditions, v.deploymentCondition(prev.Conditions, appsv1.DeploymentAvailable, corev1.ConditionTrue,
			reasonMinimumReplicasAvailable, "Deployment has minimum availability."))
	} else {
		st.Conditions = append(st.Conditions, v.deploymentCondition(prev.Conditions, appsv1.DeploymentAvailable, corev1.ConditionFalse,
			reasonMinimumReplicasUnavailable, "Deployment does not have minimum availability."))
	}
	complete := observed && s.updated == want && s.replicas == want && s.available == want
	switch {
	case len(timedOut) > 0:
		st.Conditions = append(st.Conditions, v.deploymentCondition(prev.Conditions, appsv1.DeploymentProgressing, corev1.ConditionFalse,
			reasonProgressDeadlineExceeded, fmt.Sprintf("Deployment %q has timed out progressing on %s %s.", v.name, text.Count(len(timedOut), "cluster", "clusters"), strings.Join(timedOut, ", "))))
	case complete:
		st.Conditions = append(st.Conditions, v.deploymentCondition(prev.Conditions, appsv1.DeploymentProgressing, corev1.ConditionTrue,
			reasonNewReplicaSetAvailable, fmt.Sprintf("Deployment %q has successfully progressed on %s.", v.name, text.Count(len(v.clusters), "cluster", "clusters"))))
	default:
		st.Conditions = append(st.Conditions, v.deploymentCondition(prev.Conditions, appsv1.DeploymentProgressing, corev1.ConditionTrue,
			reasonReplicaSetUpdated, fmt.Sprintf("Deployment %q is progressing: %d of %d replicas updated and %d available; %d of %s on generation %d.",
				v.name, s.updated, want, s.available, s.currentClusters, text.Count(len(v.clusters), "cluster", "clusters"), v.gen)))
	}
	if len(failures) > 0 {
		st.Conditions = append(st.Conditions, v.deploymentCondition(prev.Conditions, appsv1.DeploymentReplicaFailure, corev1.ConditionTrue,
			reasonFailedCreate, strings.Join(failures, "; ")))
	}
	return st
}

// maxUnavailable is the Deployment's maxUnavailable resolved against replicas, as the deployment controller
// resolves it (deploymentutil.MaxUnavailable): 0 for Recreate or 0 replicas; maxSurge rounded up and
// maxUnavailable down (25% each when unset); 1 when both come to 0; at most replicas.
func (v view) maxUnavailable(replicas int64) int64 {
	typ, _, _ := unstructured.NestedString(v.obj.Object, "spec", "strategy", "type")
	if typ == string(appsv1.RecreateDeploymentStrategyType) || replicas == 0 {
		return 0
	}
	surge, _ := intstr.GetScaledValueFromIntOrPercent(v.intOrPercent("maxSurge"), int(replicas), true)
	unavailable, _ := intstr.GetScaledValueFromIntOrPercent(v.intOrPercent("maxUnavailable"), int(replicas), false)
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return min(int64(max(unavailable, 0)), replicas)
}

func (v view) intOrPercent(field string) *intstr.IntOrString {
	def := intstr.FromString("25%")
	raw, found, _ := unstructured.NestedFieldNoCopy(v.obj.Object, "spec", "strategy", "rollingUpdate", field)
	if !found {
		return &def
	}
	switch x := raw.(type) {
	case int64:
		r := intstr.FromInt32(int32Of(x))
		return &r
	case float64:
		r := intstr.FromInt32(int32Of(int64(x)))
		return &r
	case string:
		if n, err := strconv.Atoi(x); err == nil {
			r := intstr.FromInt32(int32Of(int64(n)))
			return &r
		}
		r := intstr.FromString(x)
		return &r
	}
	return &def
}

func (v view) deploymentCondition(prev []appsv1.DeploymentCondition, t appsv1.DeploymentConditionType, status corev1.ConditionStatus,
	reason, message string) appsv1.DeploymentCondition {
	c := appsv1.DeploymentCondition{Type: t, Status: status, Reason: reason, Message: message, LastUpdateTime: v.now, LastTransitionTime: v.now}
	for _, p := range prev {
		if p.Type != t || p.Status != status {
			continue
		}
		c.LastTransitionTime = p.LastTransitionTime
		if p.Reason == reason && p.Message == message {
			c.LastUpdateTime = p.LastUpdateTime
		}
	}
	return c
}

func (v view) statefulSet() *appsv1.StatefulSetStatus {
	var prev appsv1.StatefulSetStatus
	v.previous(&prev)
	want := v.want(v.specReplicas())
	s, per := v.sum()
	settled := true
	s.ready, s.available = s.leaving.ready, s.leaving.available
	for i, c := range v.clusters {
		// kubectl rollout status compares readyReplicas with spec.replicas: a cluster's surplus of ready
		// replicas (scaling down) must not make up for another's shortage.
		if per[i].hasSpec {
			per[i].ready = min(per[i].ready, per[i].spec)
			per[i].available = min(per[i].available, per[i].ready)
		}
		s.ready += per[i].ready
		s.available += per[i].available
		rolledOut := per[i].hasSpec && per[i].ready >= per[i].spec && per[i].updated >= per[i].spec
		if current(c) && !rolledOut {
			settled = false
		}
	}
	observed := s.allCurrent && (v.split || settled)
	st := &appsv1.StatefulSetStatus{
		ObservedGeneration: v.observedGeneration(observed, prev.ObservedGeneration),
		Replicas:           int32Of(s.replicas),
		ReadyReplicas:      int32Of(s.ready),
		UpdatedReplicas:    int32Of(s.updated),
		AvailableReplicas:  int32Of(s.available),
		UpdateRevision:     v.name + "-" + strconv.FormatInt(v.gen, 10),
		CurrentRevision:    prev.CurrentRevision,
		CollisionCount:     prev.CollisionCount,
	}
	if observed && s.updated >= want && s.ready >= want {
		st.CurrentRevision = st.UpdateRevision
	}
	if st.CurrentRevision == st.UpdateRevision {
		st.CurrentReplicas = st.UpdatedReplicas
	} else {
		st.CurrentReplicas = st.Replicas - st.UpdatedReplicas
	}
	return st
}

func (v view) replicaSet() *appsv1.ReplicaSetStatus {
	var prev appsv1.ReplicaSetStatus
	v.previous(&prev)
	s, _ := v.sum()
	st := &appsv1.ReplicaSetStatus{
		ObservedGeneration:   v.observedGeneration(s.allCurrent, prev.ObservedGeneration),
		Replicas:             int32Of(s.replicas),
		FullyLabeledReplicas: int32Of(s.replicas),
		ReadyReplicas:        int32Of(s.ready),
		AvailableReplicas:    int32Of(s.available),
	}
	var failures []string
	for _, c := range v.clusters {
		if current(c) && c.Feedback.Text(health.ReplicaFailure) == string(corev1.ConditionTrue) {
			failures = append(failures, "cluster "+c.Cluster+": "+c.Feedback.Text(health.ReplicaFailureMessage))
		}
	}
	if len(failures) > 0 {
		c := appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: reasonFailedCreate,
			Message: strings.Join(failures, "; "), LastTransitionTime: v.now}
		for _, p := range prev.Conditions {
			if p.Type == c.Type && p.Status == c.Status {
				c.LastTransitionTime = p.LastTransitionTime
			}
		}
		st.Conditions = []appsv1.ReplicaSetCondition{c}
	}
	return st
}

func (v view) daemonSet() *appsv1.DaemonSetStatus {
	var prev appsv1.DaemonSetStatus
	v.previous(&prev)
	var desired, ready, available, updated int64
	allCurrent := len(v.clusters) > 0
	// add counts one cluster's desired, ready and available pods (ready and available at most desired).
	add := func(c ClusterReport) int64 {
		d := c.Feedback.Count(health.DesiredNumberScheduled)
		r := min(c.Feedback.Count(health.NumberReady), d)
		desired += d
		ready += r
		available += min(c.Feedback.Count(health.NumberAvailable), r)
		return d
	}
	for _, c := range v.leaving {
		add(c)
	}
	for _, c := range v.clusters {
		d := add(c)
		if current(c) {
			updated += min(c.Feedback.Count(health.UpdatedNumberScheduled), d)
		} else {
			allCurrent = false
		}
	}
	return &appsv1.DaemonSetStatus{
		ObservedGeneration:     v.observedGeneration(allCurrent, prev.ObservedGeneration),
		DesiredNumberScheduled: int32Of(desired),
		CurrentNumberScheduled: int32Of(desired),
		NumberReady:            int32Of(ready),
		NumberAvailable:        int32Of(available),
		NumberUnavailable:      int32Of(desired - available),
		UpdatedNumberScheduled: int32Of(updated),
		CollisionCount:         prev.CollisionCount,
	}
}

func int32Of(n int64) int32 {
	return int32(min(max(n, 0), math.MaxInt32))
}
