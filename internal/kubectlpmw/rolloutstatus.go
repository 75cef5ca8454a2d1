package kubectlpmw

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// statusPollInterval is how often rollout status reads the PlacementManifestWork while it waits.
const statusPollInterval = time.Second

// failedReasons are the reasons of RolloutComplete False that end a rollout: it does not go on by itself.
var failedReasons = map[string]bool{
	workv1alpha1.ReasonRolloutMaxFailures:     true,
	workv1alpha1.ReasonRolloutTimeout:         true,
	workv1alpha1.ReasonInvalidRolloutStrategy: true,
	workv1alpha1.ReasonRolledBack:             true,
}

func newRolloutStatusCommand(s *Streams) *cobra.Command {
	var (
		hf      hubFlags
		watch   bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Wait until a PlacementManifestWork's current revision is rolled out to every cluster",
		Long: `Wait for the rollout of a PlacementManifestWork, as kubectl rollout status does for a Deployment, printing a
line each time the progress changes (from status.rollout and the conditions, once the manager has observed
the current generation).

It exits 0 when RolloutComplete is True for the current generation and every decided cluster is available,
and 3 when the rollout failed (RolloutComplete False with RolloutMaxFailures, RolloutTimeout,
InvalidRolloutStrategy or RolledBack, or Stalled True), or when --timeout passed first. With --watch=false it
prints the progress once and exits 0 or 3 without waiting.`,
		Example: `  # Wait for a change to reach every cluster
  kubectl pmw rollout status web -n apps

  # Give up after 10 minutes (exit 3)
  kubectl pmw rollout status web -n apps --timeout 10m

  # Where the rollout stands now, without waiting
  kubectl pmw rollout status web -n apps --watch=false`,
		Args:              nameArg,
		ValidArgsFunction: hf.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout < 0 {
				return usageError("--timeout %s: give a duration from 0 (no timeout), such as 5m", timeout)
			}
			h, err := hf.connect()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var deadline <-chan time.Time
			if timeout > 0 && watch {
				timer := time.NewTimer(timeout)
				defer timer.Stop()
				deadline = timer.C
			}
			ticker := time.NewTicker(statusPollInterval)
			defer ticker.Stop()
			last := ""
			for {
				live, err := getPMW(ctx, h, args[0])
				if err != nil {
					return err
				}
				p := RolloutProgress(live.pmw, live.paused())
				if p.Failed {
					return &exitError{code: ExitNotReady, err: errors.New(p.Message)}
				}
				if p.Message != last {
					if _, err := fmt.Fprintln(s.Out, p.Message); err != nil {
						return err
					}
					last = p.Message
				}
				switch {
				case p.Done:
					return nil
				case !watch:
					return errNotReady
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-deadline:
					return &exitError{code: ExitNotReady, err: fmt.Errorf("timed out after %s waiting for the rollout of %s", timeout, pmwRef(args[0]))}
				case <-ticker.C:
				}
			}
		},
	}
	hf.add(cmd.Flags())
	_ = cmd.RegisterFlagCompletionFunc("namespace", hf.completeNamespaces)
	cmd.Flags().BoolVarP(&watch, "watch", "w", true, "Wait until the rollout finishes; false prints where it stands once")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "How long to wait before exiting 3 (0: no limit)")
	return cmd
}

// Progress is where a rollout stands, for rollout status: Done when it finished, Failed when it stopped and
// does not go on by itself; Message says which, as a line to print.
type Progress struct {
	Done    bool
	Failed  bool
	Message string
}

// RolloutProgress judges the rollout of a PlacementManifestWork from its status, without I/O. Only conditions
// of the current generation count, once the status describes it. paused is spec.paused.
func RolloutProgress(pmw *workv1alpha1.PlacementManifestWork, paused bool) Progress {
	ref := pmwRef(pmw.Name)
	st := pmw.Status
	if st.ObservedGeneration != pmw.Generation {
		return Progress{Message: fmt.Sprintf("Waiting for the manager to observe generation %d of %s (observed %d)...",
			pmw.Generation, ref, st.ObservedGeneration)}
	}
	cond := func(t string) *metav1.Condition {
		c := meta.FindStatusCondition(st.Conditions, t)
		if c == nil || c.ObservedGeneration != pmw.Generation {
			return nil
		}
		return c
	}
	rollout := cond(workv1alpha1.ConditionRolloutComplete)
	revision := ""
	if r := st.CurrentRevision; r != nil {
		revision = fmt.Sprintf(" (revision %d)", r.Revision)
	}
	if rollout != nil && rollout.Status == metav1.ConditionFalse && failedReasons[rollout.Reason] {
		return Progress{Failed: true, Message: fmt.Sprintf("the rollout of %s%s failed: %s: %s", ref, revision, rollout.Reason, oneLine(rollout.Message))}
	}
	if c := cond(workv1alpha1.ConditionStalled); c != nil && c.Status == metav1.ConditionTrue {
		return Progress{Failed: true, Message: fmt.Sprintf("the rollout of %s cannot progress: %s: %s", ref, c.Reason, oneLine(c.Message))}
	}
	s := st.PlacedManifestWorkSummary
	switch {
	case rollout == nil:
		return Progress{Message: fmt.Sprintf("Waiting for the manager to report the rollout of %s...", ref)}
	case rollout.Status == metav1.ConditionTrue && s.Available >= s.Total:
		return Progress{Done: true, Message: fmt.Sprintf("%s successfully rolled out%s to %d clusters", ref, revision, s.Total)}
	case rollout.Status == metav1.ConditionTrue:
		return Progress{Message: fmt.Sprintf("Waiting for the rollout of %s%s to finish: %d of %d clusters available...", ref, revision, s.Available, s.Total)}
	case rollout.Status == metav1.ConditionUnknown:
		if ready := cond(workv1alpha1.ConditionReady); ready != nil && ready.Status == metav1.ConditionTrue && s.Total == 0 {
			return Progress{Done: true, Message: fmt.Sprintf("%s has no cluster to roll out to: %s", ref, oneLine(ready.Message))}
		}
		return Progress{Message: fmt.Sprintf("Waiting for the rollout of %s: %s: %s...", ref, rollout.Reason, oneLine(rollout.Message))}
	}
	msg := fmt.Sprintf("Waiting for the rollout of %s%s to finish", ref, revision)
	if ro := st.Rollout; ro != nil {
		msg += fmt.Sprintf(": %d of %d clusters updated, %d succeeded, %d failed", ro.Updated, ro.Total, ro.Succeeded, ro.Failed)
		if ro.CurrentGroup != "" {
			msg += ", group " + ro.CurrentGroup
		}
	}
	if paused {
		msg += fmt.Sprintf("; paused: kubectl pmw rollout resume %s", pmw.Name)
	}
	if ro := st.Rollout; ro != nil && ro.AwaitingApproval != "" {
		msg += fmt.Sprintf("; waiting for approval at gate %s: kubectl pmw rollout approve %s --gate %s", ro.AwaitingApproval, pmw.Name, ro.AwaitingApproval)
	}
	return Progress{Message: msg + "..."}
}
