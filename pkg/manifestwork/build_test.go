package manifestwork

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// build builds one work of pmw with no manifestConfigs.
func build(t *testing.T, pmw *workv1alpha1.PlacementManifestWork, cluster string, ms []workv1.Manifest, shares map[string]int32) *workv1.ManifestWork {
	t.Helper()
	b, err := NewBuilder(pmw, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.Build(cluster, ms, shares)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func testPMW() *workv1alpha1.PlacementManifestWork {
	return &workv1alpha1.PlacementManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", UID: types.UID("uid-1")},
		Spec: workv1alpha1.PlacementManifestWorkSpec{ManifestWorkTemplate: workv1.ManifestWorkSpec{
			DeleteOption: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan},
		}},
	}
}

func manifests(raw ...string) []workv1.Manifest {
	out := make([]workv1.Manifest, 0, len(raw))
	for _, r := range raw {
		out = append(out, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(r)}})
	}
	return out
}

func TestBuild(t *testing.T) {
	pmw := testPMW()
	w := build(t, pmw, "cluster1", manifests(`{"kind":"ConfigMap"}`), map[string]int32{"Deployment.apps default/web .spec.replicas": 2})
	if w.Namespace != "cluster1" || w.Name != WorkName(Owner(pmw)) {
		t.Errorf("work is %s/%s", w.Namespace, w.Name)
	}
	if diff := cmp.Diff(map[string]string{workv1alpha1.LabelPlacementManifestWork: "apps.web"}, w.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if w.Annotations[workv1alpha1.AnnotationOwner] != "apps/web" || w.Annotations[workv1alpha1.AnnotationOwnerUID] != "uid-1" {
		t.Errorf("owner annotations: %v", w.Annotations)
	}
	if diff := cmp.Diff(map[string]int32{"Deployment.apps default/web .spec.replicas": 2}, Shares(w)); diff != "" {
		t.Errorf("shares (-want +got):\n%s", diff)
	}
	if w.Spec.DeleteOption == nil || w.Spec.DeleteOption.PropagationPolicy != workv1.DeletePropagationPolicyTypeOrphan {
		t.Errorf("the template's deleteOption was not kept: %+v", w.Spec.DeleteOption)
	}
	if !IsOwnedBy(w, pmw) {
		t.Error("a built work is not owned by its PlacementManifestWork")
	}
	if diff := cmp.Diff(w.Labels, OwnershipOf(pmw).Labels()); diff != "" {
		t.Errorf("the works' selector does not select a built work (-labels +selector):\n%s", diff)
	}
	if pmw.Spec.ManifestWorkTemplate.Workload.Manifests != nil {
		t.Error("Build modified the PlacementManifestWork's spec")
	}
}

func TestUpToDate(t *testing.T) {
	pmw := testPMW()
	desired := build(t, pmw, "c", manifests(`{"kind":"ConfigMap","data":{"a":"1"}}`), nil)
	changed := build(t, pmw, "c", manifests(`{"kind":"ConfigMap","data":{"a":"2"}}`), nil)
	defaulted := desired.DeepCopy()
	defaulted.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{}} // the API server's defaulting
	defaulted.Annotations["other"] = "kept"
	cases := map[string]struct {
		existing *workv1.ManifestWork
		want     bool
	}{
		"same spec":                          {existing: desired, want: true},
		"defaulted by the server, same hash": {existing: defaulted, want: true},
		"different content":                  {existing: changed, want: false},
		"label removed by someone":           {existing: func() *workv1.ManifestWork { w := desired.DeepCopy(); w.Labels = nil; return w }(), want: false},
		"hash annotation removed by someone": {existing: func() *workv1.ManifestWork {
			w := desired.DeepCopy()
			delete(w.Annotations, workv1alpha1.AnnotationSpecHash)
			return w
		}(), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := UpToDate(tc.existing, desired); got != tc.want {
				t.Errorf("UpToDate = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOwnership(t *testing.T) {
	pmw := testPMW()
	own := build(t, pmw, "c", nil, nil)
	cases := map[string]struct {
		mutate func(w *workv1.ManifestWork)
		want   bool
	}{
		"built by it":                  {mutate: func(*workv1.ManifestWork) {}, want: true},
		"label only, guessed":          {mutate: func(w *workv1.ManifestWork) { w.Annotations = nil }, want: false},
		"another incarnation's UID":    {mutate: func(w *workv1.ManifestWork) { w.Annotations[workv1alpha1.AnnotationOwnerUID] = "uid-0" }, want: false},
		"another owner with our label": {mutate: func(w *workv1.ManifestWork) { w.Annotations[workv1alpha1.AnnotationOwner] = "apps/other" }, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := own.DeepCopy()
			tc.mutate(w)
			if got := IsOwnedBy(w, pmw); got != tc.want {
				t.Errorf("IsOwnedBy = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestOwnerOf(t *testing.T) {
	cases := map[string]struct {
		annotation string
		want       types.NamespacedName
		ok         bool
	}{
		"namespace and name": {annotation: "apps/web", want: types.NamespacedName{Namespace: "apps", Name: "web"}, ok: true},
		"no slash":           {annotation: "web"},
		"empty name":         {annotation: "apps/"},
		"empty namespace":    {annotation: "/web"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{workv1alpha1.AnnotationOwner: tc.annotation}}}
			got, ok := OwnerOf(w)
			if ok != tc.ok || (ok && got != tc.want) {
				t.Errorf("OwnerOf(%q) = %v, %v; want %v, %v", tc.annotation, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// Every cluster's work carries the same template hash, whatever its share; a template change changes it. A
// write drops the failover annotations earlier versions kept on works.
func TestTemplateHashAndMerge(t *testing.T) {
	pmw := testPMW()
	pmw.Spec.ManifestWorkTemplate.Workload.Manifests = manifests(`{"kind":"ConfigMap","metadata":{"name":"a"}}`)
	a := build(t, pmw, "c1", manifests(`{"kind":"ConfigMap","metadata":{"name":"a"},"x":1}`), map[string]int32{"k": 1})
	b := build(t, pmw, "c2", manifests(`{"kind":"ConfigMap","metadata":{"name":"a"},"x":2}`), map[string]int32{"k": 2})
	if a.Annotations[workv1alpha1.AnnotationSpecHash] == b.Annotations[workv1alpha1.AnnotationSpecHash] {
		t.Error("different shares must give different spec hashes")
	}
	if a.Annotations[workv1alpha1.AnnotationTemplateHash] != b.Annotations[workv1alpha1.AnnotationTemplateHash] || !CarriesTemplate(b, a.Annotations[workv1alpha1.AnnotationTemplateHash]) {
		t.Error("works of one template must carry one template hash")
	}
	changed := testPMW()
	changed.Spec.ManifestWorkTemplate.Workload.Manifests = manifests(`{"kind":"ConfigMap","metadata":{"name":"b"}}`)
	if c := build(t, changed, "c1", nil, nil); CarriesTemplate(a, c.Annotations[workv1alpha1.AnnotationTemplateHash]) {
		t.Error("a template change must change the template hash")
	}

	existing := a.DeepCopy()
	for _, k := range legacyAnnotations {
		existing.Annotations[k] = "2026-11-20T00:00:00Z"
	}
	merged := Merge(existing, b)
	for _, k := range legacyAnnotations {
		if _, ok := merged.Annotations[k]; ok {
			t.Errorf("Merge kept the legacy annotation %s", k)
		}
	}
}
