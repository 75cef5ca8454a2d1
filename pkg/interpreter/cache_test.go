package interpreter

import (
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

func TestCache(t *testing.T) {
	cache := NewCache()
	ri := resourceInterpreter("widgets", workv1alpha1.ResourceInterpreterSpec{Health: healthExpr(`'Healthy'`)})

	first, err := cache.Get(ri, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := cache.Get(ri, nil); again != first {
		t.Error("the same generation was compiled again")
	}

	next := ri.DeepCopy()
	next.Generation = 2
	next.Spec.Health = healthExpr(`'Healthy' +`)
	if _, err := cache.Get(next, nil); err == nil {
		t.Fatal("generation 2 does not compile, but Get returned no error")
	}
	if _, err := cache.Get(next, nil); err == nil {
		t.Error("the problem of generation 2 was not kept")
	}
	if cache.Len() != 1 {
		t.Errorf("Len() = %d, want 1: a new generation replaces the old one", cache.Len())
	}

	other := resourceInterpreter("gadgets", workv1alpha1.ResourceInterpreterSpec{Retain: []string{".spec.x"}})
	if _, err := cache.Get(other, nil); err != nil {
		t.Fatal(err)
	}
	cache.Retain([]types.UID{other.UID})
	if cache.Len() != 1 {
		t.Errorf("Len() = %d after Retain, want 1", cache.Len())
	}
	if got, _ := cache.Get(ri, nil); got == first {
		t.Error("a forgotten interpreter was not compiled again")
	}
}

func TestCacheConcurrent(t *testing.T) {
	cache := NewCache()
	ri := resourceInterpreter("widgets", workv1alpha1.ResourceInterpreterSpec{Health: healthExpr(`'Healthy'`)})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if _, err := cache.Get(ri, nil); err != nil {
					t.Error(err)
				}
				cache.Retain([]types.UID{ri.UID})
			}
		})
	}
	wg.Wait()
}
