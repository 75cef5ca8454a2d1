package fleet

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/fleet"
)

// countingReader serves objects by name at the resourceVersion set, counting the reads.
type countingReader struct {
	client.Reader
	rv    map[string]string
	reads int
}

func (c *countingReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	c.reads++
	u := obj.(*unstructured.Unstructured)
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	u.SetResourceVersion(c.rv[key.Name])
	return nil
}

// The store reads an object from the fleet API server only when the metadata cache shows a resourceVersion it
// does not hold, and holds nothing of a namespace it forgot.
func TestObjectStoreReadsOnlyWhatChanged(t *testing.T) {
	reader := &countingReader{rv: map[string]string{"a": "1", "b": "1"}}
	s := &objectStore{reader: reader}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	metas := func() []metav1.PartialObjectMetadata {
		var out []metav1.PartialObjectMetadata
		for _, n := range []string{"a", "b"} {
			out = append(out, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "shop", ResourceVersion: reader.rv[n]}})
		}
		return out
	}
	read := func() map[fleet.Key]*unstructured.Unstructured {
		t.Helper()
		got := map[fleet.Key]*unstructured.Unstructured{}
		if err := s.read(context.Background(), "shop", gvk, metas(), got); err != nil {
			t.Fatal(err)
		}
		s.keep("shop", got)
		return got
	}
	for _, step := range []struct {
		name      string
		change    func()
		wantReads int
	}{
		{"first reconcile reads both", func() {}, 2},
		{"nothing changed: no read", func() {}, 2},
		{"b changed: only b is read", func() { reader.rv["b"] = "2" }, 3},
		{"the namespace forgotten: both are read again", func() { s.keep("shop", nil) }, 5},
	} {
		step.change()
		got := read()
		if reader.reads != step.wantReads || len(got) != 2 {
			t.Errorf("%s: %d reads in all, %d objects; want %d reads, 2 objects", step.name, reader.reads, len(got), step.wantReads)
		}
		if rv := got[fleet.Key{Kind: "ConfigMap", Namespace: "shop", Name: "b"}].GetResourceVersion(); rv != reader.rv["b"] {
			t.Errorf("%s: b held at resourceVersion %s, want %s", step.name, rv, reader.rv["b"])
		}
	}
}
