// Package pagedlist makes an informer read its list in pages and trim each page before it reads the next.
//
// A reflector's first list asks for resourceVersion "0", which the API server answers from its watch cache in
// one response whatever limit it is given, and so is its relist after a watch fell out of the watch cache (a
// state not older than the last one it saw, without a limit). At 50,000 ManifestWorks with the agents' status
// that one response, and the whole objects decoded from it, live at once before the informer's transform trims
// them: a restarted manager peaked at 2.9 times its steady memory (docs/performance.md, run P). Here both ask
// in a form the server pages, and the informer's own transform trims each page, so what lives at once is one
// page and the trimmed objects. The informer applies the transform again as it stores them, so it must be
// idempotent.
package pagedlist

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
)

// PageSize is the number of objects a page asks for: client-go's pager's default.
const PageSize = 500

// NewInformer returns a constructor of shared informers for controller-runtime's cache.Options.NewInformer:
// the informers of the types in trims list in pages of pageSize, each page trimmed by the type's function (the
// informer's transform); the others as client-go does.
func NewInformer(trims map[reflect.Type]toolscache.TransformFunc, pageSize int64) func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		if trim, ok := trims[reflect.TypeOf(obj)]; ok {
			lw = Paged(lw, trim, pageSize)
		}
		return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}
}

// Paged wraps a ListerWatcher so that a list reads in pages of pageSize (list says which state) and trims each
// page's objects before it reads the next. Its result is one list, as the reflector expects, with the pages'
// resourceVersion. A list that names an exact resourceVersion match or a continue token is passed on as it is.
// The reflector always lists through it: it tells client-go it cannot stream its list over the watch (a
// streamed list would bypass the pages), whatever the process's WatchListClient gate says (internal/watchlist).
func Paged(lw toolscache.ListerWatcher, trim toolscache.TransformFunc, pageSize int64) toolscache.ListerWatcher {
	inner := toolscache.ToListerWatcherWithContext(lw)
	return unstreamed{&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			if opts.ResourceVersionMatch != "" || opts.Continue != "" {
				return inner.ListWithContext(ctx, opts)
			}
			return list(ctx, inner, trim, pageSize, opts)
		},
		WatchFuncWithContext: inner.WatchWithContext,
	}}
}

// unstreamed is a ListWatch whose list the reflector must not stream over the watch.
type unstreamed struct{ *toolscache.ListWatch }

// IsWatchListSemanticsUnSupported is client-go's opt-out of streamed lists
// (k8s.io/client-go/util/watchlist.DoesClientNotSupportWatchListSemantics).
func (unstreamed) IsWatchListSemanticsUnSupported() bool { return true }

// list reads every page. The first page asks for:
//   - the newest state (resourceVersion ""), for a list of any state ("0") or the newest: it is never older, and
//     the API server pages it (from its watch cache's snapshots since Kubernetes 1.34, from etcd before);
//   - a state not older than X (resourceVersionMatch NotOlderThan) for a relist from X, which the watch cache
//     pages without waiting to catch up with etcd, as client-go's own relist from X does not wait either.
//
// The next pages follow the continue token: the pages of one list are one snapshot. A token that expired in
// between fails the list with the API server's 410, and the reflector lists again.
func list(ctx context.Context, lw toolscache.ListerWithContext, trim toolscache.TransformFunc, pageSize int64, opts metav1.ListOptions) (runtime.Object, error) {
	opts.Limit = pageSize
	switch opts.ResourceVersion {
	case "", "0":
		opts.ResourceVersion = ""
	default:
		opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
	}
	var kept []runtime.Object
	for {
		page, err := lw.ListWithContext(ctx, opts)
		if err != nil {
			return nil, err
		}
		// Copies, so that no trimmed object holds the page's array of whole objects.
		objs, err := meta.ExtractListWithAlloc(page)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			t, err := trim(o)
			if err != nil {
				return nil, err
			}
			obj, ok := t.(runtime.Object)
			if !ok {
				return nil, fmt.Errorf("trimming a listed %T gave a %T, not an API object", o, t)
			}
			kept = append(kept, obj)
		}
		lm, err := meta.ListAccessor(page)
		if err != nil {
			return nil, err
		}
		if lm.GetContinue() == "" {
			// The last page carries the snapshot's resourceVersion; its items make way for every page's.
			if err := meta.SetList(page, kept); err != nil {
				return nil, err
			}
			return page, nil
		}
		// A continue token carries the snapshot; the API server refuses a resourceVersion beside it.
		opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = lm.GetContinue(), "", ""
	}
}
