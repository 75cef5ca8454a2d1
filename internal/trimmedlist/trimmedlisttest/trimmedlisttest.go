// Package trimmedlisttest has what the tests of trimmed lists share: an informer run until it has synced.
package trimmedlisttest

import (
	"context"
	"testing"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
)

// Sync runs inf until it has synced and stops it. An informer that streams its list over a watch that sends
// nothing never syncs: the trimmed lists never stream, and the other informers' callers turn streamed lists off
// first (watchlist.Off), as the manager does.
func Sync(t testing.TB, inf toolscache.SharedIndexInformer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go inf.RunWithContext(ctx)
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync")
	}
}
