// Package database is the reference interpreter webhook (cmd/interpreter-webhook): it answers the four
// operations for one example kind, Database of group example.open-cluster-management.io, whose spec asks for
// replicas and names a credentialsSecret and whose status reports a phase (Ready, Provisioning, Failed) and
// readyInstances. It shows a webhook author each answer, and the tests call it in-process and as the binary.
package database

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
)

const (
	// Group and Kind are the kind this webhook interprets.
	Group = "example.open-cluster-management.io"
	Kind  = "Database"

	// Feedback names the webhook expects in status (the interpreter's statusFeedback names).
	FeedbackPhase          = "phase"
	FeedbackReadyInstances = "readyInstances"

	PhaseReady        = "Ready"
	PhaseProvisioning = "Provisioning"
	PhaseFailed       = "Failed"
)

// Handler serves the review protocol for Database.
func Handler() http.Handler { return webhook.Handler(Answer) }

// Answer answers one request.
func Answer(req webhook.Request) webhook.Response {
	if req.Kind.Group != Group || req.Kind.Kind != Kind {
		return webhook.Fail("this webhook interprets %s %s only, not %s %s", Group, Kind, req.Kind.Group, req.Kind.Kind)
	}
	var db database
	if len(req.Object) > 0 {
		if err := json.Unmarshal(req.Object, &db); err != nil {
			return webhook.Fail("object is not a Database: %v", err)
		}
	}
	switch req.Operation {
	case workv1alpha1.OperationInterpretHealth:
		return interpretHealth(db, req.Status)
	case workv1alpha1.OperationInterpretDependency:
		return dependencies(db)
	case workv1alpha1.OperationReviseReplica:
		return reviseReplica(db, req.DesiredReplicas)
	case workv1alpha1.OperationAggregateStatus:
		return aggregateStatus(req.ClusterStatuses)
	default:
		return webhook.Fail("unknown operation %q", req.Operation)
	}
}

type database struct {
	Spec *struct {
		Replicas          *int32 `json:"replicas"`
		CredentialsSecret string `json:"credentialsSecret"`
	} `json:"spec"`
}

// replicas is spec.replicas, 1 when unset.
func (d database) replicas() int64 {
	if d.Spec == nil || d.Spec.Replicas == nil {
		return 1
	}
	return int64(*d.Spec.Replicas)
}

// interpretHealth judges a Database on one cluster: Failed is Degraded, Provisioning is Progressing, Ready is
// Healthy once readyInstances reaches the cluster's spec.replicas.
func interpretHealth(db database, status webhook.Status) webhook.Response {
	want := db.replicas()
	ready, _ := status.Int(FeedbackReadyInstances) // not reported: 0
	phase, reported := status.String(FeedbackPhase)
	switch {
	case !reported:
		return state(webhook.StateProgressing, "WaitingForFeedback", "the agent has not reported the phase yet")
	case phase == PhaseFailed:
		return state(webhook.StateDegraded, "DatabaseFailed", fmt.Sprintf("phase Failed, %d of %d instances ready", ready, want))
	case phase == PhaseProvisioning:
		return state(webhook.StateProgressing, "Provisioning", fmt.Sprintf("provisioning, %d of %d instances ready", ready, want))
	case phase == PhaseReady && ready >= want:
		return state(webhook.StateHealthy, "", fmt.Sprintf("%d of %d instances ready", ready, want))
	case phase == PhaseReady:
		return state(webhook.StateProgressing, "InstancesNotReady", fmt.Sprintf("%d of %d instances ready", ready, want))
	default:
		return state(webhook.StateDegraded, "UnknownPhase", fmt.Sprintf("phase %q is none of Ready, Provisioning, Failed", phase))
	}
}

func state(s webhook.State, reason, message string) webhook.Response {
	healthy := s == webhook.StateHealthy
	return webhook.Response{Successful: true, Healthy: &healthy, State: s, Reason: reason, Message: message}
}

// dependencies is the Secret spec.credentialsSecret names, if any.
func dependencies(db database) webhook.Response {
	resp := webhook.Response{Successful: true}
	if db.Spec != nil && db.Spec.CredentialsSecret != "" {
		resp.Dependencies = []webhook.Dependency{{Kind: "Secret", Name: db.Spec.CredentialsSecret}}
	}
	return resp
}

// reviseReplica sets /spec/replicas (and /spec, when the object has none).
func reviseReplica(db database, desired *int32) webhook.Response {
	if desired == nil {
		return webhook.Fail("ReviseReplica without desiredReplicas")
	}
	var op any = map[string]any{"op": "add", "path": "/spec/replicas", "value": *desired}
	if db.Spec == nil {
		op = map[string]any{"op": "add", "path": "/spec", "value": map[string]any{"replicas": *desired}}
	}
	patch, err := json.Marshal([]any{op})
	if err != nil {
		return webhook.Fail("encoding the patch: %v", err)
	}
	resp := webhook.Response{Successful: true, Patch: patch, PatchType: webhook.PatchTypeJSONPatch}
	if db.Spec != nil && db.Spec.Replicas != nil {
		resp.Replicas = db.Spec.Replicas
	}
	return resp
}

// aggregateStatus sums readyInstances and counts the clusters per phase.
func aggregateStatus(clusters []webhook.ClusterStatus) webhook.Response {
	ready := workv1alpha1.AggregatedField{Name: FeedbackReadyInstances, Operation: workv1alpha1.AggregationSum}
	phases := workv1alpha1.AggregatedField{Name: FeedbackPhase, Operation: workv1alpha1.AggregationCount}
	var sum int64
	perPhase := map[string]int32{}
	for _, c := range clusters {
		if n, ok := c.Status.Int(FeedbackReadyInstances); ok {
			sum += n
			ready.Clusters++
		}
		if p, ok := c.Status.Text(FeedbackPhase); ok {
			perPhase[p]++
			phases.Clusters++
		}
	}
	if ready.Clusters > 0 {
		ready.Value = &sum
	}
	for value, n := range perPhase {
		phases.Counts = append(phases.Counts, workv1alpha1.ValueCount{Value: value, Clusters: n})
	}
	sort.Slice(phases.Counts, func(i, j int) bool {
		a, b := phases.Counts[i], phases.Counts[j]
		if a.Clusters != b.Clusters {
			return a.Clusters > b.Clusters
		}
		return a.Value < b.Value
	})
	if len(phases.Counts) > 10 {
		phases.Counts = phases.Counts[:10]
	}
	return webhook.Response{Successful: true, Status: []workv1alpha1.AggregatedField{ready, phases}}
}
