package scoreagent

import (
	"testing"
	"time"
)

func TestValidUntil(t *testing.T) {
	at := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		measuredAt time.Time
		validFor   time.Duration
		want       time.Time
	}{
		"the default":                {measuredAt: at, want: at.Add(10 * time.Minute)},
		"negative: the default":      {measuredAt: at, validFor: -time.Second, want: at.Add(10 * time.Minute)},
		"a validFor":                 {measuredAt: at, validFor: time.Hour, want: at.Add(time.Hour)},
		"truncated to the second":    {measuredAt: at.Add(900 * time.Millisecond), validFor: time.Minute, want: at.Add(time.Minute)},
		"a validFor below a second":  {measuredAt: at, validFor: time.Millisecond, want: at},
		"another zone, same instant": {measuredAt: at.In(time.FixedZone("x", 3600)), validFor: time.Minute, want: at.Add(time.Minute)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ValidUntil(tc.measuredAt, tc.validFor); !got.Equal(tc.want) {
				t.Errorf("ValidUntil = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestExpired(t *testing.T) {
	until := time.Date(2025, 5, 1, 12, 10, 0, 0, time.UTC)
	cases := map[string]struct {
		validUntil, now time.Time
		want            bool
	}{
		"before":               {validUntil: until, now: until.Add(-time.Nanosecond), want: false},
		"at the instant":       {validUntil: until, now: until, want: true},
		"after":                {validUntil: until, now: until.Add(time.Hour), want: true},
		"no validUntil: never": {now: until, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Expired(tc.validUntil, tc.now); got != tc.want {
				t.Errorf("Expired = %v, want %v", got, tc.want)
			}
		})
	}
}

// A score measured now is not expired now and is expired once validFor passes.
func TestValidUntilThenExpired(t *testing.T) {
	now := time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	until := ValidUntil(now, 0)
	if Expired(until, now) {
		t.Error("a fresh score is expired")
	}
	if !Expired(until, now.Add(DefaultValidFor)) {
		t.Error("a score is not expired after DefaultValidFor")
	}
}
