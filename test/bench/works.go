package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	workv1 "open-cluster-management.io/api/work/v1"
	ocmworkv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/ocmsim"
)

// agentsInFlight bounds the simulated agents' status writes in flight (there is no rate limit).
const agentsInFlight = 500

// labelLimit marks the ManifestWorks the limit client writes.
const labelLimit = "bench.open-cluster-management.io/limit"

// workInfo is what the harness knows of one ManifestWork, decoded once per event.
type workInfo struct {
	namespace, name string
	version         string // the ConfigMap's data.version
	replicas        int64  // the Deployment's spec.replicas
	image           string // the image of the Deployment's first container
	generation      int64
	deleting        bool
	// reported is true when the (simulated) agent reported this generation available.
	reported bool
	seenAt   time.Time
}

// tracker watches every ManifestWork of the hub and groups them by owner: "pmw:<label>", "mwrs:<label>" or
// "limit:<label>", keyed by cluster within a group.
type tracker struct {
	cache cache.Cache
	mu    sync.Mutex
	// groups maps a group to its works by namespace.
	groups map[string]map[string]*workInfo
	// lastDelete is when a work of the group last disappeared.
	lastDelete map[string]time.Time
	// retries counts agent status writes that failed other than by a conflict and were sent again.
	retries atomic.Int64
	// summaries are the jobs' status summaries.
	summaries *summaries
}

func groupOf(labels map[string]string) string {
	if v, ok := labels[workv1alpha1.LabelPlacementManifestWork]; ok {
		return "pmw:" + v
	}
	if v, ok := labels[ocmworkv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey]; ok {
		return "mwrs:" + v
	}
	if v, ok := labels[labelLimit]; ok {
		return "limit:" + v
	}
	return ""
}

type manifestFields struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Data map[string]string `json:"data"`
	Spec struct {
		Replicas *int64 `json:"replicas"`
		Template struct {
			Spec struct {
				Containers []struct {
					Image string `json:"image"`
				} `json:"containers"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

func infoOf(w *workv1.ManifestWork) *workInfo {
	info := &workInfo{namespace: w.Namespace, name: w.Name, generation: w.Generation, deleting: !w.DeletionTimestamp.IsZero(), seenAt: time.Now()}
	for _, m := range w.Spec.Workload.Manifests {
		var f manifestFields
		if json.Unmarshal(m.Raw, &f) != nil {
			continue
		}
		switch f.Kind {
		case "ConfigMap":
			info.version = f.Data["version"]
		case "Deployment":
			if f.Spec.Replicas != nil {
				info.replicas = *f.Spec.Replicas
			}
			if cs := f.Spec.Template.Spec.Containers; len(cs) > 0 {
				info.image = cs[0].Image
			}
		}
	}
	c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkAvailable)
	info.reported = c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == w.Generation
	return info
}

func startTracker(ctx context.Context, h *hub) (*tracker, error) {
	c, err := cache.New(h.harnessCfg, cache.Options{Scheme: scheme()})
	if err != nil {
		return nil, err
	}
	t := &tracker{cache: c, groups: map[string]map[string]*workInfo{}, lastDelete: map[string]time.Time{}}
	inf, err := c.GetInformer(ctx, &workv1.ManifestWork{})
	if err != nil {
		return nil, err
	}
	if _, err := inf.AddEventHandler(handlers(t.set, func(o any) {
		w, ok := o.(*workv1.ManifestWork)
		if !ok {
			return
		}
		g := groupOf(w.Labels)
		if g == "" {
			return
		}
		t.mu.Lock()
		if ws := t.groups[g]; ws != nil && ws[w.Namespace] != nil && ws[w.Namespace].name == w.Name {
			delete(ws, w.Namespace)
		}
		t.lastDelete[g] = time.Now()
		t.mu.Unlock()
	})); err != nil {
		return nil, err
	}
	if t.summaries, err = watchSummaries(ctx, c); err != nil {
		return nil, err
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the harness's ManifestWork cache did not sync")
	}
	return t, nil
}

// handlers calls set with every object added or updated and gone with every object deleted, unwrapped from
// the tombstone a missed deletion leaves.
func handlers(set, gone func(o any)) toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, o any) { set(o) },
		DeleteFunc: func(o any) {
			if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			gone(o)
		},
	}
}

func (t *tracker) set(o any) {
	w, ok := o.(*workv1.ManifestWork)
	if !ok {
		return
	}
	g := groupOf(w.Labels)
	if g == "" {
		return
	}
	info := infoOf(w)
	t.mu.Lock()
	defer t.mu.Unlock()
	ws := t.groups[g]
	if ws == nil {
		ws = map[string]*workInfo{}
		t.groups[g] = ws
	}
	ws[w.Namespace] = info
}

// expect is the state a group of works should reach: one work in each of clusters, carrying version and
// replicas (and, when images is set, the Deployment's image images[cluster]), and no other work.
type expect struct {
	// extrasAllowed accepts works in other clusters too (they are not waited for).
	extrasAllowed bool
	group         string
	clusters      map[string]bool
	version       string
	replicas      int64
	// images are the Deployment's image by cluster; nil: not checked.
	images map[string]string
}

func newExpect(group string, clusters []string, version string, replicas int64) expect {
	e := expect{group: group, clusters: make(map[string]bool, len(clusters)), version: version, replicas: replicas}
	for _, c := range clusters {
		e.clusters[c] = true
	}
	return e
}

// check reports how many works are as expected, whether the group is done, and when it became so: the
// latest time one of its works was seen in its current state, or one of its extra works went.
func (t *tracker) check(e expect) (good int, done bool, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ws := t.groups[e.group]
	for ns, w := range ws {
		if e.clusters[ns] && !w.deleting && w.version == e.version && w.replicas == e.replicas && (e.images == nil || w.image == e.images[ns]) {
			good++
			if w.seenAt.After(at) {
				at = w.seenAt
			}
		}
	}
	done = good == len(e.clusters) && (e.extrasAllowed || len(ws) == len(e.clusters))
	if d := t.lastDelete[e.group]; d.After(at) && !e.extrasAllowed {
		at = d
	}
	return good, done, at
}

// wait waits until every expectation holds and returns the time from start to the moment the last one did.
func (t *tracker) wait(ctx context.Context, what string, start time.Time, timeout time.Duration, alive func() error, es ...expect) (time.Duration, error) {
	deadline := start.Add(timeout)
	lastLog := time.Now()
	for {
		var latest time.Time
		good, want, done := 0, 0, true
		for _, e := range es {
			g, d, at := t.check(e)
			good += g
			want += len(e.clusters)
			if !d {
				done = false
			}
			if at.After(latest) {
				latest = at
			}
		}
		if done {
			if latest.Before(start) {
				latest = start
			}
			return latest.Sub(start), nil
		}
		if err := alive(); err != nil {
			return 0, err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, fmt.Errorf("%s: %d of %d works as expected after %s", what, good, want, time.Since(start).Round(time.Millisecond))
		}
		if time.Since(lastLog) > 15*time.Second {
			logf("    ... %s: %d/%d works after %s", what, good, want, time.Since(start).Round(time.Second))
			lastLog = time.Now()
		}
		// Only the harness's memory is read, and the times come from the watch events; the interval is how soon
		// the harness acts on them (churn's agents start when the joining works are all there).
		if want <= 1000 {
			time.Sleep(5 * time.Millisecond)
		} else {
			time.Sleep(25 * time.Millisecond)
		}
	}
}

// pending lists the works of the groups whose current generation the agent has not reported.
func (t *tracker) pending(groups ...string) []client.ObjectKey {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []client.ObjectKey
	for _, g := range groups {
		for _, w := range t.groups[g] {
			if !w.reported && !w.deleting {
				out = append(out, client.ObjectKey{Namespace: w.namespace, Name: w.name})
			}
		}
	}
	return out
}

// reportsSeen reports whether the harness's watch has seen every work of the groups reported, and when it saw
// the last of those reports.
func (t *tracker) reportsSeen(groups ...string) (all bool, last time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	all = true
	for _, g := range groups {
		for _, w := range t.groups[g] {
			switch {
			case w.deleting:
			case !w.reported:
				all = false
			case w.seenAt.After(last):
				last = w.seenAt
			}
		}
	}
	return all, last
}

// actAsAgents writes, for every work of the groups not yet reported, what OCM's work agent reports once the
// workloads run (report). The writes go from the harness's unthrottled client (they are the agents' writes,
// one per cluster), agentsInFlight at a time: with 10,000 at once the client's HTTP/2 transport opens
// connections until the process runs out of files.
func (t *tracker) actAsAgents(ctx context.Context, c client.Client, groups ...string) (int, error) {
	keys := t.pending(groups...)
	// The agents' reports are simulated first, before any is written: simulating decodes every manifest and
	// evaluates its feedback paths, CPU that would otherwise compete, on the same cores, with the controllers
	// whose roll-up is being timed (a real agent does that work on its own cluster).
	reports := make([]*workv1.ManifestWork, len(keys))
	for i, key := range keys {
		w := &workv1.ManifestWork{}
		if err := t.cache.Get(ctx, key, w); err == nil {
			report(w)
			reports[i] = w
		}
	}
	err := parallel(len(keys), agentsInFlight, func(i int) error {
		for attempt := 0; ; attempt++ {
			w := reports[i]
			if attempt > 0 || w == nil {
				w = &workv1.ManifestWork{}
				err := c.Get(ctx, keys[i], w)
				if apierrors.IsNotFound(err) {
					return nil
				}
				if err != nil {
					if attempt >= 20 {
						return err
					}
					t.retries.Add(1)
					time.Sleep(100 * time.Millisecond)
					continue
				}
				report(w)
			}
			err := c.Status().Update(ctx, w)
			if err == nil || apierrors.IsNotFound(err) {
				return nil
			}
			// A conflict reads the work again; a write the API server dropped (all at once can overrun it) is
			// sent again, as an agent would.
			if attempt >= 20 {
				return fmt.Errorf("reporting %s: %w", keys[i], err)
			}
			if !apierrors.IsConflict(err) {
				t.retries.Add(1)
				time.Sleep(100 * time.Millisecond)
			}
		}
	})
	return len(keys), err
}

// report sets on w the status a healthy work agent reports once its workloads run, as the sandbox's agent
// simulates it (ocmsim.Simulate with no ready delay): Applied and Available for the work's generation, every
// manifest Applied and Available, and the status feedback the work's manifestConfigs ask for.
func report(w *workv1.ManifestWork) {
	now := time.Now()
	w.Status = ocmsim.Simulate(w, ocmsim.Spoke{Behavior: ocmsim.Healthy}, now, now).Status
}
