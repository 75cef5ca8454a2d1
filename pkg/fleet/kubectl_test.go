package fleet

import (
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// What kubectl reads of a status, transcribed from k8s.io/kubectl v0.35.1 (importing it would make it a direct
// dependency of the module): pkg/polymorphichelpers/rollout_status.go for kubectl rollout status, and
// pkg/cmd/wait/condition.go for kubectl wait --for=condition=. Each returns done, or an error where kubectl
// fails; not done is kubectl waiting.

var errTimedOut = errors.New("exceeded its progress deadline")

// withStatus is o with its status replaced.
func withStatus(o *unstructured.Unstructured, status map[string]any) *unstructured.Unstructured {
	c := o.DeepCopy()
	if status == nil {
		delete(c.Object, "status")
	} else {
		c.Object["status"] = status
	}
	return c
}

func typed[T any](t *testing.T, o *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, out); err != nil {
		t.Fatalf("the status does not decode into %T: %v", out, err)
	}
	return out
}

func deploymentRolloutStatus(t *testing.T, o *unstructured.Unstructured) (bool, error) {
	d := typed[appsv1.Deployment](t, o)
	if d.Generation <= d.Status.ObservedGeneration {
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
				return false, errTimedOut
			}
		}
		if d.Spec.Replicas != nil && d.Status.UpdatedReplicas < *d.Spec.Replicas {
			return false, nil
		}
		if d.Status.Replicas > d.Status.UpdatedReplicas {
			return false, nil
		}
		if d.Status.AvailableReplicas < d.Status.UpdatedReplicas {
			return false, nil
		}
		return true, nil
	}
	return false, nil
}

func daemonSetRolloutStatus(t *testing.T, o *unstructured.Unstructured) (bool, error) {
	ds := typed[appsv1.DaemonSet](t, o)
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
		return true, errors.New("rollout status is only available for RollingUpdate strategy type")
	}
	if ds.Generation <= ds.Status.ObservedGeneration {
		if ds.Status.UpdatedNumberScheduled < ds.Status.DesiredNumberScheduled {
			return false, nil
		}
		if ds.Status.NumberAvailable < ds.Status.DesiredNumberScheduled {
			return false, nil
		}
		return true, nil
	}
	return false, nil
}

func statefulSetRolloutStatus(t *testing.T, o *unstructured.Unstructured) (bool, error) {
	sts := typed[appsv1.StatefulSet](t, o)
	if sts.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType {
		return true, errors.New("rollout status is only available for RollingUpdate strategy type")
	}
	if sts.Status.ObservedGeneration == 0 || sts.Generation > sts.Status.ObservedGeneration {
		return false, nil
	}
	if sts.Spec.Replicas != nil && sts.Status.ReadyReplicas < *sts.Spec.Replicas {
		return false, nil
	}
	if sts.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && sts.Spec.UpdateStrategy.RollingUpdate != nil {
		if sts.Spec.Replicas != nil && sts.Spec.UpdateStrategy.RollingUpdate.Partition != nil {
			if sts.Status.UpdatedReplicas < (*sts.Spec.Replicas - *sts.Spec.UpdateStrategy.RollingUpdate.Partition) {
				return false, nil
			}
		}
		return true, nil
	}
	if sts.Status.UpdateRevision != sts.Status.CurrentRevision {
		return false, nil
	}
	return true, nil
}

// conditionTrue is kubectl wait --for=condition=<name>'s check of one object.
func conditionTrue(o *unstructured.Unstructured, name string) bool {
	conditions, found, err := unstructured.NestedSlice(o.Object, "status", "conditions")
	if err != nil || !found {
		return false
	}
	for _, raw := range conditions {
		c := raw.(map[string]any)
		typ, found, err := unstructured.NestedString(c, "type")
		if !found || err != nil || !strings.EqualFold(typ, name) {
			continue
		}
		s, found, err := unstructured.NestedString(c, "status")
		if !found || err != nil {
			continue
		}
		if gen, found, _ := unstructured.NestedInt64(o.Object, "metadata", "generation"); found {
			observed, found, _ := unstructured.NestedInt64(c, "observedGeneration")
			if !found {
				observed, found, _ = unstructured.NestedInt64(o.Object, "status", "observedGeneration")
			}
			if found && observed < gen {
				return false
			}
		}
		return strings.EqualFold(s, "True")
	}
	return false
}
