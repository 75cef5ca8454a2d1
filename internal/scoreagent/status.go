package scoreagent

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/text"
)

// The API's bounds on a status score's raw measurement and message.
const (
	maxRaw          = 256
	maxScoreMessage = 1024
)

// measurement is what one measurement of a generator's spec found.
type measurement struct {
	uid        types.UID
	generation int64
	// at is when the measurement ended, to the second (what the API's times keep).
	at time.Time
	// scores are the scores measured, in the spec's order.
	scores []scoresv1alpha1.MeasuredScore
	// failed says, for each score that could not be measured, why.
	failed []string
}

// result is one request's outcome, as measure collects them.
type result struct {
	name string
	res  scoreagent.Result
	err  error
}

// newMeasurement keeps the measured scores and the failures of results, in order.
func newMeasurement(gen *scoresv1alpha1.AddOnPlacementScoreGenerator, at time.Time, results []result) *measurement {
	m := &measurement{uid: gen.UID, generation: gen.Generation, at: at.Truncate(time.Second)}
	for _, r := range results {
		if r.err != nil {
			m.failed = append(m.failed, r.err.Error())
			continue
		}
		m.scores = append(m.scores, scoresv1alpha1.MeasuredScore{
			Name: r.name, Value: r.res.Value, Raw: truncate(r.res.Raw, maxRaw), Message: truncate(r.res.Message, maxScoreMessage),
		})
	}
	return m
}

// generatorStatus is the generator's status after a reconcile: the verdict in Valid; the measurement m (of
// this generation, or nil when none was made since the agent started) in Measured, lastMeasuredTime and
// scores; writeErr, the AddOnPlacementScore's write failing, in Measured. Without m the last status's
// measurement stays. Conditions change their lastTransitionTime to now only when their status changes.
func generatorStatus(gen *scoresv1alpha1.AddOnPlacementScoreGenerator, v verdict, m *measurement, validFor time.Duration, writeErr error, now time.Time) scoresv1alpha1.AddOnPlacementScoreGeneratorStatus {
	st := *gen.Status.DeepCopy()
	st.ObservedGeneration = gen.Generation
	at := metav1.NewTime(now.Truncate(time.Second))
	set := func(typ string, ok bool, reason, message string) {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
			Message: truncate(message, maxMessage), ObservedGeneration: gen.Generation, LastTransitionTime: at})
	}

	set(scoresv1alpha1.ConditionValid, v.valid(), v.reason, v.message)
	switch {
	case !v.valid():
		set(scoresv1alpha1.ConditionMeasured, false, scoresv1alpha1.ReasonNotValid,
			"the generator is not valid (see Valid), so nothing is measured; the scores written before stay until their validUntil")
		return st
	case m == nil:
		return st
	}

	if len(m.scores) > 0 {
		st.Scores = m.scores
		st.LastMeasuredTime = &metav1.Time{Time: m.at}
	}
	failed := strings.Join(m.failed, "; ")
	switch {
	case writeErr != nil:
		set(scoresv1alpha1.ConditionMeasured, false, scoresv1alpha1.ReasonMeasureFailed, writeFailed(writeErr))
	case len(m.failed) > 0 && len(m.scores) > 0:
		set(scoresv1alpha1.ConditionMeasured, false, scoresv1alpha1.ReasonMeasureFailed,
			failed+"; it is left out of the AddOnPlacementScore, the other scores were written")
	case len(m.failed) > 0:
		set(scoresv1alpha1.ConditionMeasured, false, scoresv1alpha1.ReasonMeasureFailed,
			failed+"; nothing was written, and the scores written before stay until their validUntil")
	default:
		set(scoresv1alpha1.ConditionMeasured, true, scoresv1alpha1.ReasonMeasured, fmt.Sprintf(
			"%s written to the AddOnPlacementScore %s, valid until %s",
			text.Count(len(m.scores), "score", "scores"), gen.Name, scoreagent.ValidUntil(m.at, validFor).UTC().Format(time.RFC3339)))
	}
	return st
}

// desiredScore is the AddOnPlacementScore status that the measurement m makes: its scores, valid until the
// end of the measurement plus validFor; nil when m measured nothing, which leaves the AddOnPlacementScore as
// it is.
func desiredScore(m *measurement, validFor time.Duration) *clusterv1alpha1.AddOnPlacementScoreStatus {
	if m == nil || len(m.scores) == 0 {
		return nil
	}
	st := &clusterv1alpha1.AddOnPlacementScoreStatus{
		ValidUntil: &metav1.Time{Time: scoreagent.ValidUntil(m.at, validFor)},
	}
	for _, s := range m.scores {
		st.Scores = append(st.Scores, clusterv1alpha1.AddOnPlacementScoreItem{Name: s.Name, Value: s.Value})
	}
	return st
}

// scoreStatus is current with desired's scores and validUntil, and the condition that says the agent wrote
// them; current unchanged, and false, when it already says so.
func scoreStatus(current clusterv1alpha1.AddOnPlacementScoreStatus, desired *clusterv1alpha1.AddOnPlacementScoreStatus, generation int64, now time.Time) (clusterv1alpha1.AddOnPlacementScoreStatus, bool) {
	next := *current.DeepCopy()
	next.Scores = desired.Scores
	next.ValidUntil = desired.ValidUntil
	meta.SetStatusCondition(&next.Conditions, metav1.Condition{
		Type: scoresv1alpha1.AddOnPlacementScoreConditionUpdated, Status: metav1.ConditionTrue,
		Reason: scoresv1alpha1.ReasonAddOnPlacementScoreUpdated, Message: "AddOnPlacementScore updated successfully",
		ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now.Truncate(time.Second)),
	})
	if equality.Semantic.DeepEqual(current, next) {
		return current, false
	}
	return next, true
}

// writeFailed is the Measured message when the AddOnPlacementScore cannot be written.
func writeFailed(err error) string {
	return fmt.Sprintf("writing the AddOnPlacementScore failed, retrying: %v", err)
}
