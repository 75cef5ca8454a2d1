package controllers

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	ocmworkv1alpha1 "open-cluster-management.io/api/work/v1alpha1"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
	"github.com/open-cluster-management-io/placement-manifestwork/test/framework"
)

// benchClusters are the given number of clusters, named cluster-00000 on, with no labels or claims.
func benchClusters(n int) map[string]override.Cluster {
	fleet := make(map[string]override.Cluster, n)
	for i := range n {
		fleet[fmt.Sprintf("cluster-%05d", i)] = override.Cluster{}
	}
	return fleet
}

// benchCreatedWork is the ManifestWork the manager creates on the first of the given clusters for the
// benchmark's PlacementManifestWork (its Deployment split, 2 replicas per cluster): desired state, planned
// writes, and the create as writeOp.written sends it.
func benchCreatedWork(t *testing.T, clusters int) *workv1.ManifestWork {
	t.Helper()
	now := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	p, fleet := benchPMW("1", clusters, nil), benchClusters(clusters)
	p.Name, p.Namespace = "bench-0", "bench" // the benchmark's names: the size counts them
	in := overridesInputs(t, p, fleet, nil)
	d, invalid, _, err := desiredState(p, in, remembered{deliveredKnown: true}, now)
	if err != nil || invalid != nil {
		t.Fatalf("desired state: %v %v", err, invalid)
	}
	wp := planWrites(p, &observation{inputs: *in, desired: d}, nil, now)
	for _, op := range wp.ops {
		if op.cluster == "cluster-00000" {
			if op.existing != nil || op.delete {
				t.Fatalf("the first write is not a create: %+v", op)
			}
			return op.written(now)
		}
	}
	t.Fatalf("no write for cluster-00000 among %d", len(wp.ops))
	return nil
}

// plainBenchWork is what OCM's ManifestWorkReplicaSet controller writes for the same workload
// (CreateManifestWork): the template's manifests (2 replicas), its two labels, no manifestConfigs, no
// annotations.
func plainBenchWork(t *testing.T) *workv1.ManifestWork {
	t.Helper()
	w := framework.MakePMW("bench-0", "bench")
	for _, m := range benchManifests("1", 2) {
		w.Manifest(m)
	}
	return &workv1.ManifestWork{
		TypeMeta: metav1.TypeMeta{APIVersion: workv1.GroupVersion.String(), Kind: "ManifestWork"},
		ObjectMeta: metav1.ObjectMeta{Name: "bench-0", Namespace: "cluster-00000", Labels: map[string]string{
			ocmworkv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey: "bench.bench-0",
			ocmworkv1alpha1.ManifestWorkReplicaSetPlacementNameLabelKey:  "p",
		}},
		Spec: w.Obj().Spec.ManifestWorkTemplate,
	}
}

func jsonLen(t *testing.T, v any) int {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(raw)
}

// TestBenchWorkSize measures what the hub decodes, validates and stores per work (issue #23, cheaper works):
// the JSON of the ManifestWork the manager creates for the benchmark's workload beside the plain one OCM's
// ManifestWorkReplicaSet writes for it, by part. The bound is today's size: a work that grows fails here.
func TestBenchWorkSize(t *testing.T) {
	const maxManager = 2850
	manager, plain := benchCreatedWork(t, 5000), plainBenchWork(t)
	m, p := jsonLen(t, manager), jsonLen(t, plain)
	t.Logf("bytes per work: manager %d, plain %d (+%d): metadata %d (plain %d), of which annotations %d; manifestConfigs %d; manifests %d (plain %d)",
		m, p, m-p, jsonLen(t, manager.ObjectMeta), jsonLen(t, plain.ObjectMeta), jsonLen(t, manager.Annotations),
		jsonLen(t, manager.Spec.ManifestConfigs), jsonLen(t, manager.Spec.Workload), jsonLen(t, plain.Spec.Workload))
	if m > maxManager {
		raw, _ := json.MarshalIndent(manager, "", "  ")
		t.Errorf("the manager's work is %d bytes (the plain work %d), more than %d:\n%s", m, p, maxManager, raw)
	}
}
