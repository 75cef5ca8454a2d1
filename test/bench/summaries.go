package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	ocmworkv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// summary is one job's status summary as the harness last saw it, and when it first saw these counts.
type summary struct {
	available, total int
	// current is false while the status describes an older spec (PlacementManifestWork's observedGeneration).
	current bool
	seenAt  time.Time
}

// summaryOf reads the summary of a PlacementManifestWork or a ManifestWorkReplicaSet.
func summaryOf(o any) (client.ObjectKey, summary, bool) {
	switch x := o.(type) {
	case *workv1alpha1.PlacementManifestWork:
		s := x.Status.PlacedManifestWorkSummary
		return client.ObjectKeyFromObject(x), summary{available: int(s.Available), total: int(s.Total),
			current: x.Status.ObservedGeneration == x.Generation}, true
	case *ocmworkv1alpha1.ManifestWorkReplicaSet:
		// Its status has no observedGeneration.
		s := x.Status.Summary
		return client.ObjectKeyFromObject(x), summary{available: s.Available, total: s.Total, current: true}, true
	}
	return client.ObjectKey{}, summary{}, false
}

// summaries watches the jobs' objects of both contenders, so a roll-up ends when the watch delivered the
// summary that completes it, not at the next poll.
type summaries struct {
	mu   sync.Mutex
	byNS map[string]map[string]summary
}

func watchSummaries(ctx context.Context, c cache.Cache) (*summaries, error) {
	s := &summaries{byNS: map[string]map[string]summary{}}
	for _, obj := range []client.Object{&workv1alpha1.PlacementManifestWork{}, &ocmworkv1alpha1.ManifestWorkReplicaSet{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, fmt.Errorf("watching %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(handlers(s.set, func(o any) {
			if key, _, ok := summaryOf(o); ok {
				s.mu.Lock()
				delete(s.byNS[key.Namespace], key.Name)
				s.mu.Unlock()
			}
		})); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *summaries) set(o any) {
	key, next, ok := summaryOf(o)
	if !ok {
		return
	}
	next.seenAt = time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	jobs := s.byNS[key.Namespace]
	if jobs == nil {
		jobs = map[string]summary{}
		s.byNS[key.Namespace] = jobs
	}
	if prev, ok := jobs[key.Name]; ok && prev.available == next.available && prev.total == next.total && prev.current == next.current {
		return
	}
	jobs[key.Name] = next
}

// complete counts the jobs of ns whose summary shows want clusters, all available, for the current spec, and
// returns the latest time one of them was first seen so.
func (s *summaries) complete(ns string, want int) (n int, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.byNS[ns] {
		if j.current && j.available == want && j.total == want {
			n++
			if j.seenAt.After(at) {
				at = j.seenAt
			}
		}
	}
	return n, at
}
