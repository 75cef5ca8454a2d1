package sandbox

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// ANSI sequences. The view is redrawn over the previous frame (home, then clear each line's rest and
// everything below), not cleared first, so it does not flicker.
const (
	ansiHome        = "\x1b[H"
	ansiClearLine   = "\x1b[K"
	ansiClearBelow  = "\x1b[J"
	ansiClearScreen = "\x1b[2J"
)

// maxPlacementStarts bounds how often the placement controller is started.
const maxPlacementStarts = 3

// watch refreshes the snapshot every Refresh and shows it until the run ends: ctx ends (Ctrl-C), Duration
// passes, or with Once the samples settle or Timeout passes. A child or manager that stops by itself ends
// the run with an error.
func (r *runner) watch(ctx context.Context, c client.Reader) error {
	ticker := time.NewTicker(r.cfg.Refresh)
	defer ticker.Stop()
	var end <-chan time.Time
	switch {
	case r.cfg.Once:
		t := time.NewTimer(r.cfg.Timeout)
		defer t.Stop()
		end = t.C
	case r.cfg.Duration > 0:
		t := time.NewTimer(r.cfg.Duration)
		defer t.Stop()
		end = t.C
	}
	if r.cfg.Terminal {
		fmt.Fprint(r.cfg.Out, ansiClearScreen)
	}
	var lastBody string
	var lastPrint time.Time
	for {
		select {
		case <-ctx.Done():
			r.say("Interrupted")
			return nil
		case <-r.placement.Done():
			// Another process may bind the free port first; that is worth a few more tries, a crash is not.
			if !lostPortRace(r.placement) || r.placementStarts >= maxPlacementStarts {
				return r.placement.ExitError()
			}
			_ = r.placement.Stop()
			ctrl.LoggerFrom(ctx).Info("The placement controller lost its port to another process; starting it again")
			if err := r.startPlacement(); err != nil {
				return err
			}
		case err := <-r.managerErr:
			return err
		case <-end:
			r.refresh(ctx, c)
			r.show(r.body(), true)
			if r.cfg.Once && !r.res.Settled {
				_, why := Settled(r.res.Final, r.res.Samples, r.cfg.Clusters)
				return fmt.Errorf("%w within %s: %s", ErrNotSettled, r.cfg.Timeout, strings.Join(why, "; "))
			}
			return nil
		case <-ticker.C:
			if !r.refresh(ctx, c) {
				continue
			}
			body := r.body()
			switch {
			case r.cfg.Once && r.res.Settled:
				r.show(body, true)
				r.say("All %d samples are applied, available and ready on their clusters (%d in the sandbox; %s after start)",
					len(r.res.Samples), r.cfg.Clusters, time.Since(r.start).Round(100*time.Millisecond))
				return nil
			case r.cfg.Terminal:
				r.show(body, false)
			case body != lastBody && time.Since(lastPrint) >= r.cfg.CompactEvery:
				// Off a terminal (a log, a pipe) a block is printed only when something changed, and at most
				// every CompactEvery, so the output stays readable.
				r.show(body, false)
				lastBody, lastPrint = body, time.Now()
			}
		}
	}
}

// refresh reads the hub into r.res.Final; a failed read is logged and skipped.
func (r *runner) refresh(ctx context.Context, c client.Reader) bool {
	s, err := collect(ctx, c, r.cfg.Behaviors(), r.res.Samples)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Reading the hub for the live view")
		return false
	}
	r.res.Final = s
	r.res.Settled, _ = Settled(s, r.res.Samples, r.cfg.Clusters)
	return true
}

func (r *runner) body() string { return Render(r.res.Final) }

// show puts one frame on screen: in place on a terminal, as a block with a time stamp otherwise.
func (r *runner) show(body string, final bool) {
	up := time.Since(r.start).Round(time.Second)
	if !r.cfg.Terminal {
		label := "status"
		if final {
			label = "final status"
		}
		fmt.Fprintf(r.cfg.Out, "----- %s at +%s -----\n%s", label, up, body)
		return
	}
	frame := r.header(up) + "\n" + body
	var b strings.Builder
	b.WriteString(ansiHome)
	for _, line := range strings.Split(strings.TrimSuffix(frame, "\n"), "\n") {
		b.WriteString(line)
		b.WriteString(ansiClearLine + "\n")
	}
	b.WriteString(ansiClearBelow)
	fmt.Fprint(r.cfg.Out, b.String())
}

// header says how to reach the sandbox; the live view clears the start-up lines that said it first.
func (r *runner) header(up time.Duration) string {
	var b strings.Builder
	stop := "Ctrl-C stops it and removes its files."
	if r.cfg.Keep {
		stop = "Ctrl-C stops it (its files are kept)."
	}
	fmt.Fprintf(&b, "PlacementManifestWork sandbox: %d clusters, up %s. %s\n", r.cfg.Clusters, up, stop)
	fmt.Fprintf(&b, "  export KUBECONFIG=%s\n", r.res.Kubeconfig)
	fmt.Fprintf(&b, "  kubectl get pmw -A | kubectl get manifestworks -A | kubectl label managedcluster cluster1 region=eu-west --overwrite\n")
	fmt.Fprintf(&b, "  transparent mode: kubectl -n %s rollout status deployment/web | kubectl annotate namespace %s %s=region=us-east --overwrite\n",
		FleetNamespace, FleetNamespace, workv1alpha1.AnnotationFleetClusterSelector)
	logs := make([]string, 0, len(r.logs))
	for _, l := range r.logs {
		logs = append(logs, filepath.Base(l))
	}
	fmt.Fprintf(&b, "  logs in %s: %s\n", r.res.RunDir, strings.Join(logs, ", "))
	return b.String()
}
