package parallel

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestRun(t *testing.T) {
	cases := map[string]struct {
		n, limit    int
		failEvery   int
		wantCalls   int32
		wantErrs    int
		maxInFlight int32
	}{
		"bounded":            {n: 50, limit: 4, wantCalls: 50, maxInFlight: 4},
		"unbounded":          {n: 10, limit: 0, wantCalls: 10, maxInFlight: 10},
		"errors are kept":    {n: 9, limit: 2, failEvery: 3, wantCalls: 9, wantErrs: 3, maxInFlight: 2},
		"nothing to do":      {n: 0, limit: 3},
		"limit beyond calls": {n: 2, limit: 8, wantCalls: 2, maxInFlight: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var calls, inFlight, peak atomic.Int32
			errs := Run(context.Background(), tc.n, tc.limit, func(i int) error {
				calls.Add(1)
				now := inFlight.Add(1)
				defer inFlight.Add(-1)
				for {
					p := peak.Load()
					if now <= p || peak.CompareAndSwap(p, now) {
						break
					}
				}
				if tc.failEvery > 0 && i%tc.failEvery == 0 {
					return errors.New("failed")
				}
				return nil
			})
			if calls.Load() != tc.wantCalls || len(errs) != tc.wantErrs || peak.Load() > tc.maxInFlight {
				t.Errorf("calls %d, errors %d, at most %d at once; want %d, %d, at most %d", calls.Load(), len(errs), peak.Load(), tc.wantCalls, tc.wantErrs, tc.maxInFlight)
			}
		})
	}
}

func TestRunStopsStartingWhenCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	errs := Run(ctx, 100, 1, func(i int) error {
		if calls.Add(1) == 3 {
			cancel()
		}
		return nil
	})
	if calls.Load() != 3 || len(errs) != 1 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("calls %d, errors %v; want 3 calls and the context's error", calls.Load(), errs)
	}
}
