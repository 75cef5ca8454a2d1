package scoreagent_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/guard"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/headroom"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent/latency"
)

// oneNode is a cluster of one 4-core node running a pod that requests 1 core.
type oneNode struct{}

func (oneNode) ListNodes(context.Context) ([]corev1.Node, error) {
	return []corev1.Node{{
		ObjectMeta: metav1.ObjectMeta{Name: "worker"},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}}, nil
}

func (oneNode) ListPods(context.Context) ([]corev1.Pod, error) {
	return []corev1.Pod{{Spec: corev1.PodSpec{NodeName: "worker", Containers: []corev1.Container{{
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
	}}}}}, nil
}

// How the agent wires the plugins and checks a generator's requests before measuring any.
func Example() {
	allow, err := guard.ParseAllowlist("") // the --allow flag: public addresses only
	if err != nil {
		panic(err)
	}
	registry, err := scoreagent.NewRegistry(
		latency.New(guard.New(guard.Config{Allow: allow})),
		headroom.New(oneNode{}),
	)
	if err != nil {
		panic(err)
	}

	// A generator's spec.latencies and otherPlugin entries, as the controller maps them.
	requests := []scoreagent.Request{
		latency.NewRequest("redhat-com-avgLatency", latency.Probe{URL: "https://redhat.com", Runs: 2, WaitBetweenRuns: 10 * time.Second}),
		latency.NewRequest("metadata", latency.Probe{URL: "http://169.254.169.254/latest/meta-data"}),
		latency.NewRequest("slow", latency.Probe{URL: "https://example.com", Runs: 50}),
		{Plugin: headroom.Name, ScoreName: "cpu-free", Options: map[string]string{"resource": "cpu"}},
		{Plugin: "gpu", ScoreName: "gpu-free"},
	}
	err = registry.ValidateAll(requests)
	fmt.Println(strings.ReplaceAll(err.Error(), "; score", ";\nscore"))

	res, err := registry.Measure(context.Background(), requests[3])
	fmt.Println(res.Value, res.Raw, err)

	// Output:
	// score "metadata": url http://169.254.169.254/latest/meta-data: refused: 169.254.169.254 is a link-local (cloud metadata) address; allow it with --allow=169.254.169.254/32;
	// score "slow": runs is 50, at most 10;
	// score "gpu-free": plugin "gpu" is not known to this agent (it knows latency, node-headroom)
	// 50 3 cores free <nil>
}
