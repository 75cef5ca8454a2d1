package fleet

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/fleet"
)

func TestClusterOwn(t *testing.T) {
	core := func(kind string) schema.GroupVersionKind { return schema.GroupVersionKind{Version: "v1", Kind: kind} }
	rbac := func(kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: kind}
	}
	cases := map[string]struct {
		gvk      schema.GroupVersionKind
		ns, name string
		want     bool
	}{
		"the kubernetes Service":                {core("Service"), "default", "kubernetes", true},
		"a user's kubernetes Service elsewhere": {core("Service"), "shop", "kubernetes", false},
		"a user's Service in default":           {core("Service"), "default", "web", false},
		"the kubernetes EndpointSlice":          {schema.GroupVersionKind{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}, "default", "kubernetes", true},
		"every namespace's CA bundle":           {core("ConfigMap"), "shop", "kube-root-ca.crt", true},
		"every namespace's default account":     {core("ServiceAccount"), "shop", "default", true},
		"a user's ServiceAccount":               {core("ServiceAccount"), "shop", "builder", false},
		// What kube-apiserver itself makes and keeps in kube-system and kube-public (listed on a fresh one).
		"the aggregation client CAs":          {core("ConfigMap"), "kube-system", "extension-apiserver-authentication", true},
		"the legacy token tracking ConfigMap": {core("ConfigMap"), "kube-system", "kube-apiserver-legacy-service-account-token-tracking", true},
		"the bootstrap cluster-info":          {core("ConfigMap"), "kube-public", "cluster-info", true},
		"a default Role":                      {rbac("Role"), "kube-system", "system::leader-locking-kube-controller-manager", true},
		"a default Role in kube-public":       {rbac("Role"), "kube-public", "system:controller:bootstrap-signer", true},
		"a default RoleBinding":               {rbac("RoleBinding"), "kube-system", "system::extension-apiserver-authentication-reader", true},
		"a ConfigMap of that name elsewhere":  {core("ConfigMap"), "shop", "extension-apiserver-authentication", false},
		"a user's ConfigMap in kube-system":   {core("ConfigMap"), "kube-system", "coredns", false},
		"a Role of that name elsewhere":       {rbac("Role"), "shop", "system:controller:bootstrap-signer", false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := clusterOwn(c.gvk, c.ns, c.name); got != c.want {
				t.Errorf("clusterOwn(%s, %s/%s) = %v, want %v", c.gvk.Kind, c.ns, c.name, got, c.want)
			}
		})
	}
}

func TestNamespacedKinds(t *testing.T) {
	lists := []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: []string{"get", "list", "watch"}},
			{Name: "pods/status", Kind: "Pod", Namespaced: true, Verbs: []string{"get", "patch"}},
			{Name: "events", Kind: "Event", Namespaced: true, Verbs: []string{"list", "watch"}},
			{Name: "nodes", Kind: "Node", Namespaced: false, Verbs: []string{"list", "watch"}},
			{Name: "bindings", Kind: "Binding", Namespaced: true, Verbs: []string{"create"}},
		}},
		{GroupVersion: "cluster.open-cluster-management.io/v1beta1", APIResources: []metav1.APIResource{
			{Name: "placements", Kind: "Placement", Namespaced: true, Verbs: []string{"list", "watch"}},
		}},
		{GroupVersion: "example.io/v1", APIResources: []metav1.APIResource{
			{Name: "widgets", Kind: "Widget", Namespaced: true, Verbs: []string{"list", "watch"}},
		}},
	}
	got := namespacedKinds(lists)
	want := []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}, {Group: "example.io", Version: "v1", Kind: "Widget"}}
	if !slices.Equal(got, want) {
		t.Errorf("namespacedKinds = %v, want %v", got, want)
	}
}

func TestLeftOutMessage(t *testing.T) {
	pod := func(name string) fleet.Unsupported {
		return fleet.Unsupported{Key: fleet.Key{Kind: "Pod", Namespace: "shop", Name: name}, Reason: fleet.ReasonUnsupportedKind, Message: "bare"}
	}
	owned := fleet.Unsupported{Key: fleet.Key{Group: "apps", Kind: "ReplicaSet", Namespace: "shop", Name: "web-1"}, Reason: fleet.ReasonOwned, Message: "owned"}
	cases := map[string]struct {
		in   []fleet.Unsupported
		want string
	}{
		"nothing left out":           {nil, ""},
		"owned objects are expected": {[]fleet.Unsupported{owned}, ""},
		"one": {[]fleet.Unsupported{owned, pod("a")},
			"1 object of the fleet namespace is not delivered: Pod shop/a (UnsupportedKind: bare)"},
		"more than are named": {[]fleet.Unsupported{pod("a"), pod("b"), pod("c"), pod("d"), pod("e"), pod("f"), pod("g")},
			"7 objects of the fleet namespace are not delivered: Pod shop/a (UnsupportedKind: bare); Pod shop/b (UnsupportedKind: bare); " +
				"Pod shop/c (UnsupportedKind: bare); Pod shop/d (UnsupportedKind: bare); Pod shop/e (UnsupportedKind: bare); " +
				"and 2 more (kubectl get events on the fleet API server)"},
	}
	for name, c := range cases {
		if got := leftOutMessage(c.in); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", name, got, c.want)
		}
	}
}

func TestRecordOnlyNewEvents(t *testing.T) {
	fake := events.NewFakeRecorder(20)
	r := &Reconciler{}
	obj := &corev1.ConfigMap{}
	key := fleet.Key{Kind: "Deployment", Namespace: "shop", Name: "web"}
	eu1 := fleet.Event{Type: corev1.EventTypeNormal, Reason: fleet.EventClusterProgressing, Message: "cluster eu-1: 0 of 2 ready"}
	eu2 := fleet.Event{Type: corev1.EventTypeNormal, Reason: fleet.EventClusterProgressing, Message: "cluster eu-2: 1 of 2 ready"}
	recorded := func() []string {
		var out []string
		for {
			select {
			case e := <-fake.Events:
				out = append(out, e)
			default:
				return out
			}
		}
	}
	steps := []struct {
		evs  []fleet.Event
		want int
	}{
		{[]fleet.Event{eu1, eu2}, 2}, // both new
		{[]fleet.Event{eu1, eu2}, 0}, // at rest
		{[]fleet.Event{eu1}, 0},      // eu-2 recovered: eu-1's is not recorded again
		{nil, 0},                     // all healthy
		{[]fleet.Event{eu1}, 1},      // eu-1 falls back: a new occurrence
	}
	for i, s := range steps {
		r.record(obj, key, s.evs, fake)
		if got := recorded(); len(got) != s.want {
			t.Errorf("step %d: recorded %v, want %d events", i, got, s.want)
		}
	}
}

func TestUnreadable(t *testing.T) {
	w := newKindWatcher(nil, nil, nil)
	deploy := schema.GroupKind{Group: "apps", Kind: "Deployment"}
	cm := schema.GroupKind{Kind: "ConfigMap"}
	widget := schema.GroupKind{Group: "example.io", Kind: "Widget"}
	gadget := schema.GroupKind{Group: "metrics.example.io", Kind: "Gadget"}
	w.watched[deploy] = deploy.WithVersion("v1")
	w.served = map[schema.GroupKind]bool{deploy: true, cm: true} // ConfigMaps served, not read (forbidden, not synced)
	w.failedGroups = map[string]bool{"metrics.example.io": true}
	for gk, want := range map[schema.GroupKind]bool{
		deploy: false, // read
		cm:     true,  // served but not read: its objects may be there unseen
		widget: false, // not served by a complete discovery of its group: gone
		gadget: true,  // its group's discovery failed: unknown
	} {
		if got := w.unreadable(gk); got != want {
			t.Errorf("unreadable(%s) = %v, want %v", gk, got, want)
		}
	}
	if w.readsAll() {
		t.Error("readsAll with ConfigMaps served but not read, and a group not discovered")
	}
	w.watched[cm] = cm.WithVersion("v1")
	if w.readsAll() {
		t.Error("readsAll with a group not discovered")
	}
	w.failedGroups = map[string]bool{}
	if !w.readsAll() {
		t.Error("not readsAll with every served kind read")
	}
}

type fakeKinds struct{ unread map[schema.GroupKind]bool }

func (fakeKinds) kinds() []schema.GroupVersionKind      { return nil }
func (fakeKinds) ready(context.Context) error           { return nil }
func (f fakeKinds) unreadable(gk schema.GroupKind) bool { return f.unread[gk] }
func (f fakeKinds) readsAll() bool                      { return len(f.unread) == 0 }

func TestUnreadableDelivered(t *testing.T) {
	manifest := func(apiVersion, kind string) workv1.Manifest {
		return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"` + apiVersion + `","kind":"` + kind + `","metadata":{"name":"x"}}`)}}
	}
	pmw := &workv1alpha1.PlacementManifestWork{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{workv1alpha1.LabelFleetGenerated: "true"}}}
	pmw.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{
		manifest("v1", "Namespace"), manifest("v1", "ConfigMap"), manifest("v1", "ConfigMap"), manifest("apps/v1", "Deployment"),
		manifest("example.io/v1", "Widget"),
	}
	r := &Reconciler{kinds: fakeKinds{unread: map[schema.GroupKind]bool{
		{Kind: "Namespace"}: true, {Kind: "ConfigMap"}: true, {Group: "example.io", Kind: "Widget"}: true}}}
	got := r.unreadableDelivered(pmw)
	// The generated namespace manifest is the fleet's own; each kind once, sorted.
	if want := []string{"ConfigMap", "Widget.example.io"}; !slices.Equal(got, want) {
		t.Errorf("unreadableDelivered = %v, want %v", got, want)
	}
	delete(pmw.Labels, workv1alpha1.LabelFleetGenerated)
	if got := r.unreadableDelivered(pmw); got != nil {
		t.Errorf("someone else's PMW: %v, want nothing", got)
	}
}
