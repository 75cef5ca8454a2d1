package controllers

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/metrics"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/parallel"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

// apply runs the writes, at most MaxConcurrentWrites at once, and records on obs what it wrote, deleted,
// conflicts and errors, and in memory the writes the cache must show before the next plan and the shares
// delivered.
func (r *PlacementManifestWorkReconciler) apply(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, obs *observation, ops []writeOp) {
	now := r.now()
	decided := make(map[string]bool, len(obs.clusters))
	for _, c := range obs.clusters {
		decided[c] = true
	}
	var mu sync.Mutex
	obs.written = make(map[string]*workv1.ManifestWork, len(ops))
	expected := make(map[string]expectedWrite, len(ops))
	expect := func(cluster string, e expectedWrite) {
		mu.Lock()
		expected[cluster] = e
		mu.Unlock()
	}
	failed := func(cluster string) {
		mu.Lock()
		obs.failedClusters = append(obs.failedClusters, cluster)
		mu.Unlock()
	}
	errs := r.parallel(ctx, len(ops), func(i int) error {
		o := ops[i]
		if o.delete {
			if err := r.Delete(ctx, o.existing, client.Preconditions{UID: &o.existing.UID}); client.IgnoreNotFound(err) != nil {
				metrics.WriteErrors.WithLabelValues("delete").Inc()
				failed(o.cluster)
				return fmt.Errorf("cluster %s: deleting: %w", o.cluster, err)
			}
			expect(o.cluster, expectedWrite{deletedUID: o.existing.UID})
			mu.Lock()
			obs.deleted = append(obs.deleted, o.cluster)
			mu.Unlock()
			return nil
		}
		var err error
		result := o.written(now)
		operation := "create"
		if o.existing == nil {
			err = r.Create(ctx, result)
		} else {
			operation = "update"
			err = r.Update(ctx, result)
		}
		// The work exists, or changed since the cache saw it (an agent's status report, most often, while the
		// cache is behind): it is read again and written from what it is now, if it is still this
		// PlacementManifestWork's. Failing the write instead would retry the whole reconcile, with the same
		// stale cache.
		if apierrors.IsAlreadyExists(err) || (o.existing != nil && apierrors.IsConflict(err)) {
			var ours bool
			if result, ours, err = r.adopt(ctx, pmw, o, now); !ours && err == nil {
				mu.Lock()
				obs.conflicts = append(obs.conflicts, o.cluster)
				mu.Unlock()
				return nil
			}
		}
		if err != nil {
			metrics.WriteErrors.WithLabelValues(operation).Inc()
			failed(o.cluster)
			return fmt.Errorf("cluster %s: %w", o.cluster, err)
		}
		// Kept for the status as the cache would keep it: the API server's answer carries the manifests and
		// managedFields, which at thousands of writes would double the reconcile's memory until it ends.
		trimWork(result)
		result.ManagedFields = nil
		mu.Lock()
		switch {
		case o.existing == nil:
			expected[o.cluster] = expectedWrite{}
		case result.ResourceVersion != o.existing.ResourceVersion:
			// An update the API server found to change nothing keeps the version and sends no event to wait for.
			expected[o.cluster] = expectedWrite{staleVersion: o.existing.ResourceVersion, version: result.ResourceVersion}
		}
		obs.written[o.cluster] = result
		if decided[o.cluster] {
			obs.upToDate[o.cluster] = true
		}
		mu.Unlock()
		return nil
	})
	// The wait is counted from the end of the writes, not from the start of the reconcile: thousands of writes
	// take longer than the wait itself.
	r.memory.expectWrites(manifestwork.Owner(pmw), expected, r.now())
	r.memory.setDeliveredShares(manifestwork.Owner(pmw), delivered(obs))
	obs.writeErrors = append(obs.writeErrors, errs...)
	sort.Strings(obs.conflicts)
	sort.Strings(obs.failedClusters)
	if len(ops) > 0 {
		ctrl.LoggerFrom(ctx).V(1).Info("Wrote ManifestWorks", "writes", len(ops), "failed", len(errs), "conflicts", len(obs.conflicts))
	}
}

// adopt handles a create refused because the name is taken, or an update refused because the work changed
// since the cache saw it. The cache can lag behind this manager's own creates and the agents' reports, so the
// work is read from the API server: when it is this PlacementManifestWork's, it is brought to the desired
// state if it is not already (adoptUpdate) and returned as written; otherwise it belongs to someone else.
func (r *PlacementManifestWorkReconciler) adopt(ctx context.Context, pmw *workv1alpha1.PlacementManifestWork, o writeOp, now time.Time) (*workv1.ManifestWork, bool, error) {
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	cur := &workv1.ManifestWork{}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(o.desired), cur); err != nil {
		return nil, false, fmt.Errorf("reading the existing ManifestWork: %w", err)
	}
	if !manifestwork.IsOwnedBy(cur, pmw) {
		return nil, false, nil
	}
	updated := adoptUpdate(cur, o, now)
	if updated == nil {
		return cur, true, nil
	}
	if err := r.Update(ctx, updated); err != nil {
		return nil, true, err
	}
	return updated, true, nil
}

// adoptUpdate is the update that brings cur, a work of this PlacementManifestWork found in place of a create
// or newer than the one an update was planned from, to what that write would have written; nil when it
// carries that already. Most often cur is this manager's
// own earlier create that its cache has not seen yet: it carries the desired spec, and writing it again (to
// stamp updatedAt, which a create does not carry) would be a write for nothing. A work with another spec gets
// the desired one, and updatedAt when that brings a new template.
func adoptUpdate(cur *workv1.ManifestWork, o writeOp, now time.Time) *workv1.ManifestWork {
	if cur.Annotations[workv1alpha1.AnnotationSpecHash] == o.desired.Annotations[workv1alpha1.AnnotationSpecHash] && manifestwork.UpToDate(cur, o.desired) {
		return nil
	}
	// updatedAt starts the cluster's rollout step again only when the write brings it a template it lacks.
	o.existing = cur
	o.templateChange = !manifestwork.CarriesTemplate(cur, o.desired.Annotations[workv1alpha1.AnnotationTemplateHash])
	return o.written(now)
}

// parallel runs fn for 0..n-1 with at most MaxConcurrentWrites at once and returns the errors.
func (r *PlacementManifestWorkReconciler) parallel(ctx context.Context, n int, fn func(i int) error) []error {
	return parallel.Run(ctx, n, max(r.MaxConcurrentWrites, 1), fn)
}

// delivered is the record of the shares delivered after a reconcile's writes: what it wrote, and for the other
// works what was delivered before.
func delivered(obs *observation) map[string]map[string]int32 {
	out := make(map[string]map[string]int32, len(obs.previous)+len(obs.written))
	for c, v := range obs.previous {
		out[c] = v
	}
	for c, w := range obs.written {
		if shares := manifestwork.Shares(w); shares != nil {
			out[c] = shares
		} else {
			delete(out, c)
		}
	}
	for _, c := range obs.deleted {
		delete(out, c)
	}
	return out
}
