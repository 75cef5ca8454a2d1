package failover

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNext(t *testing.T) {
	p := Policy{Grace: 5 * time.Minute, Recovery: 2 * time.Minute}
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	cases := map[string]struct {
		health      Health
		state       State
		want        State
		wantRecheck time.Duration
	}{
		"healthy, nothing recorded": {health: Available},
		"becomes unhealthy":         {health: Unhealthy, want: State{UnhealthySince: now}, wantRecheck: 5 * time.Minute},
		"unhealthy within the grace period": {
			health: Unhealthy, state: State{UnhealthySince: ago(3 * time.Minute)},
			want: State{UnhealthySince: ago(3 * time.Minute)}, wantRecheck: 2 * time.Minute,
		},
		"unhealthy for the whole grace period fails over": {
			health: Unhealthy, state: State{UnhealthySince: ago(5 * time.Minute)},
			want: State{UnhealthySince: ago(5 * time.Minute), FailedOver: true, FailedOverSince: now},
		},
		"recovers before the grace period: forgotten": {
			health: Available, state: State{UnhealthySince: ago(time.Minute)},
		},
		"an outage of a minute, then a slow recovery, is not a failover": {
			health: Progressing, state: State{UnhealthySince: ago(time.Minute)},
		},
		"progressing long after a short outage does not fail over": {
			health: Unhealthy, state: State{},
			want: State{UnhealthySince: now}, wantRecheck: 5 * time.Minute,
		},
		"failed over and available: recovery starts": {
			health: Available, state: State{UnhealthySince: ago(10 * time.Minute), FailedOver: true},
			want: State{FailedOver: true, HealthySince: now}, wantRecheck: 2 * time.Minute,
		},
		"recovering, not long enough": {
			health: Available, state: State{FailedOver: true, HealthySince: ago(time.Minute)},
			want: State{FailedOver: true, HealthySince: ago(time.Minute)}, wantRecheck: time.Minute,
		},
		"recovered for the recovery period: shares come back": {
			health: Available, state: State{FailedOver: true, HealthySince: ago(2 * time.Minute)},
		},
		"recovering, then unhealthy again: stays failed over, recovery forgotten": {
			health: Unhealthy, state: State{FailedOver: true, HealthySince: ago(time.Minute)},
			want: State{FailedOver: true, UnhealthySince: now},
		},
		"failed over and progressing: stays failed over, recovery starts again later": {
			health: Progressing, state: State{FailedOver: true, HealthySince: ago(time.Minute), UnhealthySince: ago(time.Hour)},
			want: State{FailedOver: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, recheck := Next(p, now, tc.health, tc.state)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}
			if recheck != tc.wantRecheck {
				t.Errorf("recheck = %v, want %v", recheck, tc.wantRecheck)
			}
		})
	}
}

// A cluster unhealthy, then progressing, then unhealthy again, for less than the grace period each time, is
// never failed over: only an unbroken spell counts.
func TestNextOnlyUnbrokenSpellsFailOver(t *testing.T) {
	p := Policy{Grace: 5 * time.Minute, Recovery: 2 * time.Minute}
	start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	var s State
	for minute := range 30 {
		h := Unhealthy
		if minute%4 == 3 {
			h = Progressing
		}
		s, _ = Next(p, start.Add(time.Duration(minute)*time.Minute), h, s)
		if s.FailedOver {
			t.Fatalf("failed over at minute %d after spells of 3 minutes", minute)
		}
	}
}
