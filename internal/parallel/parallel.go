// Package parallel runs a bounded number of calls at once: the manager's ManifestWork writes, and the
// harnesses' creates and status writes.
package parallel

import (
	"context"
	"sync"
)

// Run calls fn for 0..n-1, at most limit at once (all at once when limit < 1), and returns the errors in no
// particular order. Once ctx is done it starts no more calls and adds ctx's error; the calls started run to
// their end.
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
			if err := fn(i); err != nil {
				add(err)
			}
		}(i)
	}
	wg.Wait()
	return errs
}
