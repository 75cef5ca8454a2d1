package database

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter/webhook"
)

var gvk = metav1.GroupVersionKind{Group: Group, Version: "v1", Kind: Kind}

// db is a Database manifest; spec is its spec's JSON, none when empty.
func db(spec string) json.RawMessage {
	obj := `{"apiVersion":"example.open-cluster-management.io/v1","kind":"Database","metadata":{"name":"orders","namespace":"shop"}`
	if spec != "" {
		obj += `,"spec":` + spec
	}
	return json.RawMessage(obj + "}")
}

func healthReq(spec string, status webhook.Status) webhook.Request {
	return webhook.Request{UID: "u", Kind: gvk, Operation: workv1alpha1.OperationInterpretHealth, Object: db(spec), Cluster: "east", Status: status}
}

func TestAnswer(t *testing.T) {
	cases := map[string]struct {
		req  webhook.Request
		want webhook.Response
	}{
		"ready, all instances": {
			req:  healthReq(`{"replicas":3}`, webhook.Status{"phase": "Ready", "readyInstances": float64(3)}),
			want: webhook.Response{Successful: true, Healthy: ptr.To(true), State: webhook.StateHealthy, Message: "3 of 3 instances ready"},
		},
		"ready, replicas unset means 1": {
			req:  healthReq(`{}`, webhook.Status{"phase": "Ready", "readyInstances": json.Number("1")}),
			want: webhook.Response{Successful: true, Healthy: ptr.To(true), State: webhook.StateHealthy, Message: "1 of 1 instances ready"},
		},
		"ready, fewer instances than the share": {
			req:  healthReq(`{"replicas":3}`, webhook.Status{"phase": "Ready", "readyInstances": float64(2)}),
			want: webhook.Response{Successful: true, Healthy: ptr.To(false), State: webhook.StateProgressing, Reason: "InstancesNotReady", Message: "2 of 3 instances ready"},
		},
		"provisioning": {
			req:  healthReq(`{"replicas":3}`, webhook.Status{"phase": "Provisioning"}),
			want: webhook.Response{Successful: true, Healthy: ptr.To(false), State: webhook.StateProgressing, Reason: "Provisioning", Message: "provisioning, 0 of 3 instances ready"},
		},
		"failed": {
			req:  healthReq(`{"replicas":3}`, webhook.Status{"phase": "Failed", "readyInstances": float64(1)}),
			want: webhook.Response{Successful: true, Healthy: ptr.To(false), State: webhook.StateDegraded, Reason: "DatabaseFailed", Message: "phase Failed, 1 of 3 instances ready"},
		},
		"not reported": {
			req:  healthReq(`{"replicas":3}`, nil),
			want: webhook.Response{Successful: true, Healthy: ptr.To(false), State: webhook.StateProgressing, Reason: "WaitingForFeedback", Message: "the agent has not reported the phase yet"},
		},
		"unknown phase": {
			req:  healthReq(`{"replicas":3}`, webhook.Status{"phase": "Sleeping"}),
			want: webhook.Response{Successful: true, Healthy: ptr.To(false), State: webhook.StateDegraded, Reason: "UnknownPhase", Message: `phase "Sleeping" is none of Ready, Provisioning, Failed`},
		},
		"dependencies": {
			req:  webhook.Request{UID: "u", Kind: gvk, Operation: workv1alpha1.OperationInterpretDependency, Object: db(`{"credentialsSecret":"orders-credentials"}`)},
			want: webhook.Response{Successful: true, Dependencies: []webhook.Dependency{{Kind: "Secret", Name: "orders-credentials"}}},
		},
		"dependencies, none": {
			req:  webhook.Request{UID: "u", Kind: gvk, Operation: workv1alpha1.OperationInterpretDependency, Object: db(`{"replicas":1}`)},
			want: webhook.Response{Successful: true},
		},
		"revise replica": {
			req: webhook.Request{UID: "u", Kind: gvk, Operation: workv1alpha1.OperationReviseReplica, Object: db(`{"replicas":5}`), DesiredReplicas: ptr.To[int32](2)},
			want: webhook.Response{Successful: true, Replicas: ptr.To[int32](5), PatchType: webhook.PatchTypeJSONPatch,
				Patch: webhook.Patch(`[{"op":"add","path":"/spec/replicas","value":2}]`)},
		},
		"revise replica, no spec": {
			req: webhook.Request{UID: "u", Kind: gvk, Operation: workv1alpha1.OperationReviseReplica, Object: db(""), DesiredReplicas: ptr.To[int32](2)},
			want: webhook.Response{Successful: true, PatchType: webhook.PatchTypeJSONPatch,
				Patch: webhook.Patch(`[{"op":"add","path":"/spec","value":{"replicas":2}}]`)},
		},
		"revise replica without desiredReplicas": {
			req:  webhook.Request{UID: "u", Kind: gvk, Operation: workv1alpha1.OperationReviseReplica, Object: db(`{"replicas":5}`)},
			want: webhook.Fail("ReviseReplica without desiredReplicas"),
		},
		"aggregate status": {
			req: webhook.Request{UID: "u", Kind: gvk, Operation: workv1alpha1.OperationAggregateStatus, Object: db(`{"replicas":5}`),
				ClusterStatuses: []webhook.ClusterStatus{
					{Cluster: "a", Status: webhook.Status{"phase": "Ready", "readyInstances": float64(2)}},
					{Cluster: "b", Status: webhook.Status{"phase": "Provisioning", "readyInstances": float64(1)}},
					{Cluster: "c", Status: webhook.Status{"phase": "Ready", "readyInstances": float64(2)}},
					{Cluster: "d"},
				}},
			want: webhook.Response{Successful: true, Status: []workv1alpha1.AggregatedField{
				{Name: "readyInstances", Operation: workv1alpha1.AggregationSum, Value: ptr.To[int64](5), Clusters: 3},
				{Name: "phase", Operation: workv1alpha1.AggregationCount, Clusters: 3, Counts: []workv1alpha1.ValueCount{
					{Value: "Ready", Clusters: 2}, {Value: "Provisioning", Clusters: 1},
				}},
			}},
		},
		"aggregate status, nothing reported": {
			req: webhook.Request{UID: "u", Kind: gvk, Operation: workv1alpha1.OperationAggregateStatus},
			want: webhook.Response{Successful: true, Status: []workv1alpha1.AggregatedField{
				{Name: "readyInstances", Operation: workv1alpha1.AggregationSum},
				{Name: "phase", Operation: workv1alpha1.AggregationCount},
			}},
		},
		"another kind": {
			req:  webhook.Request{UID: "u", Kind: metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Operation: workv1alpha1.OperationInterpretHealth},
			want: webhook.Fail("this webhook interprets example.open-cluster-management.io Database only, not apps Deployment"),
		},
		"not an object": {
			req:  webhook.Request{UID: "u", Kind: gvk, Operation: workv1alpha1.OperationInterpretHealth, Object: json.RawMessage(`[1]`)},
			want: webhook.Fail("object is not a Database: json: cannot unmarshal array into Go value of type database.database"),
		},
		"unknown operation": {
			req:  webhook.Request{UID: "u", Kind: gvk, Operation: "Retain"},
			want: webhook.Fail(`unknown operation "Retain"`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Answer(tc.req)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			// Every successful answer passes the manager's check.
			if got.Successful {
				got.UID = tc.req.UID
				if err := webhook.Check(tc.req, &got); err != nil {
					t.Errorf("the manager would reject the answer: %v", err)
				}
			}
		})
	}
}

// TestReviseReplicaApplies applies the answers' patches as the manager does.
func TestReviseReplicaApplies(t *testing.T) {
	for _, spec := range []string{`{"replicas":5,"credentialsSecret":"s"}`, `{}`, ""} {
		t.Run(fmt.Sprintf("spec %q", spec), func(t *testing.T) {
			object := db(spec)
			resp := Answer(webhook.Request{UID: "u", Kind: gvk, Operation: workv1alpha1.OperationReviseReplica, Object: object, DesiredReplicas: ptr.To[int32](2)})
			revised, err := webhook.ApplyPatch(object, &resp)
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Spec struct {
					Replicas int32 `json:"replicas"`
				} `json:"spec"`
			}
			if err := json.Unmarshal(revised, &got); err != nil || got.Spec.Replicas != 2 {
				t.Errorf("revised %s (%v), want spec.replicas 2", revised, err)
			}
		})
	}
}
