package framework

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Write is one write the manager sent to the API server.
type Write struct {
	Verb, Kind, Namespace, Name string
	// Refused is the API server's reason for refusing the write (AlreadyExists, Conflict, NotFound, ...), or
	// empty when it succeeded.
	Refused metav1.StatusReason
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

// record records a write and returns its error. The write is recorded before it is sent, so a test that sees
// its effect also sees it recorded; whether the API server refused it is added when the answer comes.
func (r *WriteRecorder) record(verb string, c client.Client, obj client.Object, write func() error) error {
	r.mu.Lock()
	i := len(r.writes)
	r.writes = append(r.writes, Write{Verb: verb, Kind: kindOf(c.Scheme(), obj), Namespace: obj.GetNamespace(), Name: obj.GetName()})
	r.mu.Unlock()
	err := write()
	if err != nil {
		reason := apierrors.ReasonForError(err)
		if reason == metav1.StatusReasonUnknown {
			reason = metav1.StatusReason(err.Error())
		}
		r.mu.Lock()
		r.writes[i].Refused = reason
		r.mu.Unlock()
	}
	return err
}

// NewClient is a manager's NewClient that records every write.
func (r *WriteRecorder) NewClient(config *rest.Config, options client.Options) (client.Client, error) {
	c, err := client.NewWithWatch(config, options)
	if err != nil {
		return nil, err
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return r.record("create", c, obj, func() error { return c.Create(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return r.record("update", c, obj, func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return r.record("patch", c, obj, func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return r.record("delete", c, obj, func() error { return c.Delete(ctx, obj, opts...) })
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			return r.record("create/"+sub, c, obj, func() error { return c.SubResource(sub).Create(ctx, obj, subObj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return r.record("update/"+sub, c, obj, func() error { return c.SubResource(sub).Update(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return r.record("patch/"+sub, c, obj, func() error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) })
		},
	}), nil
}

func kindOf(s *runtime.Scheme, obj client.Object) string {
	if gvk, err := apiutil.GVKForObject(obj, s); err == nil {
		return gvk.Kind
	}
	return ""
}
