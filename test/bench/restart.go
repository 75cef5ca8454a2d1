package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// recoveryOptions say which of the steps after a row's steady state run (issue #23): a restart of the manager,
// a leader hand-over between two replicas, and how long each watches for writes once the manager converged.
type recoveryOptions struct {
	restart, handover bool
	// window is how long writes are still counted, and statuses compared at its end, after the manager converged.
	window time.Duration
	// done are the rows (contender and size) that ran them: only a row's first run does.
	done map[string]bool
}

// recovery is what a row measured after its steady state; embedded in row, so results.json keeps its fields
// at the row's level.
type recovery struct {
	Restart  *restartStep `json:"restart,omitempty"`
	Handover *restartStep `json:"handover,omitempty"`
	// Rollout is the concurrent rollout of a "concurrent" row.
	Rollout *rollout `json:"rollout,omitempty"`
}

// restartStep is a manager killed (SIGKILL) and another taking over the same, converged, PMWs: the restarted
// process, or the standby replica of a leader hand-over.
type restartStep struct {
	// Seconds is from the kill to the first moment the new process had reconciled every PMW and was idle
	// (convergedOn).
	Seconds float64 `json:"seconds"`
	Err     string  `json:"error,omitempty"`
	// Started is from the kill to the new process's workers starting (restart) or to it leading (hand-over).
	Started float64 `json:"started"`
	// Reconciles are the new process's reconciles until it converged, ReconcilesWindow until the window's end
	// (more means it reconciled again after catching up: a requeue, or an event).
	Reconciles       float64 `json:"reconciles"`
	ReconcilesWindow float64 `json:"reconcilesWindow"`
	// CPU is the new process's CPU seconds until it converged: from its start (restart) or from the kill
	// (hand-over; the standby's caches synced before).
	CPU float64 `json:"cpu"`
	// WindowSeconds is how long writes were counted: from the kill to the end of the window after convergence.
	WindowSeconds float64 `json:"windowSeconds"`
	// Writes are the manager's writes in that time, from the audit log (both replicas: they are one user).
	Writes tally `json:"writes"`
	// ManifestWorkWrites, StatusWrites and OtherPMWWrites split them: ManifestWorks, PMWs' status, the rest
	// of PMWs (metadata, finalizers).
	ManifestWorkWrites int `json:"manifestWorkWrites"`
	StatusWrites       int `json:"statusWrites"`
	OtherPMWWrites     int `json:"otherPMWWrites"`
	// WriteEntries are the audit log's entries of those ManifestWork and PMW writes (the first 50).
	WriteEntries []string `json:"writeEntries,omitempty"`
	// PMWs is how many PMWs were compared; Changed names those whose status or resourceVersion differ, with the
	// difference (the first 10).
	PMWs      int      `json:"pmws"`
	Unchanged int      `json:"unchanged"`
	Changed   []string `json:"changed,omitempty"`
}

func (s *restartStep) ok() bool { return s != nil && s.Err == "" }

// convergedOn says how the harness knows, from outside, that a manager has caught up.
const convergedOn = "the first scrape (every 50 ms) of its metrics endpoint showing at least one " +
	"placementmanifestwork reconcile per PMW (controller_runtime_reconcile_total), an empty queue (workqueue_depth) " +
	"and no reconcile running (controller_runtime_active_workers)"

// pmwStatus is what is compared of a PMW before and after.
type pmwStatus struct {
	resourceVersion string
	status          workv1alpha1.PlacementManifestWorkStatus
}

func (b *bench) pmwStatuses(ctx context.Context, ns string) (map[string]pmwStatus, error) {
	list := &workv1alpha1.PlacementManifestWorkList{}
	if err := b.h.harness.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := make(map[string]pmwStatus, len(list.Items))
	for _, p := range list.Items {
		out[p.Name] = pmwStatus{resourceVersion: p.ResourceVersion, status: p.Status}
	}
	return out, nil
}

// compareStatuses counts the PMWs whose status and resourceVersion are the same, and describes the others.
// Nothing is ignored: with no write, nothing may differ.
func compareStatuses(before, after map[string]pmwStatus) (unchanged int, changed []string) {
	for _, n := range slices.Sorted(maps.Keys(before)) {
		a, ok := after[n]
		switch {
		case !ok:
			changed = append(changed, n+": gone")
		case a.resourceVersion != before[n].resourceVersion || !cmp.Equal(before[n].status, a.status):
			d := cmp.Diff(before[n].status, a.status)
			if len(d) > 2000 {
				d = d[:2000] + "..."
			}
			changed = append(changed, fmt.Sprintf("%s: resourceVersion %s -> %s; status (-before +after):\n%s", n, before[n].resourceVersion, a.resourceVersion, d))
		default:
			unchanged++
		}
	}
	for n := range after {
		if _, ok := before[n]; !ok {
			changed = append(changed, n+": new")
		}
	}
	return unchanged, changed
}

// managerMetrics are the figures of a manager's metrics endpoint that tell whether it has caught up.
type managerMetrics struct {
	reconciles, reconcileSeconds, depth, active float64
	leader                                      bool
}

// parseManagerMetrics reads the placementmanifestwork controller's reconciles (every result) and their total
// time, its queue's depth,
// its running reconciles, and whether the process leads, from Prometheus' text format.
func parseManagerMetrics(text string) managerMetrics {
	var m managerMetrics
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			continue
		}
		ours := strings.Contains(line, `controller="placementmanifestwork"`) || strings.Contains(line, `name="placementmanifestwork"`)
		switch {
		case ours && strings.HasPrefix(line, "controller_runtime_reconcile_total{"):
			m.reconciles += v
		case ours && strings.HasPrefix(line, "controller_runtime_reconcile_time_seconds_sum{"):
			m.reconcileSeconds += v
		case ours && strings.HasPrefix(line, "workqueue_depth{"):
			m.depth += v
		case ours && strings.HasPrefix(line, "controller_runtime_active_workers{"):
			m.active += v
		case strings.HasPrefix(line, "leader_election_master_status{") && v == 1:
			m.leader = true
		}
	}
	return m
}

func (m managerMetrics) converged(pmws int) bool {
	return m.reconciles >= float64(pmws) && m.depth == 0 && m.active == 0
}

func scrapeManager(url string) (managerMetrics, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return managerMetrics{}, err
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	return parseManagerMetrics(b.String()), sc.Err()
}

// waitConverged scrapes p until it converged on pmws PMWs, and returns when it first led (when lead) and when
// it converged.
func waitConverged(ctx context.Context, p *process, pmws int, lead bool, timeout time.Duration) (led, converged time.Time, m managerMetrics, err error) {
	deadline := time.Now().Add(timeout)
	for {
		m, err = scrapeManager(p.metricsURL)
		now := time.Now()
		if err == nil {
			if lead && m.leader && led.IsZero() {
				led = now
			}
			if m.converged(pmws) && (!lead || m.leader) {
				return led, now, m, nil
			}
		}
		if e := p.alive(); e != nil {
			return led, converged, m, e
		}
		if now.After(deadline) || ctx.Err() != nil {
			return led, converged, m, fmt.Errorf("not converged after %s: %.0f reconciles of %d PMWs, queue %.0f, running %.0f, leader %v",
				timeout, m.reconciles, pmws, m.depth, m.active, m.leader)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill ends p at once, as a crashed or evicted pod ends (SIGKILL to its process group), and returns its last
// CPU and peak RSS.
func kill(p *process) procStats {
	st := p.sample()
	_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
	<-p.Done()
	_ = p.Stop()
	return st
}

// afterSteady runs the restart and the leader hand-over after the row's steady state, on the manager only, and
// returns the process the row continues with. The killed processes' CPU is added to the row's.
func (b *bench) afterSteady(ctx context.Context, c contender, p *process, r *row, ns string, pmws int) *process {
	m, ok := c.(*manager)
	key := fmt.Sprintf("%s/%s/%d/%d", c.title(), r.Kind, r.Jobs, r.N)
	if !ok || m.name != "" || b.recovery.done[key] || (!b.recovery.restart && !b.recovery.handover) {
		return p
	}
	b.recovery.done[key] = true
	// The row's reconciles so far are this process's, which is about to be killed: counted now, the rest from
	// the process that runs the delete.
	b.scrape(p, r)
	timeout := b.timeout(r.Works)
	if b.recovery.restart {
		logf("  restart: SIGKILL, start again")
		r.Restart, p = b.restart(ctx, m, p, r, ns, pmws, timeout, false)
		if !r.Restart.ok() {
			return p
		}
	}
	if b.recovery.handover {
		logf("  hand-over: two replicas with leader election, SIGKILL the leader")
		r.Handover, p = b.restart(ctx, m, p, r, ns, pmws, timeout, true)
	}
	return p
}

// restart kills p and measures the manager that takes over: a new process, or with handover the standby of two
// replicas electing a leader (p is replaced by a leader, a standby is started, and the leader is killed).
func (b *bench) restart(ctx context.Context, m *manager, p *process, r *row, ns string, pmws int, timeout time.Duration, handover bool) (*restartStep, *process) {
	s := &restartStep{}
	fail := func(err error) (*restartStep, *process) {
		s.Err = err.Error()
		logf("    FAILED: %v", err)
		r.Errors = append(r.Errors, "restart: "+s.Err)
		return s, p
	}
	account := func(st procStats) {
		r.CPU += st.CPU
		r.HWM = max(r.HWM, st.HWM)
	}
	elect := []string{"--leader-elect", "--leader-election-namespace=" + ns}
	if handover {
		// The leader to kill replaces the row's manager, and converges first; a standby then waits for the lease.
		account(kill(p))
		leader, err := m.startWith(b.dir, elect, "Starting workers")
		if err != nil {
			return fail(err)
		}
		p = leader
		if _, _, _, err := waitConverged(ctx, p, pmws, true, timeout); err != nil {
			return fail(fmt.Errorf("the first leader: %w", err))
		}
	}
	var standby *process
	if handover {
		var err error
		if standby, err = m.startWith(b.dir, elect, "Attempting to acquire leader lease"); err != nil {
			return fail(err)
		}
		// Its caches sync while it stands by.
		time.Sleep(2 * time.Second)
	}
	before, err := b.pmwStatuses(ctx, ns)
	if err != nil {
		return fail(err)
	}
	t0 := time.Now()
	account(kill(p))
	next := standby
	if !handover {
		if next, err = m.startWith(b.dir, nil, "Starting workers"); err != nil {
			return fail(err)
		}
		s.Started = time.Since(t0).Seconds()
	}
	p = next
	// A restarted process's CPU from its start; the standby's from the kill (before, it stood by).
	cpu0 := 0.0
	if handover {
		cpu0 = p.sample().CPU
	}
	led, done, mm, err := waitConverged(ctx, p, pmws, handover, timeout)
	if handover && !led.IsZero() {
		s.Started = led.Sub(t0).Seconds()
	}
	if err != nil {
		return fail(err)
	}
	s.Seconds, s.Reconciles, s.CPU = done.Sub(t0).Seconds(), mm.reconciles, p.sample().CPU-cpu0
	logf("    converged after %.2fs (%s %.2fs, %.0f reconciles); counting writes for %s more", s.Seconds,
		map[bool]string{false: "workers started", true: "leads"}[handover], s.Started, s.Reconciles, b.recovery.window)
	select {
	case <-ctx.Done():
		return fail(ctx.Err())
	case <-time.After(b.recovery.window):
	}
	end := time.Now()
	if mm, err := scrapeManager(p.metricsURL); err == nil {
		s.ReconcilesWindow = mm.reconciles
	}
	b.settleAudit(ctx, end)
	s.WindowSeconds = end.Sub(t0).Seconds()
	s.Writes = b.audit.count(userManager, t0, end)
	s.ManifestWorkWrites, s.StatusWrites, s.OtherPMWWrites = splitWrites(s.Writes)
	after, err := b.pmwStatuses(ctx, ns)
	if err != nil {
		return fail(err)
	}
	s.PMWs = len(before)
	s.Unchanged, s.Changed = compareStatuses(before, after)
	if len(s.Changed) > 10 {
		s.Changed = append(s.Changed[:10], fmt.Sprintf("... and %d more", len(s.Changed)-10))
	}
	if s.ManifestWorkWrites+s.StatusWrites+s.OtherPMWWrites > 0 {
		if s.WriteEntries, err = writeEntries(b.h.auditPath, userManager, t0, end, 50); err != nil {
			s.WriteEntries = append(s.WriteEntries, "reading the audit log: "+err.Error())
		}
	}
	logf("    %d ManifestWork writes, %d PMW status writes, %d other PMW writes (all writes: %s); %d of %d statuses unchanged; %.0f reconciles by the window's end",
		s.ManifestWorkWrites, s.StatusWrites, s.OtherPMWWrites, s.Writes.String(), s.Unchanged, s.PMWs, s.ReconcilesWindow)
	for _, e := range s.WriteEntries {
		logf("      %s", e)
	}
	for _, ch := range s.Changed {
		logf("      changed: %s", ch)
	}
	return s, p
}

// splitWrites splits a tally's writes into ManifestWorks, PMWs' status and the rest of PMWs.
func splitWrites(t tally) (works, status, otherPMW int) {
	for k, n := range t.ByWrite {
		_, res, _ := strings.Cut(k, " ")
		switch {
		case res == "manifestworks" || strings.HasPrefix(res, "manifestworks/"):
			works += n
		case res == "placementmanifestworks/status":
			status += n
		case res == "placementmanifestworks" || strings.HasPrefix(res, "placementmanifestworks/"):
			otherPMW += n
		}
	}
	return works, status, otherPMW
}

// writeEntries lists, from the audit log, the user's writes of ManifestWorks and PMWs in [from, to): time,
// verb, resource, namespace/name, response code.
func writeEntries(path, user string, from, to time.Time, limit int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	for sc.Scan() {
		var e struct {
			auditEvent
			ObjectRef *struct {
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
				Namespace   string `json:"namespace"`
				Name        string `json:"name"`
			} `json:"objectRef"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.User.Username != user || e.ObjectRef == nil ||
			e.StageTimestamp.Before(from) || !e.StageTimestamp.Before(to) || !(request{verb: e.Verb}).write() {
			continue
		}
		if !strings.HasSuffix(e.ObjectRef.Resource, "manifestworks") {
			continue
		}
		res := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			res += "/" + e.ObjectRef.Subresource
		}
		code := int32(0)
		if e.ResponseStatus != nil {
			code = e.ResponseStatus.Code
		}
		out = append(out, fmt.Sprintf("%s %s %s %s/%s -> %d", e.StageTimestamp.Format("15:04:05.000"), e.Verb, res, e.ObjectRef.Namespace, e.ObjectRef.Name, code))
		if len(out) >= limit {
			out = append(out, "... (more)")
			break
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return out, err
	}
	return out, nil
}
