package fleet

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/fleet"
)

// objectStore holds the full objects of the opted-in fleet namespaces, each as of the resourceVersion the
// metadata cache last showed: a reconcile reads from the fleet API server only the objects that changed since,
// and the manager holds no object of a namespace that is not opted in.
type objectStore struct {
	// reader reads around the cache.
	reader client.Reader

	mu sync.Mutex
	// byNamespace holds each opted-in namespace's objects by key.
	byNamespace map[string]map[fleet.Key]*unstructured.Unstructured
}

// read returns the namespace's objects whose metadata are metas (of gvk), reading those that changed.
func (s *objectStore) read(ctx context.Context, ns string, gvk schema.GroupVersionKind, metas []metav1.PartialObjectMetadata, into map[fleet.Key]*unstructured.Unstructured) error {
	s.mu.Lock()
	held := s.byNamespace[ns]
	s.mu.Unlock()
	for i := range metas {
		m := &metas[i]
		key := fleet.Key{Group: gvk.Group, Kind: gvk.Kind, Namespace: ns, Name: m.Name}
		if o := held[key]; o != nil && o.GetResourceVersion() == m.ResourceVersion && o.GetAPIVersion() == gvk.GroupVersion().String() {
			into[key] = o
			continue
		}
		o := &unstructured.Unstructured{}
		o.SetGroupVersionKind(gvk)
		switch err := s.reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.Name}, o); {
		case apierrors.IsNotFound(err):
			continue // deleted since the cache saw it: its delete event brings another reconcile
		case err != nil:
			return fmt.Errorf("reading %s: %w", key, err)
		}
		into[key] = o
	}
	return nil
}

// keep makes objects the namespace's held objects (nil forgets the namespace).
func (s *objectStore) keep(ns string, objects map[fleet.Key]*unstructured.Unstructured) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if objects == nil {
		delete(s.byNamespace, ns)
		return
	}
	if s.byNamespace == nil {
		s.byNamespace = map[string]map[fleet.Key]*unstructured.Unstructured{}
	}
	s.byNamespace[ns] = objects
}
