package headroom

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
)

// node is a Ready node with the given allocatable CPU and memory.
func node(name, cpu, mem string, opts ...func(*corev1.Node)) corev1.Node {
	n := corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	for _, o := range opts {
		o(&n)
	}
	return n
}

func cordoned(n *corev1.Node)    { n.Spec.Unschedulable = true }
func notReady(n *corev1.Node)    { n.Status.Conditions[0].Status = corev1.ConditionUnknown }
func noCondition(n *corev1.Node) { n.Status.Conditions = nil }
func tainted(effect corev1.TaintEffect) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: effect})
	}
}

// pod is a running pod on nodeName with one container requesting cpu and mem ("" for none).
func pod(nodeName, cpu, mem string, opts ...func(*corev1.Pod)) corev1.Pod {
	p := corev1.Pod{
		Spec:   corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{container(cpu, mem)}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

func container(cpu, mem string) corev1.Container {
	c := corev1.Container{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}
	if cpu != "" {
		c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return c
}

func phase(ph corev1.PodPhase) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Status.Phase = ph } }
func containers(cs ...corev1.Container) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Spec.Containers = append(p.Spec.Containers, cs...) }
}
func initContainer(cpu string, sidecar bool) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		c := container(cpu, "")
		if sidecar {
			always := corev1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
}
func podLevelCPU(cpu string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
}
func overheadCPU(cpu string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
}

func TestPodRequest(t *testing.T) {
	cases := map[string]struct {
		pod    corev1.Pod
		cpu    int64
		memory int64
	}{
		"one container":              {pod: pod("n", "250m", "1Gi"), cpu: 250, memory: 1 << 30},
		"no requests":                {pod: pod("n", "", ""), cpu: 0, memory: 0},
		"containers add up":          {pod: pod("n", "250m", "", containers(container("500m", "64Mi"))), cpu: 750, memory: 64 << 20},
		"a smaller init container":   {pod: pod("n", "1", "", initContainer("500m", false)), cpu: 1000},
		"a larger init container":    {pod: pod("n", "1", "", initContainer("2", false)), cpu: 2000},
		"init containers take turns": {pod: pod("n", "1", "", initContainer("1500m", false), initContainer("1200m", false)), cpu: 1500},
		"a sidecar adds up": {
			pod: pod("n", "1", "", initContainer("200m", true)),
			cpu: 1200,
		},
		"an init container after a sidecar runs beside it": {
			pod: pod("n", "1", "", initContainer("200m", true), initContainer("1900m", false)),
			cpu: 2100,
		},
		"an init container before a sidecar runs alone": {
			pod: pod("n", "1", "", initContainer("1900m", false), initContainer("200m", true)),
			cpu: 1900,
		},
		"a pod-level request wins": {pod: pod("n", "1", "1Gi", podLevelCPU("3")), cpu: 3000, memory: 1 << 30},
		"overhead adds":            {pod: pod("n", "1", "", overheadCPU("100m")), cpu: 1100},
		"overhead adds to pod level": {
			pod: pod("n", "1", "", podLevelCPU("2"), overheadCPU("100m")),
			cpu: 2100,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := PodRequest(&tc.pod, corev1.ResourceCPU); got != tc.cpu {
				t.Errorf("CPU = %dm, want %dm", got, tc.cpu)
			}
			if got := PodRequest(&tc.pod, corev1.ResourceMemory); got != tc.memory {
				t.Errorf("memory = %d, want %d", got, tc.memory)
			}
		})
	}
}

func TestFree(t *testing.T) {
	nodes := []corev1.Node{
		node("b", "4", "16Gi"),
		node("a", "2", "8Gi"),
		node("cordoned", "8", "32Gi", cordoned),
		node("not-ready", "8", "32Gi", notReady),
		node("unknown", "8", "32Gi", noCondition),
		node("control-plane", "8", "32Gi", tainted(corev1.TaintEffectNoSchedule)),
		node("draining", "8", "32Gi", tainted(corev1.TaintEffectNoExecute)),
		node("preferred", "1", "1Gi", tainted(corev1.TaintEffectPreferNoSchedule)),
		node("over", "1", "1Gi"),
	}
	pods := []corev1.Pod{
		pod("a", "500m", "1Gi"),
		pod("a", "250m", "1Gi", phase(corev1.PodPending)),
		pod("a", "1", "1Gi", phase(corev1.PodSucceeded)),
		pod("a", "1", "1Gi", phase(corev1.PodFailed)),
		pod("b", "1", "2Gi"),
		pod("", "1", "1Gi", phase(corev1.PodPending)), // not scheduled yet
		pod("cordoned", "1", "1Gi"),
		pod("gone", "1", "1Gi"),
		pod("over", "1500m", "1Gi"),
	}
	wantFree := []NodeFree{
		{Node: "a", Allocatable: 2000, Requested: 750, Free: 1250},
		{Node: "b", Allocatable: 4000, Requested: 1000, Free: 3000},
		{Node: "over", Allocatable: 1000, Requested: 1500, Free: 0},
		{Node: "preferred", Allocatable: 1000, Free: 1000},
	}
	wantSkipped := []Skipped{
		{Node: "control-plane", Reason: "tainted node-role.kubernetes.io/control-plane:NoSchedule"},
		{Node: "cordoned", Reason: "cordoned"},
		{Node: "draining", Reason: "tainted node-role.kubernetes.io/control-plane:NoExecute"},
		{Node: "not-ready", Reason: "not Ready"},
		{Node: "unknown", Reason: "not Ready"},
	}
	free, skipped := Free(nodes, pods, corev1.ResourceCPU)
	if diff := cmp.Diff(wantFree, free); diff != "" {
		t.Errorf("free (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}

func TestScore(t *testing.T) {
	cases := map[string]struct {
		free, full int64
		want       int32
	}{
		"nothing free":          {free: 0, full: 1000, want: -100},
		"a quarter":             {free: 250, full: 1000, want: -50},
		"half":                  {free: 500, full: 1000, want: 0},
		"three quarters":        {free: 750, full: 1000, want: 50},
		"all":                   {free: 1000, full: 1000, want: 100},
		"more than full":        {free: 5000, full: 1000, want: 100},
		"a sliver rounds":       {free: 1, full: 1000, want: -100},
		"nothing to count":      {free: 0, full: 0, want: -100},
		"negative free":         {free: -5, full: 1000, want: -100},
		"bytes do not overflow": {free: 1 << 60, full: 1 << 61, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Score(tc.free, tc.full); got != tc.want {
				t.Errorf("Score(%d, %d) = %d, want %d", tc.free, tc.full, got, tc.want)
			}
		})
	}
	// More free never scores less.
	for full := int64(1); full < 300; full += 7 {
		prev := int32(-100)
		for free := int64(-1); free <= full+1; free++ {
			got := Score(free, full)
			if got < prev || got < -100 || got > 100 {
				t.Fatalf("Score(%d, %d) = %d after %d", free, full, got, prev)
			}
			prev = got
		}
	}
}

func TestParseOptions(t *testing.T) {
	cases := map[string]struct {
		opts    map[string]string
		want    Settings
		wantErr string
	}{
		"the defaults": {want: Settings{Resource: corev1.ResourceCPU, Aggregate: AggregateSum}},
		"every option": {
			opts: map[string]string{"resource": "memory", "aggregate": "max", "full": "64Gi"},
			want: Settings{Resource: corev1.ResourceMemory, Aggregate: AggregateMax, Full: 64 << 30},
		},
		"full cores":        {opts: map[string]string{"full": "8"}, want: Settings{Resource: corev1.ResourceCPU, Aggregate: AggregateSum, Full: 8000}},
		"full millicores":   {opts: map[string]string{"full": "500m"}, want: Settings{Resource: corev1.ResourceCPU, Aggregate: AggregateSum, Full: 500}},
		"an unknown option": {opts: map[string]string{"resources": "cpu"}, wantErr: `unknown option "resources"; known options: aggregate, full, resource`},
		"a GPU":             {opts: map[string]string{"resource": "nvidia.com/gpu"}, wantErr: `resource "nvidia.com/gpu" is not one of cpu, memory`},
		"an average":        {opts: map[string]string{"aggregate": "mean"}, wantErr: `aggregate "mean" is not one of sum, max`},
		"full is not a quantity": {
			opts:    map[string]string{"full": "lots"},
			wantErr: `full "lots" is not a quantity such as 8 (cores) or 64Gi`,
		},
		"full is zero":     {opts: map[string]string{"full": "0"}, wantErr: "full is 0, it must be more than 0"},
		"full is negative": {opts: map[string]string{"full": "-1Gi", "resource": "memory"}, wantErr: "full is -1Gi, it must be more than 0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseOptions(tc.opts)
			if errString(err) != tc.wantErr {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseOptions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeadroom(t *testing.T) {
	two := []corev1.Node{node("a", "4", "16Gi"), node("b", "4", "16Gi")}
	busy := []corev1.Pod{pod("a", "3", "12Gi"), pod("b", "1500m", "4Gi")}
	cases := map[string]struct {
		nodes    []corev1.Node
		pods     []corev1.Pod
		settings Settings
		want     scoreagent.Result
	}{
		"idle": {
			nodes:    two,
			settings: Settings{Resource: corev1.ResourceCPU, Aggregate: AggregateSum},
			want:     scoreagent.Result{Value: 100, Raw: "8 cores free"},
		},
		"sum of CPU": {
			nodes: two, pods: busy,
			settings: Settings{Resource: corev1.ResourceCPU, Aggregate: AggregateSum},
			// 3.5 of 8 free: 200*3.5/8-100 = -12.5, rounded away from zero.
			want: scoreagent.Result{Value: -13, Raw: "3.5 cores free"},
		},
		"the most on one node": {
			nodes: two, pods: busy,
			settings: Settings{Resource: corev1.ResourceCPU, Aggregate: AggregateMax},
			// 2.5 of b's 4.
			want: scoreagent.Result{Value: 25, Raw: "2.5 cores free on b"},
		},
		"the most on one node against full": {
			nodes: two, pods: busy,
			// 2.5 of 10 cores.
			settings: Settings{Resource: corev1.ResourceCPU, Aggregate: AggregateMax, Full: 10000},
			want:     scoreagent.Result{Value: -50, Raw: "2.5 cores free on b"},
		},
		"memory": {
			nodes: two, pods: busy,
			settings: Settings{Resource: corev1.ResourceMemory, Aggregate: AggregateSum},
			// 16Gi of 32Gi.
			want: scoreagent.Result{Value: 0, Raw: "16Gi free"},
		},
		"memory against full": {
			nodes: two, pods: busy,
			settings: Settings{Resource: corev1.ResourceMemory, Aggregate: AggregateMax, Full: 24 << 30},
			// 12Gi on b of 24Gi.
			want: scoreagent.Result{Value: 0, Raw: "12Gi free on b"},
		},
		"a little memory": {
			nodes:    []corev1.Node{node("a", "1", "1536Mi")},
			pods:     []corev1.Pod{pod("a", "", "1Gi")},
			settings: Settings{Resource: corev1.ResourceMemory, Aggregate: AggregateSum},
			want:     scoreagent.Result{Value: -33, Raw: "512Mi free"},
		},
		"some nodes left out": {
			nodes:    append([]corev1.Node{node("c", "64", "1Ti", cordoned), node("d", "64", "1Ti", notReady)}, two...),
			settings: Settings{Resource: corev1.ResourceCPU, Aggregate: AggregateSum},
			want:     scoreagent.Result{Value: 100, Raw: "8 cores free", Message: "left out 2 of 4 nodes: c (cordoned), d (not Ready)"},
		},
		"no node takes workloads": {
			nodes:    []corev1.Node{node("c", "64", "1Ti", cordoned)},
			settings: Settings{Resource: corev1.ResourceCPU, Aggregate: AggregateMax},
			want:     scoreagent.Result{Value: -100, Raw: "0 cores free", Message: "no node takes workloads: 1 of 1 nodes: c (cordoned)"},
		},
		"no nodes": {
			settings: Settings{Resource: corev1.ResourceCPU, Aggregate: AggregateSum},
			want:     scoreagent.Result{Value: -100, Raw: "0 cores free", Message: "the cluster has no nodes"},
		},
		"many left out": {
			nodes: []corev1.Node{
				node("a", "1", "1Gi"), node("n1", "1", "1Gi", cordoned), node("n2", "1", "1Gi", cordoned), node("n3", "1", "1Gi", cordoned),
				node("n4", "1", "1Gi", cordoned), node("n5", "1", "1Gi", cordoned), node("n6", "1", "1Gi", cordoned), node("n7", "1", "1Gi", cordoned),
			},
			settings: Settings{Resource: corev1.ResourceCPU, Aggregate: AggregateSum},
			want: scoreagent.Result{Value: 100, Raw: "1 core free",
				Message: "left out 7 of 8 nodes: n1 (cordoned), n2 (cordoned), n3 (cordoned), n4 (cordoned), n5 (cordoned), and 2 more"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Headroom(tc.nodes, tc.pods, tc.settings)); diff != "" {
				t.Errorf("Headroom (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	cases := map[string]struct {
		v    int64
		r    corev1.ResourceName
		want string
	}{
		"no cores":       {v: 0, r: corev1.ResourceCPU, want: "0 cores"},
		"millicores":     {v: 250, r: corev1.ResourceCPU, want: "0.25 cores"},
		"one core":       {v: 1000, r: corev1.ResourceCPU, want: "1 core"},
		"cores":          {v: 3500, r: corev1.ResourceCPU, want: "3.5 cores"},
		"no memory":      {v: 0, r: corev1.ResourceMemory, want: "0Mi"},
		"mebibytes":      {v: 512 << 20, r: corev1.ResourceMemory, want: "512Mi"},
		"gibibytes":      {v: 12 << 30, r: corev1.ResourceMemory, want: "12Gi"},
		"rounded down":   {v: 12<<30 + 1000<<20, r: corev1.ResourceMemory, want: "12.9Gi"},
		"a huge node":    {v: 2 << 40, r: corev1.ResourceMemory, want: "2048Gi"},
		"a partial mebi": {v: 1<<20 + 1, r: corev1.ResourceMemory, want: "1Mi"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := format(tc.v, tc.r); got != tc.want {
				t.Errorf("format = %q, want %q", got, tc.want)
			}
		})
	}
}

// fakeLister lists what the test gives it.
type fakeLister struct {
	nodes             []corev1.Node
	pods              []corev1.Pod
	nodesErr, podsErr error
}

func (f fakeLister) ListNodes(context.Context) ([]corev1.Node, error) { return f.nodes, f.nodesErr }
func (f fakeLister) ListPods(context.Context) ([]corev1.Pod, error)   { return f.pods, f.podsErr }

func TestMeasure(t *testing.T) {
	lister := fakeLister{nodes: []corev1.Node{node("a", "4", "16Gi")}, pods: []corev1.Pod{pod("a", "1", "4Gi")}}
	cases := map[string]struct {
		lister  Lister
		opts    map[string]string
		want    scoreagent.Result
		wantErr string
	}{
		"CPU":               {lister: lister, want: scoreagent.Result{Value: 50, Raw: "3 cores free"}},
		"memory":            {lister: lister, opts: map[string]string{"resource": "memory"}, want: scoreagent.Result{Value: 50, Raw: "12Gi free"}},
		"bad options":       {lister: lister, opts: map[string]string{"resource": "gpu"}, wantErr: `score "s": resource "gpu" is not one of cpu, memory`},
		"nodes cannot list": {lister: fakeLister{nodesErr: errors.New("forbidden")}, wantErr: `score "s": listing nodes: forbidden`},
		"pods cannot list":  {lister: fakeLister{podsErr: errors.New("forbidden")}, wantErr: `score "s": listing pods: forbidden`},
		"no lister":         {wantErr: `score "s": the headroom plugin has nothing to list nodes with; make it with headroom.New`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := scoreagent.NewRegistry(New(tc.lister))
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Measure(t.Context(), scoreagent.Request{Plugin: Name, ScoreName: "s", Options: tc.opts})
			if errString(err) != tc.wantErr {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Measure (-want +got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprint(err)
}
