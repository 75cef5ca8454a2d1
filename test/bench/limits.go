package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	ocmworkv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// limitPlain is the title of the plain-work limit: the limit client writing the works OCM's
// ManifestWorkReplicaSet controller would write, with no feedback rules and no manager annotations.
const limitPlain = "limit plain"

// limitShape builds the works of a limit row for clusters at version; id labels them for the tracker.
type limitShape func(id string, clusters []string, version string) []*workv1.ManifestWork

// limitJob is the title, the works' id and their shape of a limit row: the manager's works (limitWorks) with
// inFlight creates at once (0: all at once), or plain works.
func limitJob(jobs, n, inFlight int, plain bool) (string, string, limitShape) {
	size := fmt.Sprintf("n%d", n)
	if jobs > 1 {
		size = fmt.Sprintf("j%d-n%d", jobs, n)
	}
	switch {
	case plain:
		return limitPlain, "plain-" + size, plainWorks
	case inFlight > 0:
		return fmt.Sprintf("limit-%d", inFlight), fmt.Sprintf("%s-p%d", size, inFlight), managerShaped
	}
	return "limit", size + "-p0", managerShaped
}

// limitJobOf is one job of a limit row: its works' id and its clusters.
type limitJobOf struct {
	id       string
	clusters []string
}

// group is the tracker's group of the job's works.
func (j limitJobOf) group() string { return "limit:" + j.id }

// limitJobsOf are a limit row's jobs, n clusters each, placed as runJobs places the contenders' jobs: cluster
// (i·n+k) mod pool of job i. A row of one job keeps the row's id.
func limitJobsOf(id string, jobs, n, pool int) []limitJobOf {
	out := make([]limitJobOf, jobs)
	for i := range out {
		out[i].id = id
		if jobs > 1 {
			out[i].id = fmt.Sprintf("%s-%03d", id, i)
		}
		out[i].clusters = make([]string, n)
		for k := range out[i].clusters {
			out[i].clusters[k] = clusterName((i*n+k)%pool + 1)
		}
	}
	return out
}

// managerShaped are limitWorks, the manager's works as the harness builds them, with a spec hash annotation
// that changes with the spec as the manager's does.
func managerShaped(id string, clusters []string, version string) []*workv1.ManifestWork {
	ws := limitWorks(id, clusters, version)
	for _, w := range ws {
		w.Annotations[workv1alpha1.AnnotationSpecHash] = specHash(w.Spec)
	}
	return ws
}

func specHash(spec workv1.ManifestWorkSpec) string {
	raw, err := json.Marshal(spec)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16])
}

// plainWorks are the works OCM's ManifestWorkReplicaSet controller writes for the workload without feedback
// rules (its CreateManifestWork): the three manifests (2 replicas) and two labels, the tracker's in place of
// the controller's name label, no manifestConfigs, no annotations.
func plainWorks(id string, clusters []string, version string) []*workv1.ManifestWork {
	ms := manifests(version, replicasPerCluster)
	out := make([]*workv1.ManifestWork, 0, len(clusters))
	for _, c := range clusters {
		out = append(out, &workv1.ManifestWork{
			ObjectMeta: metav1.ObjectMeta{
				Name: "limit-" + id, Namespace: c,
				Labels: map[string]string{labelLimit: id, ocmworkv1alpha1.ManifestWorkReplicaSetPlacementNameLabelKey: "bench"},
			},
			Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: ms}},
		})
	}
	return out
}

// limitUpdate is the limit for updates: once the agents have reported the works (so they carry their status,
// as the manager's do when a template changes), the limit client writes next's spec to every work, inFlight
// at a time (0: all at once), timed like the manager's update step: from the first write to the watch seeing
// every work at next's version. Each write is an update of the work as the harness's watch last saw it (the
// manager updates from its cache likewise), read before the clock starts; a conflict reads the work again.
func (b *bench) limitUpdate(ctx context.Context, r *row, expects func(version string, replicas int64) []expect, inFlight int, next []*workv1.ManifestWork) *step {
	timeout := b.timeout(len(next))
	var groups []string
	for _, e := range expects("", 0) {
		groups = append(groups, e.group)
	}
	agentsStart := time.Now()
	reported, err := b.works.actAsAgents(ctx, b.h.harness, groups...)
	if err != nil {
		return &step{Err: "agents: " + err.Error()}
	}
	logf("  agents: %d works reported in %.2fs (not timed)", reported, time.Since(agentsStart).Seconds())
	for start := time.Now(); len(b.works.pending(groups...)) > 0; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > timeout || ctx.Err() != nil {
			return &step{Err: fmt.Sprintf("agents: %d works not seen reported after %s", len(b.works.pending(groups...)), timeout)}
		}
	}
	b.statusBytes(ctx, r.Hub, groups[0])
	updated := make([]*workv1.ManifestWork, len(next))
	for i, w := range next {
		cur := &workv1.ManifestWork{}
		if err := b.works.cache.Get(ctx, client.ObjectKeyFromObject(w), cur); err != nil {
			return &step{Err: fmt.Sprintf("reading %s from the watch: %v", client.ObjectKeyFromObject(w), err)}
		}
		updated[i] = withSpec(cur, w)
	}
	var retries atomic.Int64
	s := b.stepRun(ctx, "update", userLimit, nil, func(start time.Time) (time.Duration, error) {
		err := parallel(len(updated), inFlight, func(i int) error {
			w := updated[i]
			for attempt := 0; ; attempt++ {
				err := b.limitClient.Update(ctx, w)
				if err == nil {
					return nil
				}
				if attempt >= 20 || ctx.Err() != nil {
					return err
				}
				if apierrors.IsConflict(err) {
					cur := &workv1.ManifestWork{}
					if err := b.limitClient.Get(ctx, client.ObjectKeyFromObject(w), cur); err != nil {
						return err
					}
					w = withSpec(cur, next[i])
				} else {
					time.Sleep(100 * time.Millisecond)
				}
				retries.Add(1)
			}
		})
		if err != nil {
			return 0, err
		}
		return b.works.wait(ctx, "update", start, timeout, (&process{}).alive, expects(versionOf(next), replicasPerCluster)...)
	})
	r.Retries += int(retries.Load())
	return s
}

// withSpec is cur with want's spec and want's annotations (the spec hash) set, without managedFields and status:
// an update of the work keeps both as they are, so the leanest client does not send them (the manager's cache
// holds no managedFields and a trimmed status).
func withSpec(cur, want *workv1.ManifestWork) *workv1.ManifestWork {
	out := cur.DeepCopy()
	out.ManagedFields = nil
	out.Status = workv1.ManifestWorkStatus{}
	out.Spec = *want.Spec.DeepCopy()
	for k, v := range want.Annotations {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[k] = v
	}
	return out
}

// versionOf is the ConfigMap's version the works carry.
func versionOf(ws []*workv1.ManifestWork) string {
	if len(ws) == 0 {
		return ""
	}
	return infoOf(ws[0]).version
}
