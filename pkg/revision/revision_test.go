package revision

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

func testPMW(limit *int32, current, completed *workv1alpha1.RevisionReference) *workv1alpha1.PlacementManifestWork {
	p := &workv1alpha1.PlacementManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-1"}}
	p.Spec.RevisionHistoryLimit = limit
	p.Status.CurrentRevision, p.Status.CompletedRevision = current, completed
	return p
}

// rev is web's ControllerRevision of data with the given number and template-hash label.
func rev(data string, n int64, hash string) *appsv1.ControllerRevision {
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Name: Name("web", []byte(data)), Namespace: "ns", Labels: map[string]string{
			workv1alpha1.LabelPlacementManifestWork: "ns.web", workv1alpha1.LabelTemplateHash: hash,
		}},
		Revision: n,
	}
}

func ref(data string, n int64) *workv1alpha1.RevisionReference {
	return &workv1alpha1.RevisionReference{Revision: n, Name: Name("web", []byte(data))}
}

// summary is what a test compares of a plan: the number created or updated to, and the numbers deleted.
type summary struct {
	Current workv1alpha1.RevisionReference
	Created int64
	Updated int64
	Labels  map[string]string
	Deleted []int64
	Numbers map[string]int64
}

func summarize(p Plan) summary {
	s := summary{Current: p.Current, Numbers: p.Numbers}
	if p.Create != nil {
		s.Created, s.Labels = p.Create.Revision, p.Create.Labels
	}
	if p.Update != nil {
		s.Updated, s.Labels = p.Update.Revision, p.Update.Labels
	}
	for _, cr := range p.Delete {
		s.Deleted = append(s.Deleted, cr.Revision)
	}
	return s
}

func TestCompute(t *testing.T) {
	labels := func(hash string) map[string]string {
		return map[string]string{workv1alpha1.LabelPlacementManifestWork: "ns.web", workv1alpha1.LabelTemplateHash: hash}
	}
	name := func(data string) string { return Name("web", []byte(data)) }
	cases := map[string]struct {
		pmw      *workv1alpha1.PlacementManifestWork
		existing []*appsv1.ControllerRevision
		desired  Desired
		want     summary
	}{
		"the first template is revision 1": {
			pmw:     testPMW(nil, nil, nil),
			desired: Desired{Data: []byte("a"), TemplateHash: "ha"},
			want: summary{Current: *ref("a", 1), Created: 1, Labels: labels("ha"),
				Numbers: map[string]int64{name("a"): 1}},
		},
		"steady state writes nothing": {
			pmw:      testPMW(nil, ref("a", 1), ref("a", 1)),
			existing: []*appsv1.ControllerRevision{rev("a", 1, "ha")},
			desired:  Desired{Data: []byte("a"), TemplateHash: "ha"},
			want:     summary{Current: *ref("a", 1), Numbers: map[string]int64{name("a"): 1}},
		},
		"a changed template is the next number": {
			pmw:      testPMW(nil, ref("a", 1), ref("a", 1)),
			existing: []*appsv1.ControllerRevision{rev("a", 1, "ha")},
			desired:  Desired{Data: []byte("b"), TemplateHash: "hb"},
			want: summary{Current: *ref("b", 2), Created: 2, Labels: labels("hb"),
				Numbers: map[string]int64{name("a"): 1, name("b"): 2}},
		},
		"a template that comes back re-uses its revision, renumbered": {
			pmw:      testPMW(nil, ref("b", 2), ref("b", 2)),
			existing: []*appsv1.ControllerRevision{rev("a", 1, "ha"), rev("b", 2, "hb")},
			desired:  Desired{Data: []byte("a"), TemplateHash: "ha"},
			want: summary{Current: *ref("a", 3), Updated: 3, Labels: labels("ha"),
				Numbers: map[string]int64{name("a"): 3, name("b"): 2}},
		},
		"a lagging cache: the status's newer number counts": {
			pmw:      testPMW(nil, ref("b", 2), ref("a", 1)),
			existing: []*appsv1.ControllerRevision{rev("a", 1, "ha")},
			desired:  Desired{Data: []byte("c"), TemplateHash: "hc"},
			want: summary{Current: *ref("c", 3), Created: 3, Labels: labels("hc"),
				Numbers: map[string]int64{name("a"): 1, name("c"): 3}},
		},
		"the current revision's hash label follows the works": {
			pmw:      testPMW(nil, ref("a", 1), nil),
			existing: []*appsv1.ControllerRevision{rev("a", 1, "old")},
			desired:  Desired{Data: []byte("a"), TemplateHash: "ha"},
			want: summary{Current: *ref("a", 1), Updated: 1, Labels: labels("ha"),
				Numbers: map[string]int64{name("a"): 1}},
		},
		"the history limit prunes the oldest, never the current or completed one": {
			pmw: testPMW(ptr.To[int32](1), ref("d", 4), ref("a", 1)),
			existing: []*appsv1.ControllerRevision{
				rev("a", 1, "ha"), rev("b", 2, "hb"), rev("c", 3, "hc"), rev("d", 4, "hd"),
			},
			desired: Desired{Data: []byte("e"), TemplateHash: "he"},
			want: summary{Current: *ref("e", 5), Created: 5, Labels: labels("he"), Deleted: []int64{2, 3},
				Numbers: map[string]int64{name("a"): 1, name("d"): 4, name("e"): 5}},
		},
		"a limit of 0 keeps only the current and the completed revisions": {
			pmw:      testPMW(ptr.To[int32](0), ref("b", 2), ref("b", 2)),
			existing: []*appsv1.ControllerRevision{rev("a", 1, "ha"), rev("b", 2, "hb")},
			desired:  Desired{Data: []byte("b"), TemplateHash: "hb"},
			want:     summary{Current: *ref("b", 2), Deleted: []int64{1}, Numbers: map[string]int64{name("b"): 2}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := summarize(Compute(tc.pmw, tc.existing, tc.desired))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputeCreate(t *testing.T) {
	pmw := testPMW(nil, nil, nil)
	p := Compute(pmw, nil, Desired{Data: []byte(`{"x":1}`), TemplateHash: "ha", ClusterTemplateHashes: []string{"hz", "ha", "hy", "hz"}})
	cr := p.Create
	if cr == nil {
		t.Fatal("no ControllerRevision to create")
	}
	if got := string(cr.Data.Raw); got != `{"x":1}` {
		t.Errorf("data = %s", got)
	}
	if got := cr.Annotations[workv1alpha1.AnnotationTemplateHashes]; got != "hy,hz" {
		t.Errorf("template hashes annotation = %q, want hy,hz", got)
	}
	if len(cr.OwnerReferences) != 1 || cr.OwnerReferences[0].UID != "uid-1" || !ptr.Deref(cr.OwnerReferences[0].Controller, false) {
		t.Errorf("owner references = %+v, want the PMW as controller", cr.OwnerReferences)
	}
	// A revision that loses its overrides loses the annotation.
	p = Compute(pmw, []*appsv1.ControllerRevision{cr}, Desired{Data: []byte(`{"x":1}`), TemplateHash: "ha"})
	if p.Update == nil || p.Update.Annotations[workv1alpha1.AnnotationTemplateHashes] != "" {
		t.Errorf("update = %+v, want the annotation removed", p.Update)
	}
}

// TestComputeChangeCause: the PMW's kubernetes.io/change-cause goes onto the revision its template makes, and
// onto an older revision its template brings back; without one, a revision keeps what it recorded.
func TestComputeChangeCause(t *testing.T) {
	cause := func(p Plan) string {
		switch {
		case p.Create != nil:
			return p.Create.Annotations[workv1alpha1.AnnotationChangeCause]
		case p.Update != nil:
			return p.Update.Annotations[workv1alpha1.AnnotationChangeCause]
		}
		return "(no write)"
	}
	pmw := testPMW(nil, nil, nil)
	pmw.Annotations = map[string]string{workv1alpha1.AnnotationChangeCause: "image 1.3"}
	one := Compute(pmw, nil, Desired{Data: []byte(`{"x":1}`), TemplateHash: "h1"})
	if got := cause(one); got != "image 1.3" {
		t.Errorf("new revision's change cause %q, want image 1.3", got)
	}
	old := one.Create.DeepCopy()
	newer := rev(`{"x":2}`, 2, "h2")

	pmw.Annotations[workv1alpha1.AnnotationChangeCause] = "back to 1.3"
	if got := cause(Compute(pmw, []*appsv1.ControllerRevision{old, newer}, Desired{Data: []byte(`{"x":1}`), TemplateHash: "h1"})); got != "back to 1.3" {
		t.Errorf("revision brought back: change cause %q, want back to 1.3", got)
	}
	delete(pmw.Annotations, workv1alpha1.AnnotationChangeCause)
	if got := cause(Compute(pmw, []*appsv1.ControllerRevision{old, newer}, Desired{Data: []byte(`{"x":1}`), TemplateHash: "h1"})); got != "image 1.3" {
		t.Errorf("revision brought back without a cause: %q, want the one it recorded", got)
	}
}

func TestName(t *testing.T) {
	long := strings.Repeat("a", 250) + "-b"
	cases := map[string]string{"short": "web", "long": long, "long with a dot where it is cut": strings.Repeat("a", 241) + ".bbbbbbbb"}
	for n, owner := range cases {
		t.Run(n, func(t *testing.T) {
			got := Name(owner, []byte("data"))
			if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
				t.Errorf("Name(%q) = %q: %v", owner, got, errs)
			}
			if Name(owner, []byte("other")) == got {
				t.Errorf("two templates share the name %q", got)
			}
		})
	}
	if Name(long, []byte("d")) == Name(long+"c", []byte("d")) {
		t.Error("two long owner names that share their prefix share a revision name")
	}
}

func TestData(t *testing.T) {
	a := testPMW(nil, nil, nil)
	a.Spec.PlacementRef = &workv1alpha1.LocalPlacementReference{Name: "p"}
	a.Spec.SplitCompanions = workv1alpha1.SplitCompanionsCopy
	b := a.DeepCopy()
	b.Spec.RevisionHistoryLimit, b.Spec.PlacementRef = ptr.To[int32](3), nil
	da, _ := Data(a)
	db, _ := Data(b)
	if string(da) != string(db) {
		t.Errorf("what does not change what clusters receive changed the data:\n%s\n%s", da, db)
	}
	b.Spec.SplitCompanions = ""
	if db, _ = Data(b); string(da) == string(db) {
		t.Error("splitCompanions did not change the data")
	}
}

func TestByTemplateHash(t *testing.T) {
	a, b := *rev("a", 1, "h1"), *rev("b", 3, "h1")
	c := *rev("c", 2, "h2")
	c.Annotations = map[string]string{workv1alpha1.AnnotationTemplateHashes: "o1,o2"}
	got := ByTemplateHash([]appsv1.ControllerRevision{a, b, c})
	want := map[string]int64{"h1": 3, "h2": 2, "o1": 2, "o2": 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestWithTemplateSetsWhatDataRecords: WithTemplate sets exactly the fields Data records, and every field of
// the spec is classed as template or not, so a new spec field cannot be left out of one list silently.
func TestWithTemplateSetsWhatDataRecords(t *testing.T) {
	notTemplate := map[string]bool{"placementRef": true, "rolloutStrategy": true, "failover": true, "ttlSecondsAfterFinished": true,
		"moveStrategy": true, "revisionHistoryLimit": true, "paused": true, "failurePolicy": true, "rolloutGates": true, "disruptionBudget": true}
	template := map[string]bool{"manifestWorkTemplate": true, "distributionStrategy": true, "overrides": true, "splitCompanions": true,
		"propagateDependencies": true}
	st := reflect.TypeOf(workv1alpha1.PlacementManifestWorkSpec{})
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if name != "-" && !notTemplate[name] && !template[name] {
			t.Errorf("spec field %s is neither template (Data, WithTemplate) nor classed as not template here", name)
		}
	}

	// Every template field set, and different between the two.
	full := func(image string, deps bool) *workv1alpha1.PlacementManifestWork {
		p := &workv1alpha1.PlacementManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
		p.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(`{"image":"` + image + `"}`)}}}
		p.Spec.DistributionStrategy = []workv1alpha1.DistributionStrategy{{Name: image, Type: workv1alpha1.DistributionReplicate}}
		p.Spec.Overrides = []workv1alpha1.ClusterOverride{{Name: image}}
		p.Spec.SplitCompanions = workv1alpha1.SplitCompanionsCopy
		if deps {
			p.Spec.SplitCompanions = workv1alpha1.SplitCompanionsApportion
		}
		p.Spec.PropagateDependencies = deps
		p.Spec.Paused = !deps
		p.Spec.RevisionHistoryLimit = ptr.To[int32](int32(len(image)))
		return p
	}
	a, b := full("a:1", true), full("b:22", false)
	data := func(p *workv1alpha1.PlacementManifestWork) string {
		d, err := Data(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(d)
	}
	got := WithTemplate(a, &b.Spec)
	if data(got) != data(b) {
		t.Errorf("WithTemplate(a, b's spec) records %s, want b's %s", data(got), data(b))
	}
	var recorded map[string]any
	// a has every template field set to a value JSON keeps (b's propagateDependencies is false, omitted).
	if err := json.Unmarshal([]byte(data(a)), &recorded); err != nil {
		t.Fatal(err)
	}
	for name := range template {
		if _, ok := recorded[name]; !ok {
			t.Errorf("Data does not record template field %s", name)
		}
	}
	if got.Spec.Paused != a.Spec.Paused || *got.Spec.RevisionHistoryLimit != *a.Spec.RevisionHistoryLimit {
		t.Errorf("WithTemplate changed fields that are not the template: paused %v, history %d", got.Spec.Paused, *got.Spec.RevisionHistoryLimit)
	}
}

func TestOwned(t *testing.T) {
	pmw := &workv1alpha1.PlacementManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "u-1"}}
	controlled := func(name string, n int64, uid types.UID) appsv1.ControllerRevision {
		cr := appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: name}, Revision: n}
		if uid != "" {
			cr.OwnerReferences = []metav1.OwnerReference{{UID: uid, Name: "web", Controller: ptr.To(true)}}
		}
		return cr
	}
	list := []appsv1.ControllerRevision{
		controlled("web-b", 2, "u-1"), controlled("web-a", 2, "u-1"), controlled("web-c", 1, "u-1"),
		controlled("other", 1, "u-2"), // the label alone, which anyone can set, does not make it pmw's
		controlled("orphan", 3, ""),
	}
	var got []string
	for _, cr := range Owned(list, pmw) {
		got = append(got, cr.Name)
	}
	if want := []string{"web-c", "web-a", "web-b"}; !slices.Equal(got, want) {
		t.Errorf("owned: got %v, want %v", got, want)
	}

	data, err := Data(pmw)
	if err != nil {
		t.Fatal(err)
	}
	mine := controlled("web-x", 1, "u-1")
	mine.Data.Raw = data
	if _, err := Spec(&mine, pmw); err != nil {
		t.Errorf("spec of its own revision: %v", err)
	}
	theirs := controlled("web-y", 1, "u-2")
	theirs.Data.Raw = data
	if _, err := Spec(&theirs, pmw); !errors.Is(err, ErrUnusable) {
		t.Errorf("spec of another's revision: got %v, want ErrUnusable", err)
	}
	broken := controlled("web-z", 1, "u-1")
	broken.Data.Raw = []byte("{")
	if _, err := Spec(&broken, pmw); !errors.Is(err, ErrUnusable) {
		t.Errorf("spec of undecodable data: got %v, want ErrUnusable", err)
	}
}
