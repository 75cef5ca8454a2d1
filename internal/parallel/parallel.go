// Package parallel runs a bounded number of calls at once: the manager's ManifestWork writes, and the
// harnesses' creates and status writes.
package parallel

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/go-logr/logr"
)

// Run calls fn for 0..n-1, at most limit at once (all at once when limit < 1), and returns the errors in no
// particular order. Once ctx is done it starts no more calls and adds ctx's error; the calls started run to
// their end. A call that panics returns the panic as its error (see Go).
func Run(ctx context.Context, n, limit int, fn func(i int) error) []error {
	if limit < 1 {
		limit = max(n, 1)
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	add := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	sem := make(chan struct{}, limit)
	for i := range n {
		sem <- struct{}{}
		if err := ctx.Err(); err != nil {
			<-sem
			add(err)
			break
		}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			if err := recovered(ctx, func() error { return fn(i) }); err != nil {
				add(err)
			}
		}(i)
	}
	wg.Wait()
	return errs
}

// Go calls fn in a goroutine and sends its error on the channel it returns (buffered: nobody has to receive).
// A panic in fn is sent as an error and logged with its stack, as controller-runtime does for a panic in
// Reconcile: a reconcile's goroutines would otherwise end the whole process, every other PMW with it.
func Go(ctx context.Context, fn func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- recovered(ctx, fn) }()
	return done
}

// recovered calls fn and turns a panic in it into an error.
func recovered(ctx context.Context, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v [recovered]", r)
			logr.FromContextOrDiscard(ctx).Error(err, "A call run in its own goroutine panicked", "stack", string(debug.Stack()))
		}
	}()
	return fn()
}
