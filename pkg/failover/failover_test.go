package failover

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecide(t *testing.T) {
	p := Policy{Grace: 5 * time.Minute, Recovery: 2 * time.Minute}
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }
	cases := map[string]struct {
		health      Health
		annotations map[string]string
		want        Decision
	}{
		"healthy, nothing recorded": {health: Available, want: Decision{Annotations: map[string]string{}}},
		"becomes unhealthy": {
			health: Unhealthy,
			want:   Decision{Annotations: map[string]string{AnnotationUnhealthySince: at(0)}, RecheckAfter: 5 * time.Minute},
		},
		"unhealthy within the grace period": {
			health:      Unhealthy,
			annotations: map[string]string{AnnotationUnhealthySince: at(3 * time.Minute)},
			want:        Decision{Annotations: map[string]string{AnnotationUnhealthySince: at(3 * time.Minute)}, RecheckAfter: 2 * time.Minute},
		},
		"unhealthy beyond the grace period fails over": {
			health:      Unhealthy,
			annotations: map[string]string{AnnotationUnhealthySince: at(6 * time.Minute)},
			want:        Decision{Annotations: map[string]string{AnnotationUnhealthySince: at(6 * time.Minute)}, FailedOver: true},
		},
		"recovers before the grace period: forgotten": {
			health:      Available,
			annotations: map[string]string{AnnotationUnhealthySince: at(1 * time.Minute)},
			want:        Decision{Annotations: map[string]string{}},
		},
		"failed over and available: recovery starts": {
			health:      Available,
			annotations: map[string]string{AnnotationUnhealthySince: at(10 * time.Minute)},
			want: Decision{Annotations: map[string]string{AnnotationUnhealthySince: at(10 * time.Minute), AnnotationHealthySince: at(0)},
				FailedOver: true, RecheckAfter: 2 * time.Minute},
		},
		"recovering, not long enough": {
			health:      Available,
			annotations: map[string]string{AnnotationUnhealthySince: at(10 * time.Minute), AnnotationHealthySince: at(time.Minute)},
			want: Decision{Annotations: map[string]string{AnnotationUnhealthySince: at(10 * time.Minute), AnnotationHealthySince: at(time.Minute)},
				FailedOver: true, RecheckAfter: time.Minute},
		},
		"recovered long enough: shares come back": {
			health:      Available,
			annotations: map[string]string{AnnotationUnhealthySince: at(10 * time.Minute), AnnotationHealthySince: at(3 * time.Minute)},
			want:        Decision{Annotations: map[string]string{}},
		},
		"flaps during recovery: recovery forgotten, still failed over": {
			health:      Unhealthy,
			annotations: map[string]string{AnnotationUnhealthySince: at(10 * time.Minute), AnnotationHealthySince: at(time.Minute)},
			want:        Decision{Annotations: map[string]string{AnnotationUnhealthySince: at(10 * time.Minute)}, FailedOver: true},
		},
		"progressing keeps a failover": {
			health:      Progressing,
			annotations: map[string]string{AnnotationUnhealthySince: at(10 * time.Minute), AnnotationHealthySince: at(time.Minute)},
			want:        Decision{Annotations: map[string]string{AnnotationUnhealthySince: at(10 * time.Minute)}, FailedOver: true},
		},
		"progressing, never unhealthy": {health: Progressing, want: Decision{Annotations: map[string]string{}}},
		"garbage annotation counts as missing": {
			health:      Unhealthy,
			annotations: map[string]string{AnnotationUnhealthySince: "yesterday"},
			want:        Decision{Annotations: map[string]string{AnnotationUnhealthySince: at(0)}, RecheckAfter: 5 * time.Minute},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Decide(p, now, tc.health, tc.annotations)); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}
