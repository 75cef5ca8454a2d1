// Package headroom is the score agent's second plugin, and the proof that plugins need nothing from the
// core but its interface: the CPU or memory the managed cluster's nodes can still give to new pods,
// as the scheduler counts it (allocatable minus the requests of the pods on the node), mapped to
// [-100, 100].
//
// Options (a generator's otherPlugin entry):
//
//	resource:  cpu (default) or memory
//	aggregate: sum (default): the free capacity of all nodes together;
//	           max: the most free on one node, the largest pod that still fits
//	full:      a quantity ("8", "64Gi") that scores 100; without it the score is the free share of the
//	           allocatable capacity counted (all nodes' for sum, that node's for max)
//
// The score is 200*free/full - 100, rounded, and never beyond the bounds: nothing free is -100, half free
// is 0, full (or more) free is 100. A share compares clusters by how busy they are; full compares them by
// how much they can take, whatever their size.
//
// Only nodes that take ordinary workloads count: Ready, not cordoned, without NoSchedule or NoExecute
// taints (so a control-plane node's room is not offered to applications). Pods count while they hold their
// node's resources: bound to a counted node and neither Succeeded nor Failed.
package headroom

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
)

// Name is the plugin's name, as a generator's otherPlugin entry asks for it (plugin: node-headroom), and as
// the API's documentation names it.
const Name = "node-headroom"

// The plugin's options and their values.
const (
	OptionResource  = "resource"
	OptionAggregate = "aggregate"
	OptionFull      = "full"

	AggregateSum = "sum"
	AggregateMax = "max"
)

// Lister lists the managed cluster's nodes and pods: the agent passes its cache, a test a slice.
type Lister interface {
	ListNodes(ctx context.Context) ([]corev1.Node, error)
	ListPods(ctx context.Context) ([]corev1.Pod, error)
}

// Settings are the plugin's options, read.
type Settings struct {
	// Resource is corev1.ResourceCPU or corev1.ResourceMemory.
	Resource corev1.ResourceName
	// Aggregate is AggregateSum or AggregateMax.
	Aggregate string
	// Full, when positive, is the free amount that scores 100, in the resource's unit (millicores or bytes).
	Full int64
}

// ParseOptions reads the plugin's options with their defaults, refusing unknown ones and bad values.
func ParseOptions(opts map[string]string) (Settings, error) {
	if err := scoreagent.CheckOptions(opts, OptionResource, OptionAggregate, OptionFull); err != nil {
		return Settings{}, err
	}
	r, err := scoreagent.EnumOption(opts, OptionResource, string(corev1.ResourceCPU), string(corev1.ResourceCPU), string(corev1.ResourceMemory))
	if err != nil {
		return Settings{}, err
	}
	s := Settings{Resource: corev1.ResourceName(r)}
	if s.Aggregate, err = scoreagent.EnumOption(opts, OptionAggregate, AggregateSum, AggregateSum, AggregateMax); err != nil {
		return Settings{}, err
	}
	if f := opts[OptionFull]; f != "" {
		q, err := resource.ParseQuantity(f)
		if err != nil {
			return Settings{}, fmt.Errorf("full %q is not a quantity such as 8 (cores) or 64Gi", f)
		}
		if s.Full = amount(q, s.Resource); s.Full <= 0 {
			return Settings{}, fmt.Errorf("full is %s, it must be more than 0", f)
		}
	}
	return s, nil
}

// Plugin measures headroom from what its Lister lists.
type Plugin struct {
	lister Lister
}

// New returns the plugin reading nodes and pods from l.
func New(l Lister) *Plugin { return &Plugin{lister: l} }

// Name is "node-headroom".
func (p *Plugin) Name() string { return Name }

// Validate refuses unknown options and bad values.
func (p *Plugin) Validate(req scoreagent.Request) error {
	_, err := ParseOptions(req.Options)
	return err
}

// Measure lists the nodes and pods and computes the headroom.
func (p *Plugin) Measure(ctx context.Context, req scoreagent.Request) (scoreagent.Result, error) {
	s, err := ParseOptions(req.Options)
	if err != nil {
		return scoreagent.Result{}, err
	}
	if p.lister == nil {
		return scoreagent.Result{}, errors.New("the headroom plugin has nothing to list nodes with; make it with headroom.New")
	}
	nodes, err := p.lister.ListNodes(ctx)
	if err != nil {
		return scoreagent.Result{}, fmt.Errorf("listing nodes: %w", err)
	}
	pods, err := p.lister.ListPods(ctx)
	if err != nil {
		return scoreagent.Result{}, fmt.Errorf("listing pods: %w", err)
	}
	return Headroom(nodes, pods, s), nil
}

// NodeFree is one counted node's capacity, in the resource's unit (millicores or bytes).
type NodeFree struct {
	Node        string
	Allocatable int64
	Requested   int64
	// Free is Allocatable minus Requested, and 0 when the requests exceed it (a node whose allocatable
	// shrank under its pods has no room, not negative room).
	Free int64
}

// Skipped is a node left out, and why.
type Skipped struct {
	Node, Reason string
}

// Free is the free capacity of each node that takes workloads, sorted by name, and the nodes left out.
func Free(nodes []corev1.Node, pods []corev1.Pod, r corev1.ResourceName) ([]NodeFree, []Skipped) {
	index := map[string]int{}
	var free []NodeFree
	var skipped []Skipped
	for i := range nodes {
		n := &nodes[i]
		if why := leftOut(n); why != "" {
			skipped = append(skipped, Skipped{Node: n.Name, Reason: why})
			continue
		}
		index[n.Name] = len(free)
		free = append(free, NodeFree{Node: n.Name, Allocatable: amount(n.Status.Allocatable[r], r)})
	}
	for i := range pods {
		pod := &pods[i]
		j, ok := index[pod.Spec.NodeName]
		if !ok || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		free[j].Requested += PodRequest(pod, r)
	}
	for i := range free {
		free[i].Free = max(0, free[i].Allocatable-free[i].Requested)
	}
	sort.Slice(free, func(i, j int) bool { return free[i].Node < free[j].Node })
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].Node < skipped[j].Node })
	return free, skipped
}

// leftOut says why a node's room is not offered to workloads, or "".
func leftOut(n *corev1.Node) string {
	if n.Spec.Unschedulable {
		return "cordoned"
	}
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		return "not Ready"
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return "tainted " + t.ToString()
		}
	}
	return ""
}

// PodRequest is what a pod requests of r as the scheduler counts it (k8s.io/component-helpers' PodRequests,
// which this module does not depend on): the containers' requests plus those of the sidecars (restartable
// init containers), or the largest init container's with the sidecars started before it when that is
// more; a pod-level request instead when the pod sets one; plus the pod's overhead. It reads the spec only:
// during an in-place resize the pod counts as its spec asks.
func PodRequest(pod *corev1.Pod, r corev1.ResourceName) int64 {
	var req int64
	if q, ok := podLevel(pod, r); ok {
		req = amount(q, r)
	} else {
		for _, c := range pod.Spec.Containers {
			req += amount(c.Resources.Requests[r], r)
		}
		var sidecars, init int64
		for _, c := range pod.Spec.InitContainers {
			v := amount(c.Resources.Requests[r], r)
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				req += v
				sidecars += v
				init = max(init, sidecars)
			} else {
				init = max(init, v+sidecars)
			}
		}
		req = max(req, init)
	}
	return req + amount(pod.Spec.Overhead[r], r)
}

func podLevel(pod *corev1.Pod, r corev1.ResourceName) (resource.Quantity, bool) {
	if pod.Spec.Resources == nil {
		return resource.Quantity{}, false
	}
	q, ok := pod.Spec.Resources.Requests[r]
	return q, ok
}

// amount is a quantity in the resource's unit: millicores for CPU, bytes otherwise.
func amount(q resource.Quantity, r corev1.ResourceName) int64 {
	if r == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// Score maps free out of full to [-100, 100]: round(200*free/full - 100), nothing free or nothing to
// count being -100 and full or more being 100.
func Score(free, full int64) int32 {
	if full <= 0 || free <= 0 {
		return scoreagent.MinScore
	}
	if free >= full {
		return scoreagent.MaxScore
	}
	return int32(math.Round(200*float64(free)/float64(full) - 100))
}

// Headroom computes the plugin's result from the cluster's nodes and pods.
func Headroom(nodes []corev1.Node, pods []corev1.Pod, s Settings) scoreagent.Result {
	perNode, skipped := Free(nodes, pods, s.Resource)
	var free, alloc int64
	on := ""
	switch s.Aggregate {
	case AggregateMax:
		for i, n := range perNode {
			if i == 0 || n.Free > free {
				free, alloc, on = n.Free, n.Allocatable, n.Node
			}
		}
	default:
		for _, n := range perNode {
			free += n.Free
			alloc += n.Allocatable
		}
	}
	full := alloc
	if s.Full > 0 {
		full = s.Full
	}
	raw := format(free, s.Resource) + " free"
	if on != "" {
		raw += " on " + on
	}
	res := scoreagent.Result{Value: Score(free, full), Raw: raw}
	switch {
	case len(perNode) == 0 && len(nodes) == 0:
		res.Message = "the cluster has no nodes"
	case len(perNode) == 0:
		res.Message = "no node takes workloads: " + describe(skipped, len(nodes))
	case len(skipped) > 0:
		res.Message = "left out " + describe(skipped, len(nodes))
	}
	return res
}

// describe lists left-out nodes, the first few by name.
func describe(skipped []Skipped, total int) string {
	const shown = 5
	names := make([]string, 0, shown+1)
	for i, s := range skipped {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more", len(skipped)-shown))
			break
		}
		names = append(names, fmt.Sprintf("%s (%s)", s.Node, s.Reason))
	}
	return fmt.Sprintf("%d of %d nodes: %s", len(skipped), total, strings.Join(names, ", "))
}

// format says an amount as people read it: cores for CPU, Gi or Mi for memory.
func format(v int64, r corev1.ResourceName) string {
	if r == corev1.ResourceCPU {
		cores := strconv.FormatFloat(float64(v)/1000, 'f', -1, 64)
		if v == 1000 {
			return "1 core"
		}
		return cores + " cores"
	}
	const mi, gi = 1 << 20, 1 << 30
	if v >= gi {
		return strconv.FormatFloat(math.Floor(float64(v)/gi*10)/10, 'f', -1, 64) + "Gi"
	}
	return strconv.FormatInt(v/mi, 10) + "Mi"
}
