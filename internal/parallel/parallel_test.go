package parallel

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
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

// A panic in a call is that call's error, logged with its stack; the others still run and the process goes on.
func TestPanicsAreErrors(t *testing.T) {
	var logged []string
	ctx := logr.NewContext(context.Background(), funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{}))
	boom := func() error { panic("boom") }
	failed := errors.New("failed")

	cases := map[string]struct {
		run       func() []error
		wantErrs  []string
		wantLogs  int
		wantStack bool
	}{
		"Run: the panicking call's error beside the others'": {
			run: func() []error {
				return Run(ctx, 3, 1, func(i int) error {
					switch i {
					case 0:
						return boom()
					case 1:
						return failed
					}
					return nil
				})
			},
			wantErrs: []string{"panic: boom [recovered]", "failed"}, wantLogs: 1, wantStack: true,
		},
		"Go: a panic": {
			run:      func() []error { return []error{<-Go(ctx, boom)} },
			wantErrs: []string{"panic: boom [recovered]"}, wantLogs: 1, wantStack: true,
		},
		"Go: an error as it is": {
			run:      func() []error { return []error{<-Go(ctx, func() error { return failed })} },
			wantErrs: []string{"failed"},
		},
		"Go: no error": {
			run:      func() []error { return []error{<-Go(ctx, func() error { return nil })} },
			wantErrs: []string{""},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			logged = nil
			var got []string
			for _, err := range tc.run() {
				msg := ""
				if err != nil {
					msg = err.Error()
				}
				got = append(got, msg)
			}
			slices.Sort(got)
			want := slices.Clone(tc.wantErrs)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("errors %q; want %q", got, want)
			}
			if len(logged) != tc.wantLogs {
				t.Fatalf("logged %d lines, want %d: %q", len(logged), tc.wantLogs, logged)
			}
			if tc.wantStack && !strings.Contains(logged[0], "parallel_test.go") {
				t.Errorf("the log has no stack of the panic: %s", logged[0])
			}
		})
	}
}
