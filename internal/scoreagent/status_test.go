package scoreagent

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
)

var (
	t0       = time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)
	accepted = verdict{reason: scoresv1alpha1.ReasonAccepted, message: "ok"}
	refused  = verdict{reason: scoresv1alpha1.ReasonProbeRefused, message: "refused"}
	minute   = settings{interval: time.Minute, validFor: 10 * time.Minute}
)

// generator is a generator at generation 2 whose status the options fill in.
func generator(opts ...func(*scoresv1alpha1.AddOnPlacementScoreGenerator)) *scoresv1alpha1.AddOnPlacementScoreGenerator {
	g := &scoresv1alpha1.AddOnPlacementScoreGenerator{ObjectMeta: metav1.ObjectMeta{Name: "gen", Namespace: "cluster1", UID: "u1", Generation: 2}}
	for _, o := range opts {
		o(g)
	}
	return g
}

// validAt gives the generator the status of a valid measurement of generation gen at at.
func validAt(gen int64, at time.Time) func(*scoresv1alpha1.AddOnPlacementScoreGenerator) {
	return func(g *scoresv1alpha1.AddOnPlacementScoreGenerator) {
		g.Status.ObservedGeneration = gen
		g.Status.LastMeasuredTime = &metav1.Time{Time: at}
		meta.SetStatusCondition(&g.Status.Conditions, metav1.Condition{Type: scoresv1alpha1.ConditionValid, Status: metav1.ConditionTrue,
			Reason: scoresv1alpha1.ReasonAccepted, ObservedGeneration: gen})
	}
}

func TestDue(t *testing.T) {
	last := &measurement{uid: "u1", generation: 2, at: t0}
	cases := map[string]struct {
		gen         *scoresv1alpha1.AddOnPlacementScoreGenerator
		v           verdict
		last        *measurement
		scoreExists bool
		now         time.Time
		want        bool
		wantWait    time.Duration
	}{
		"never measured":                   {gen: generator(), v: accepted, now: t0, want: true},
		"invalid: never":                   {gen: generator(), v: refused, now: t0},
		"measured by this agent, recently": {gen: generator(), v: accepted, last: last, scoreExists: true, now: t0.Add(20 * time.Second), wantWait: 40 * time.Second},
		"measured by this agent, interval passed": {
			gen: generator(), v: accepted, last: last, scoreExists: true, now: t0.Add(time.Minute), want: true,
		},
		"the score is gone but this agent has the measurement: written again, not measured": {
			gen: generator(), v: accepted, last: last, now: t0.Add(time.Second), wantWait: 59 * time.Second,
		},
		"after a restart: the status's time counts": {
			gen: generator(validAt(2, t0)), v: accepted, scoreExists: true, now: t0.Add(30 * time.Second), wantWait: 30 * time.Second,
		},
		"after a restart, without the score: measured": {
			gen: generator(validAt(2, t0)), v: accepted, now: t0.Add(30 * time.Second), want: true,
		},
		"the spec changed since the status": {
			gen: generator(validAt(1, t0)), v: accepted, scoreExists: true, now: t0.Add(time.Second), want: true,
		},
		"invalid before at this generation (the agent was allowed more since)": {
			gen: generator(validAt(2, t0), func(g *scoresv1alpha1.AddOnPlacementScoreGenerator) {
				meta.SetStatusCondition(&g.Status.Conditions, metav1.Condition{Type: scoresv1alpha1.ConditionValid, Status: metav1.ConditionFalse,
					Reason: scoresv1alpha1.ReasonProbeRefused, ObservedGeneration: 2})
			}),
			v: accepted, scoreExists: true, now: t0.Add(time.Second), want: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, wait := due(tc.gen, tc.v, tc.last, tc.scoreExists, minute, tc.now)
			if got != tc.want || wait != tc.wantWait {
				t.Errorf("due = %v, %s; want %v, %s", got, wait, tc.want, tc.wantWait)
			}
		})
	}
}

func TestMemory(t *testing.T) {
	var m memory
	gen := generator()
	if m.lastOf(gen) != nil {
		t.Fatal("an empty memory remembers")
	}
	meas := &measurement{uid: "u1", generation: 2, at: t0}
	m.measured(types.NamespacedName{Namespace: "cluster1", Name: "gen"}, meas)
	if m.lastOf(gen) != meas {
		t.Error("the measurement is not remembered")
	}
	if m.lastOf(generator(func(g *scoresv1alpha1.AddOnPlacementScoreGenerator) { g.Generation = 3 })) != nil {
		t.Error("a measurement of another generation counts")
	}
	if m.lastOf(generator(func(g *scoresv1alpha1.AddOnPlacementScoreGenerator) { g.UID = "u2" })) != nil {
		t.Error("a measurement of a generator of the same name that was deleted counts")
	}
	m.forget(types.NamespacedName{Namespace: "cluster1", Name: "gen"})
	if m.lastOf(gen) != nil {
		t.Error("forget forgot nothing")
	}
}

func TestNewMeasurement(t *testing.T) {
	long := make([]byte, 2000)
	for i := range long {
		long[i] = 'x'
	}
	m := newMeasurement(generator(), t0.Add(1500*time.Millisecond), []result{
		{name: "a", res: scoreagent.Result{Value: 42, Raw: "84ms"}},
		{name: "b", err: errors.New(`score "b": listing nodes: forbidden`)},
		{name: "c", res: scoreagent.Result{Value: -3, Raw: "106ms", Message: string(long)}},
	})
	if !m.at.Equal(t0.Add(time.Second)) {
		t.Errorf("at = %s, want it to the second", m.at)
	}
	if m.uid != "u1" || m.generation != 2 {
		t.Errorf("measurement of %s/%d", m.uid, m.generation)
	}
	if len(m.scores) != 2 || m.scores[0].Name != "a" || m.scores[1].Name != "c" || len(m.scores[1].Message) > maxScoreMessage {
		t.Errorf("scores = %+v", m.scores)
	}
	if diff := cmp.Diff([]string{`score "b": listing nodes: forbidden`}, m.failed); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}
}

func TestGeneratorStatus(t *testing.T) {
	now := t0.Add(90 * time.Second)
	measured := &measurement{uid: "u1", generation: 2, at: t0, scores: []scoresv1alpha1.MeasuredScore{{Name: "a", Value: 42, Raw: "84ms"}}}
	partial := &measurement{uid: "u1", generation: 2, at: t0, scores: measured.scores, failed: []string{`score "b": boom`}}
	none := &measurement{uid: "u1", generation: 2, at: t0, failed: []string{`score "b": boom`}}
	earlier := validAt(2, t0.Add(-time.Hour))
	earlierScores := func(g *scoresv1alpha1.AddOnPlacementScoreGenerator) {
		g.Status.Scores = []scoresv1alpha1.MeasuredScore{{Name: "a", Value: 7}}
	}
	type cond struct {
		Status          metav1.ConditionStatus
		Reason, Message string
	}
	cases := map[string]struct {
		gen          *scoresv1alpha1.AddOnPlacementScoreGenerator
		v            verdict
		m            *measurement
		writeErr     error
		wantValid    cond
		wantMeasured *cond
		wantScores   []scoresv1alpha1.MeasuredScore
		wantLast     *time.Time
	}{
		"measured": {
			gen: generator(), v: accepted, m: measured,
			wantValid:    cond{metav1.ConditionTrue, scoresv1alpha1.ReasonAccepted, "ok"},
			wantMeasured: &cond{metav1.ConditionTrue, scoresv1alpha1.ReasonMeasured, "1 score written to the AddOnPlacementScore gen, valid until 2025-05-01T12:10:00Z"},
			wantScores:   measured.scores, wantLast: &t0,
		},
		"invalid: NotValid, the scores before kept": {
			gen: generator(earlier, earlierScores), v: refused,
			wantValid: cond{metav1.ConditionFalse, scoresv1alpha1.ReasonProbeRefused, "refused"},
			wantMeasured: &cond{metav1.ConditionFalse, scoresv1alpha1.ReasonNotValid,
				"the generator is not valid (see Valid), so nothing is measured; the scores written before stay until their validUntil"},
			wantScores: []scoresv1alpha1.MeasuredScore{{Name: "a", Value: 7}}, wantLast: ptrTo(t0.Add(-time.Hour)),
		},
		"one score failed: the others written": {
			gen: generator(), v: accepted, m: partial,
			wantValid: cond{metav1.ConditionTrue, scoresv1alpha1.ReasonAccepted, "ok"},
			wantMeasured: &cond{metav1.ConditionFalse, scoresv1alpha1.ReasonMeasureFailed,
				`score "b": boom; it is left out of the AddOnPlacementScore, the other scores were written`},
			wantScores: measured.scores, wantLast: &t0,
		},
		"every score failed: the measurement before stays": {
			gen: generator(earlier, earlierScores), v: accepted, m: none,
			wantValid: cond{metav1.ConditionTrue, scoresv1alpha1.ReasonAccepted, "ok"},
			wantMeasured: &cond{metav1.ConditionFalse, scoresv1alpha1.ReasonMeasureFailed,
				`score "b": boom; nothing was written, and the scores written before stay until their validUntil`},
			wantScores: []scoresv1alpha1.MeasuredScore{{Name: "a", Value: 7}}, wantLast: ptrTo(t0.Add(-time.Hour)),
		},
		"the write failed": {
			gen: generator(), v: accepted, m: measured, writeErr: errors.New("forbidden"),
			wantValid:    cond{metav1.ConditionTrue, scoresv1alpha1.ReasonAccepted, "ok"},
			wantMeasured: &cond{metav1.ConditionFalse, scoresv1alpha1.ReasonMeasureFailed, "writing the AddOnPlacementScore failed, retrying: forbidden"},
			wantScores:   measured.scores, wantLast: &t0,
		},
		"valid and not measured since the agent started: Measured as it was": {
			gen: generator(earlier, earlierScores), v: accepted,
			wantValid:  cond{metav1.ConditionTrue, scoresv1alpha1.ReasonAccepted, "ok"},
			wantScores: []scoresv1alpha1.MeasuredScore{{Name: "a", Value: 7}}, wantLast: ptrTo(t0.Add(-time.Hour)),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := generatorStatus(tc.gen, tc.v, tc.m, minute.validFor, tc.writeErr, now)
			if st.ObservedGeneration != 2 {
				t.Errorf("observedGeneration = %d", st.ObservedGeneration)
			}
			check := func(typ string, want *cond) {
				c := meta.FindStatusCondition(st.Conditions, typ)
				switch {
				case want == nil && c != nil:
					t.Errorf("%s is set: %+v", typ, c)
				case want == nil:
				case c == nil:
					t.Errorf("no %s condition", typ)
				default:
					if diff := cmp.Diff(*want, cond{c.Status, c.Reason, c.Message}); diff != "" {
						t.Errorf("%s (-want +got):\n%s", typ, diff)
					}
					if c.ObservedGeneration != 2 {
						t.Errorf("%s's observedGeneration = %d", typ, c.ObservedGeneration)
					}
				}
			}
			check(scoresv1alpha1.ConditionValid, &tc.wantValid)
			check(scoresv1alpha1.ConditionMeasured, tc.wantMeasured)
			if diff := cmp.Diff(tc.wantScores, st.Scores); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
			if (st.LastMeasuredTime == nil) != (tc.wantLast == nil) || st.LastMeasuredTime != nil && !st.LastMeasuredTime.Time.Equal(*tc.wantLast) {
				t.Errorf("lastMeasuredTime = %v, want %v", st.LastMeasuredTime, tc.wantLast)
			}
		})
	}
}

// A status computed again from itself is the same status: a reconcile with nothing new writes nothing.
func TestGeneratorStatusIsStable(t *testing.T) {
	m := &measurement{uid: "u1", generation: 2, at: t0, scores: []scoresv1alpha1.MeasuredScore{{Name: "a", Value: 42, Raw: "84ms"}}}
	gen := generator()
	gen.Status = generatorStatus(gen, accepted, m, time.Minute, nil, t0)
	again := generatorStatus(gen, accepted, m, time.Minute, nil, t0.Add(time.Hour))
	if diff := cmp.Diff(gen.Status, again); diff != "" {
		t.Errorf("the status changed (-first +again):\n%s", diff)
	}
	// And without the measurement in memory (the agent restarted), too.
	if diff := cmp.Diff(gen.Status, generatorStatus(gen, accepted, nil, time.Minute, nil, t0.Add(time.Hour))); diff != "" {
		t.Errorf("the status changed after a restart (-first +again):\n%s", diff)
	}
}

func TestDesiredScoreAndScoreStatus(t *testing.T) {
	if desiredScore(nil, time.Minute) != nil || desiredScore(&measurement{failed: []string{"x"}}, time.Minute) != nil {
		t.Fatal("a measurement without scores writes something")
	}
	m := &measurement{at: t0, scores: []scoresv1alpha1.MeasuredScore{{Name: "fast", Value: 70, Raw: "18ms"}, {Name: "slow", Value: -33, Raw: "200ms"}}}
	desired := desiredScore(m, 30*time.Second)
	want := &clusterv1alpha1.AddOnPlacementScoreStatus{
		Scores:     []clusterv1alpha1.AddOnPlacementScoreItem{{Name: "fast", Value: 70}, {Name: "slow", Value: -33}},
		ValidUntil: &metav1.Time{Time: t0.Add(30 * time.Second)},
	}
	if diff := cmp.Diff(want, desired); diff != "" {
		t.Fatalf("desiredScore (-want +got):\n%s", diff)
	}

	next, changed := scoreStatus(clusterv1alpha1.AddOnPlacementScoreStatus{}, desired, 1, t0)
	if !changed {
		t.Fatal("an empty score is up to date")
	}
	c := meta.FindStatusCondition(next.Conditions, scoresv1alpha1.AddOnPlacementScoreConditionUpdated)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != scoresv1alpha1.ReasonAddOnPlacementScoreUpdated || c.Message != "AddOnPlacementScore updated successfully" {
		t.Errorf("condition = %+v", c)
	}
	if _, changed := scoreStatus(next, desired, 1, t0.Add(time.Minute)); changed {
		t.Error("a score already written is written again")
	}
	later := desiredScore(&measurement{at: t0.Add(time.Minute), scores: m.scores}, 30*time.Second)
	again, changed := scoreStatus(next, later, 1, t0.Add(time.Minute))
	if !changed || !again.ValidUntil.Time.Equal(t0.Add(90*time.Second)) {
		t.Errorf("a new measurement: changed %v, validUntil %v", changed, again.ValidUntil)
	}
}

func ptrTo[T any](v T) *T { return &v }
