package labelindex

import (
	"context"
	"fmt"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// conflictingIndexer refuses a field registered twice on a type, as the manager's cache does.
type conflictingIndexer struct{ fields map[string]bool }

func (c *conflictingIndexer) IndexField(_ context.Context, obj client.Object, field string, _ client.IndexerFunc) error {
	key := fmt.Sprintf("%T/%s", obj, field)
	if c.fields[key] {
		return fmt.Errorf("indexer conflict: %s", key)
	}
	c.fields[key] = true
	return nil
}

// TestSetupOncePerCache: the PlacementManifestWork and the fleet controllers both call Setup on the manager they
// share; the second call must not register the indexes again, and a second manager gets its own.
func TestSetupOncePerCache(t *testing.T) {
	ctx := context.Background()
	shared, other := &conflictingIndexer{fields: map[string]bool{}}, &conflictingIndexer{fields: map[string]bool{}}
	for i, idx := range []*conflictingIndexer{shared, shared, other} {
		if err := Setup(ctx, idx); err != nil {
			t.Fatalf("setup %d: %v", i, err)
		}
	}
	if len(shared.fields) != len(Indexes) || len(other.fields) != len(Indexes) {
		t.Errorf("registered %d and %d indexes, want %d each", len(shared.fields), len(other.fields), len(Indexes))
	}
}

func TestListRefusesAnUnindexedLabel(t *testing.T) {
	if err := List(context.Background(), nil, nil, "example.com/unindexed", "v"); err == nil {
		t.Error("listing by a label no index mirrors succeeded; it would list every object")
	}
}
