// Package pagedlisttest has what the tests of paged lists share: a lister that records what each list asked
// for, and an informer run until it has synced.
package pagedlisttest

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// Lister answers every list with a copy of List and records its options; its watch sends nothing.
type Lister struct {
	List runtime.Object

	mu    sync.Mutex
	asked []metav1.ListOptions
}

// ListWatch is the ListerWatcher to give an informer.
func (l *Lister) ListWatch() *toolscache.ListWatch {
	return &toolscache.ListWatch{
		ListWithContextFunc: func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.asked = append(l.asked, opts)
			return l.List.DeepCopyObject(), nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}
}

// Asked returns the options of the lists so far.
func (l *Lister) Asked() []metav1.ListOptions {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]metav1.ListOptions(nil), l.asked...)
}

// Sync runs inf until it has synced and stops it. An informer that streams its list over the watch, which here
// sends nothing, never syncs: its ListerWatcher is a paged one (which never streams), or its caller turns
// streamed lists off first (watchlist.Off), as the manager does.
func Sync(t testing.TB, inf toolscache.SharedIndexInformer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go inf.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync")
	}
}
