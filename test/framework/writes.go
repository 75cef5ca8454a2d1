package framework

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Write is one write the manager sent to the API server.
type Write struct {
	Verb, Kind, Namespace, Name string
}

// WriteRecorder records the writes of the client it wraps, so tests can assert that a converged
// PlacementManifestWork makes none.
type WriteRecorder struct {
	mu     sync.Mutex
	writes []Write
}

// Writes returns the writes recorded so far that match keep.
func (r *WriteRecorder) Writes(keep func(Write) bool) []Write {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Write
	for _, w := range r.writes {
		if keep(w) {
			out = append(out, w)
		}
	}
	return out
}

func (r *WriteRecorder) record(verb string, c client.Client, obj client.Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, Write{Verb: verb, Kind: kindOf(c.Scheme(), obj), Namespace: obj.GetNamespace(), Name: obj.GetName()})
}

// NewClient is a manager's NewClient that records every write.
func (r *WriteRecorder) NewClient(config *rest.Config, options client.Options) (client.Client, error) {
	c, err := client.NewWithWatch(config, options)
	if err != nil {
		return nil, err
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			r.record("create", c, obj)
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			r.record("update", c, obj)
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			r.record("patch", c, obj)
			return c.Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			r.record("delete", c, obj)
			return c.Delete(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			r.record("patch/"+sub, c, obj)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}), nil
}

func kindOf(s *runtime.Scheme, obj client.Object) string {
	if gvk, err := apiutil.GVKForObject(obj, s); err == nil {
		return gvk.Kind
	}
	return ""
}
