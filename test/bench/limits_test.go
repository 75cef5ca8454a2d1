package main

import (
	"fmt"
	"strings"
	"testing"

	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

func TestLimitShapes(t *testing.T) {
	clusters := []string{"cluster-00001", "cluster-00002"}
	name, id, shape := limitJob(1, 100, 0, true)
	if name != limitPlain || id != "plain-n100" {
		t.Fatalf("plain limit: %q %q", name, id)
	}
	for _, w := range shape(id, clusters, "v1") {
		if len(w.Annotations) != 0 || len(w.Spec.ManifestConfigs) != 0 || len(w.Spec.Workload.Manifests) != 3 || w.Labels[labelLimit] != id {
			t.Fatalf("a plain work carries annotations, manifestConfigs, not the three manifests or not the tracker's label: %+v", w)
		}
		if groupOf(w.Labels) != "limit:"+id {
			t.Fatalf("the tracker puts a plain work in group %q", groupOf(w.Labels))
		}
	}
	name, id, shape = limitJob(1, 100, 64, false)
	if name != "limit-64" || id != "n100-p64" {
		t.Fatalf("bounded limit: %q %q", name, id)
	}
	v1, v2 := shape(id, clusters, "v1")[0], shape(id, clusters, "v2")[0]
	if len(v1.Spec.ManifestConfigs) == 0 || v1.Annotations[workv1alpha1.AnnotationOwner] == "" {
		t.Fatalf("the manager's work as the limit writes it lacks manifestConfigs or annotations: %+v", v1)
	}
	if v1.Annotations[workv1alpha1.AnnotationSpecHash] == v2.Annotations[workv1alpha1.AnnotationSpecHash] {
		t.Fatal("the spec hash does not change with the spec")
	}
	if versionOf([]*workv1.ManifestWork{v2}) != "v2" {
		t.Fatalf("versionOf = %q, want v2", versionOf([]*workv1.ManifestWork{v2}))
	}
	up := withSpec(v1, v2)
	if up.Name != v1.Name || up.Annotations[workv1alpha1.AnnotationSpecHash] != v2.Annotations[workv1alpha1.AnnotationSpecHash] || versionOf([]*workv1.ManifestWork{up}) != "v2" {
		t.Fatalf("withSpec: %+v", up)
	}
	if versionOf([]*workv1.ManifestWork{v1}) != "v1" {
		t.Fatal("withSpec changed the work it was given")
	}
}

func TestLimitJobsOf(t *testing.T) {
	name, id, _ := limitJob(10, 5000, 0, false)
	if name != "limit" || id != "j10-n5000-p0" {
		t.Fatalf("limit of a many row: %q %q", name, id)
	}
	// One job of every cluster keeps the row's id; jobs of a many row are placed as runJobs places the
	// contenders' (cluster (i·n+k) mod pool + 1 of job i), each with an id of its own.
	one := limitJobsOf("n3-p0", 1, 3, 3)
	if len(one) != 1 || one[0].id != "n3-p0" || one[0].group() != "limit:n3-p0" || strings.Join(one[0].clusters, ",") != strings.Join(names(0, 3), ",") {
		t.Fatalf("one job: %+v", one)
	}
	many := limitJobsOf("j3-n2-p0", 3, 2, 5)
	want := []limitJobOf{
		{id: "j3-n2-p0-000", clusters: []string{clusterName(1), clusterName(2)}},
		{id: "j3-n2-p0-001", clusters: []string{clusterName(3), clusterName(4)}},
		{id: "j3-n2-p0-002", clusters: []string{clusterName(5), clusterName(1)}},
	}
	if len(many) != len(want) {
		t.Fatalf("got %d jobs, want %d", len(many), len(want))
	}
	for i := range want {
		if many[i].id != want[i].id || strings.Join(many[i].clusters, ",") != strings.Join(want[i].clusters, ",") {
			t.Errorf("job %d = %+v, want %+v", i, many[i], want[i])
		}
	}
}

// limitRow is a limit row with the given fan-out and update times.
func limitRow(contender string, fanOut, update float64) *row {
	return &row{Contender: contender, Kind: "clusters", N: 100, Jobs: 1, Works: 100, FanOut: &step{Seconds: fanOut}, Update: &step{Seconds: update}}
}

func TestMainTableLimits(t *testing.T) {
	m := runRow("manager", 0, 0.30, 0.50, 0.40, 0.20)
	m.Update = &step{Seconds: 0.60}
	res := &results{Rows: []*row{limitRow("limit", 0.20, 0.40), limitRow(limitPlain, 0.15, 0.30), m}}
	got := res.markdown()
	// limit fan-out, plain fan-out, manager fan-out, ×limit, ×plain, OCM fan-out, ×OCM, roll-ups, limit update,
	// manager update, ×limit, OCM update, ×OCM.
	want := "| N = 100 | 100 | 0.20 | 0.15 | 0.30 | 1.50× | 2.00× | — | — | 0.10 | — | — | 0.40 | 0.60 | 1.50× | — | — |"
	if !strings.Contains(got, want) {
		t.Fatalf("main table lacks %q:\n%s", want, got)
	}
	if strings.Contains(got, "limit plain in flight") || strings.Contains(got, "plain in flight") {
		t.Fatalf("the plain limit is listed as a bounded client:\n%s", got)
	}
}

func TestFlagValues(t *testing.T) {
	got, err := flagValues([]string{"feature-gates=ConcurrentWatchObjectDecode=true", "--watch-cache=false", "empty="})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"feature-gates": "ConcurrentWatchObjectDecode=true", "watch-cache": "false", "empty": ""}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("flagValues = %v, want %v", got, want)
	}
	for _, bad := range []string{"feature-gates", "=x"} {
		if _, err := flagValues([]string{bad}); err == nil {
			t.Errorf("flagValues(%q) succeeded, want an error", bad)
		}
	}
}
