package interpreter

import (
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// Webhooks calls a ResourceInterpreter's webhook. This package does no I/O: the manager passes one
// (internal/interpreterwebhook.Caller), which bounds each call by the webhook's timeout and remembers answers,
// so a reconcile that asks the same question again is not another round trip, and a reconcile its own
// (ResolveWithWebhooks, internal/interpreterwebhook.Session), which does not ask a webhook that timed out
// again in that reconcile.
type Webhooks interface {
	Call(hook *workv1alpha1.InterpreterWebhook, req webhook.Request) (*webhook.Response, error)
}

// withWebhooks is the interpreter calling its webhook through w: a copy, since compiled interpreters are
// shared by reconciles; itself when it has no webhook.
func (i *Interpreter) withWebhooks(w Webhooks) *Interpreter {
	if i.hook == nil {
		return i
	}
	c := *i
	c.webhooks = w
	return &c
}

// serves reports whether the interpreter has a webhook for op.
func (i *Interpreter) serves(op workv1alpha1.InterpreterOperation) bool {
	return i.hook != nil && webhook.Serves(i.hook, op)
}

// call asks the webhook; without a caller the call fails as an unreachable webhook would.
func (i *Interpreter) call(req webhook.Request) (*webhook.Response, error) {
	if i.webhooks == nil {
		return nil, fmt.Errorf("the manager has no webhook client")
	}
	return i.webhooks.Call(i.hook, req)
}

// ignoreFailures is the webhook's failurePolicy: Ignore falls back to the declarative parts and the built-in
// interpretation; Fail (the default) reports the failure.
func (i *Interpreter) ignoreFailures() bool {
	return i.hook.FailurePolicy == workv1alpha1.FailurePolicyIgnore
}

// request is the part of a webhook request that names the manifest.
func request(op workv1alpha1.InterpreterOperation, m template.Manifest, object map[string]any) (webhook.Request, error) {
	raw, err := json.Marshal(object)
	if err != nil {
		return webhook.Request{}, err
	}
	return webhook.Request{
		Operation: op,
		Kind:      metav1.GroupVersionKind{Group: m.GVK.Group, Version: m.GVK.Version, Kind: m.GVK.Kind},
		Name:      m.Object.GetName(), Namespace: m.Object.GetNamespace(),
		Object: raw,
	}, nil
}

// webhookHealth asks the webhook for the manifest's health on one cluster.
func (i *Interpreter) webhookHealth(in health.ManifestInput, f health.Feedback) (health.Verdict, error) {
	req, err := request(workv1alpha1.OperationInterpretHealth, in.Manifest, in.Delivered())
	if err != nil {
		return health.Verdict{}, err
	}
	req.Status = webhook.StatusOf(f)
	resp, err := i.call(req)
	if err != nil {
		return health.Verdict{}, err
	}
	return resp.Verdict()
}

// webhookDependencies asks the webhook for the hub objects the manifest obj needs.
func (i *Interpreter) webhookDependencies(obj map[string]any) ([]Dependency, error) {
	u := &unstructured.Unstructured{Object: obj}
	req, err := request(workv1alpha1.OperationInterpretDependency, template.Manifest{Object: u, GVK: u.GroupVersionKind()}, obj)
	if err != nil {
		return nil, err
	}
	resp, err := i.call(req)
	if err != nil {
		return nil, err
	}
	// A copy: answers are remembered and shared, and Dependencies sorts what it gets.
	return slices.Clone(resp.Dependencies), nil
}

// ReportsAggregateStatusFailures reports whether the interpreter has a webhook for AggregateStatus whose
// failures are reported (failurePolicy Fail) rather than replaced by the declarative aggregation.
func (i *Interpreter) ReportsAggregateStatusFailures() bool {
	return i.serves(workv1alpha1.OperationAggregateStatus) && !i.ignoreFailures()
}

// AggregateStatus asks the webhook to roll the clusters' reported values of manifest m up; ok is false when
// the interpreter has no webhook for it, or the webhook failed and its failure policy is Ignore. A failure
// under Fail is an error naming the interpreter.
func (i *Interpreter) AggregateStatus(m template.Manifest, clusters []string, feedback []health.Feedback) (fields []workv1alpha1.AggregatedField, ok bool, err error) {
	if !i.serves(workv1alpha1.OperationAggregateStatus) {
		return nil, false, nil
	}
	req, err := request(workv1alpha1.OperationAggregateStatus, m, m.Object.Object)
	if err == nil {
		for n, c := range clusters {
			req.ClusterStatuses = append(req.ClusterStatuses, webhook.ClusterStatus{Cluster: c, Status: webhook.StatusOf(feedback[n])})
		}
		var resp *webhook.Response
		if resp, err = i.call(req); err == nil {
			return resp.Status, true, nil
		}
	}
	if i.ignoreFailures() {
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("%s: webhook AggregateStatus: %w", i.Name(), err)
}

// ReviseReplicas asks the webhook for manifest m with its replicas set to a cluster's share (ReviseReplica):
// for kinds whose replicas are not one integer field (worker groups in a list). ok is false when the
// interpreter has no webhook for it, or the webhook failed and its failure policy is Ignore (the split then
// sets the replicas fields itself). A failure under Fail is an error naming the interpreter.
func (i *Interpreter) ReviseReplicas(m template.Manifest, replicas int32) (revised map[string]any, ok bool, err error) {
	if !i.serves(workv1alpha1.OperationReviseReplica) {
		return nil, false, nil
	}
	revised, err = i.reviseReplicas(m, replicas)
	switch {
	case err == nil:
		return revised, true, nil
	case i.ignoreFailures():
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("%s: webhook ReviseReplica: %w", i.Name(), err)
}

func (i *Interpreter) reviseReplicas(m template.Manifest, replicas int32) (map[string]any, error) {
	req, err := request(workv1alpha1.OperationReviseReplica, m, m.Object.Object)
	if err != nil {
		return nil, err
	}
	req.DesiredReplicas = &replicas
	resp, err := i.call(req)
	if err != nil {
		return nil, err
	}
	raw, err := webhook.ApplyPatch(req.Object, resp)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}
