package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// step is one timed step of a row.
type step struct {
	Seconds float64 `json:"seconds"`
	Err     string  `json:"error,omitempty"`
	// CPU is the contender's CPU seconds spent in the step.
	CPU float64 `json:"cpu"`
	// Writes are the contender's API writes during the step, from the audit log.
	Writes tally `json:"writes"`
	// Agents is, for roll-up steps, when the last of the simulated agents' status writes returned.
	Agents float64 `json:"agentWritesReturned,omitempty"`
	// AgentRetries counts the agents' writes the API server dropped and that were sent again.
	AgentRetries int64 `json:"agentRetries,omitempty"`
	// ReportsSeen is, for roll-up steps, when the harness's own watch of the works (a plain informer) saw the
	// last of the agents' reports: no controller can roll up a report before the API server delivers it.
	ReportsSeen float64 `json:"agentReportsSeen,omitempty"`
}

func (s *step) ok() bool { return s != nil && s.Err == "" }

// row is one contender's results at one size.
type row struct {
	Contender string `json:"contender"`
	// Kind is "clusters" (one job over N clusters) or "many" (Jobs jobs of N clusters each).
	Kind string `json:"kind"`
	// Run numbers the runs of a row that ran several times, from 1; 0 when it ran once.
	Run   int `json:"run,omitempty"`
	N     int `json:"n"`
	Jobs  int `json:"jobs"`
	Works int `json:"works"`

	FanOut *step `json:"fanOut,omitempty"`
	// CreatesReturned is, for the limit, when the last create returned (FanOut is when the watch saw the last).
	CreatesReturned float64 `json:"createsReturned,omitempty"`
	// Retries counts the limit's creates and updates that failed and were sent again.
	Retries int   `json:"retries,omitempty"`
	RollUp  *step `json:"rollUp,omitempty"`
	Update  *step `json:"update,omitempty"`
	Churn   *step `json:"churn,omitempty"`
	Delete  *step `json:"delete,omitempty"`

	SteadySeconds float64 `json:"steadySeconds,omitempty"`
	Steady        *tally  `json:"steady,omitempty"`

	CPU       float64 `json:"cpuSeconds"`
	HWM       int64   `json:"peakRSSBytes"`
	RSSSteady int64   `json:"steadyRSSBytes"`
	// Total are every request of the contender during the row.
	Total tally `json:"total"`
	// Reconciles and ReconcileSeconds come from the manager's controller-runtime metrics.
	Reconciles       float64 `json:"reconciles,omitempty"`
	ReconcileSeconds float64 `json:"reconcileSeconds,omitempty"`

	// Hub is what the row cost kube-apiserver and etcd, and the size of its works (hubcost.go).
	Hub *hubCost `json:"hub,omitempty"`

	LoadStart string   `json:"loadStart"`
	LoadEnd   string   `json:"loadEnd"`
	Errors    []string `json:"errors,omitempty"`

	recovery
}

// bench holds what every row uses.
type bench struct {
	h     *hub
	audit *auditLog
	works *tracker
	fleet *fleet
	// limitClient is the unthrottled client of the limit user.
	limitClient client.Client
	dir         string
	steady      time.Duration
	timeout     func(works int) time.Duration
	// atRest is the hub's CPU per second with no contender running (hubcost.go).
	atRest hubRates
	// agents is how long the last rollUp's status writes took to return, agentRetries how many it resent.
	agents       time.Duration
	agentRetries int64
	// reportsSeen is how long after the last rollUp's start the harness's watch saw the last report; 0 if it
	// had not seen them all by the step's timeout.
	reportsSeen time.Duration
	recovery    recoveryOptions
}

// limitProbe makes an audited request, so the audit tailer has an event after any moment it waits for.
func (b *bench) limitProbe(ctx context.Context) error {
	return b.limitClient.Get(ctx, client.ObjectKey{Name: "default"}, &corev1.Namespace{})
}

func (b *bench) settleAudit(ctx context.Context, t time.Time) {
	b.audit.caughtUp(ctx, t, func() { _ = b.limitProbe(ctx) })
}

// stepRun times fn and books the contender's CPU and writes to the step.
func (b *bench) stepRun(ctx context.Context, name string, user string, p *process, fn func(start time.Time) (time.Duration, error)) *step {
	var cpu0 float64
	if p != nil {
		cpu0 = p.sample().CPU
	}
	start := time.Now()
	d, err := fn(start)
	end := time.Now()
	s := &step{Seconds: d.Seconds()}
	if err != nil {
		s.Err = err.Error()
		logf("  %s: FAILED: %v", name, err)
	} else {
		logf("  %s: %.2fs", name, s.Seconds)
	}
	if p != nil {
		s.CPU = p.sample().CPU - cpu0
	}
	b.settleAudit(ctx, end)
	s.Writes = b.audit.count(user, start, end)
	return s
}

// rowSizes are the cluster windows of a row: the first n clusters, then, after churn, a window moved by 10%.
func churnWindow(n int) (from, to int) {
	shift := max(n/10, 1)
	return shift, n + shift
}

// imager is a contender whose works' Deployment image depends on the cluster (the manager with overrides).
type imager interface {
	image(cluster, version string) string
}

// expectOf is what the contender's works of group should carry in clusters at version: each cluster's share
// of the Deployment and, for an imager, the image it gives that cluster.
func expectOf(c contender, group string, clusters []string, version string) expect {
	e := newExpect(group, clusters, version, replicasPerCluster)
	if m, ok := c.(imager); ok {
		e.images = make(map[string]string, len(clusters))
		for _, cl := range clusters {
			e.images[cl] = m.image(cl, version)
		}
	}
	return e
}

// runClusters runs every step of one contender over one job of n clusters.
func (b *bench) runClusters(ctx context.Context, c contender, n int) *row {
	r := &row{Contender: c.title(), Kind: "clusters", N: n, Jobs: 1, Works: n, LoadStart: loadAvg()}
	logf("%s, %d clusters", c.title(), n)
	rowStart := time.Now()
	ns := fmt.Sprintf("bench-%s-%d", slug(c.title()), n)
	j := job{ns: ns, name: "bench", placement: "bench"}
	clusters := names(0, n)
	timeout := b.timeout(n)
	fail := func(err error) *row {
		r.Errors = append(r.Errors, err.Error())
		logf("  FAILED: %v", err)
		return r
	}
	if err := ensureNamespace(ctx, b.h.harness, ns); err != nil {
		return fail(err)
	}
	if err := placeClusters(ctx, b.h.harness, ns, j.placement, clusters); err != nil {
		return fail(err)
	}
	p, err := c.start(b.dir)
	if err != nil {
		return fail(err)
	}
	defer func() {
		st := p.stop()
		// Plus the processes a restart killed.
		r.CPU, r.HWM = r.CPU+st.CPU, max(r.HWM, st.HWM)
		b.settleAudit(ctx, time.Now())
		r.Total = b.audit.count(c.user(), rowStart, time.Now())
		b.endCost(r)
		r.LoadEnd = loadAvg()
	}()
	if err := b.warmUp(ctx, c, p, ns); err != nil {
		return fail(fmt.Errorf("warm-up: %w", err))
	}
	group := c.group(j)

	hub0 := b.sampleHub()
	r.FanOut = b.stepRun(ctx, "fan-out", c.user(), p, func(start time.Time) (time.Duration, error) {
		if err := c.create(ctx, j, n, "v1"); err != nil {
			return 0, err
		}
		return b.works.wait(ctx, "fan-out", start, timeout, p.alive, expectOf(c, group, clusters, "v1"))
	})
	r.Hub = b.fanOutCost(ctx, hub0, b.sampleHub(), group)
	if !r.FanOut.ok() {
		return b.abandon(ctx, c, r, []job{j})
	}
	r.RollUp = b.stepRun(ctx, "roll-up", c.user(), p, func(start time.Time) (time.Duration, error) {
		return b.rollUp(ctx, p, ns, []string{group}, n, 1, start, timeout)
	})
	r.RollUp.Agents, r.RollUp.AgentRetries, r.RollUp.ReportsSeen = b.agents.Seconds(), b.agentRetries, b.reportsSeen.Seconds()
	if !r.RollUp.ok() {
		return b.abandon(ctx, c, r, []job{j})
	}
	b.statusBytes(ctx, r.Hub, group)
	r.Update = b.stepRun(ctx, "update", c.user(), p, func(start time.Time) (time.Duration, error) {
		if err := c.update(ctx, j, n, "v2"); err != nil {
			return 0, err
		}
		return b.works.wait(ctx, "update", start, timeout, p.alive, expectOf(c, group, clusters, "v2"))
	})
	if !r.Update.ok() {
		return b.abandon(ctx, c, r, []job{j})
	}
	// The agents report the new generation before the clusters change.
	if _, err := b.rollUp(ctx, p, ns, []string{group}, n, 1, time.Now(), timeout); err != nil {
		r.Errors = append(r.Errors, "roll-up after update: "+err.Error())
		return b.abandon(ctx, c, r, []job{j})
	}
	from, to := churnWindow(n)
	churned := names(from, to)
	// Churn converges when the joining clusters have their works, their agents have reported them available,
	// the leaving clusters' works are gone and the summary shows every cluster available. The agents report as
	// soon as the works appear: the manager keeps leaving clusters' works until joining ones are available
	// (make before break), OCM's controller deletes them at once.
	r.Churn = b.stepRun(ctx, "churn", c.user(), p, func(start time.Time) (time.Duration, error) {
		if err := placeClusters(ctx, b.h.harness, ns, j.placement, churned); err != nil {
			return 0, err
		}
		joined := expectOf(c, group, churned, "v2")
		joined.extrasAllowed = true
		if _, err := b.works.wait(ctx, "churn (joining works)", start, timeout, p.alive, joined); err != nil {
			return 0, err
		}
		available, err := b.rollUp(ctx, p, ns, []string{group}, n, 1, start, timeout)
		if err != nil {
			return 0, err
		}
		gone, err := b.works.wait(ctx, "churn", start, timeout, p.alive, expectOf(c, group, churned, "v2"))
		return max(available, gone), err
	})
	if !r.Churn.ok() {
		return b.abandon(ctx, c, r, []job{j})
	}
	b.steadyState(ctx, c, p, r)
	p = b.afterSteady(ctx, c, p, r, ns, 1)
	r.Delete = b.stepRun(ctx, "delete", c.user(), p, func(start time.Time) (time.Duration, error) {
		return b.remove(ctx, c, p, []job{j}, start, timeout)
	})
	b.scrape(p, r)
	return r
}

// runMany runs fan-out, roll-up, steady state and delete for the given number of jobs of n clusters each.
func (b *bench) runMany(ctx context.Context, c contender, jobs, n, pool int) *row {
	return b.runJobs(ctx, c, "many", jobs, n, pool, func(p *process, r *row, _ []job, _ func(string) []expect, ns string, _ time.Duration) (*process, bool) {
		b.steadyState(ctx, c, p, r)
		return b.afterSteady(ctx, c, p, r, ns, jobs), true
	})
}

// runJobs runs a row of the given kind ("many", "concurrent") of jobs of n clusters each (cluster (i·n+k) mod
// pool of job i): fan-out, roll-up, then middle with the running contender (which returns the process that
// runs on, and false when the row is abandoned), then delete.
func (b *bench) runJobs(ctx context.Context, c contender, kind string, jobs, n, pool int,
	middle func(p *process, r *row, js []job, expects func(version string) []expect, ns string, timeout time.Duration) (*process, bool)) *row {
	r := &row{Contender: c.title(), Kind: kind, N: n, Jobs: jobs, Works: jobs * n, LoadStart: loadAvg()}
	logf("%s, %s: %d jobs x %d clusters", c.title(), kind, jobs, n)
	rowStart := time.Now()
	ns := fmt.Sprintf("bench-%s-%s", slug(c.title()), kind)
	fail := func(err error) *row {
		r.Errors = append(r.Errors, err.Error())
		logf("  FAILED: %v", err)
		return r
	}
	if err := ensureNamespace(ctx, b.h.harness, ns); err != nil {
		return fail(err)
	}
	js := make([]job, jobs)
	groups := make([]string, jobs)
	clusters := make([][]string, jobs)
	err := parallel(jobs, 50, func(i int) error {
		js[i] = job{ns: ns, name: fmt.Sprintf("%s-%03d", kind, i), placement: fmt.Sprintf("%s-%03d", kind, i)}
		clusters[i] = make([]string, n)
		for k := range clusters[i] {
			clusters[i][k] = clusterName((i*n+k)%pool + 1)
		}
		groups[i] = c.group(js[i])
		return placeClusters(ctx, b.h.harness, ns, js[i].placement, clusters[i])
	})
	if err != nil {
		return fail(err)
	}
	expects := func(version string) []expect {
		es := make([]expect, jobs)
		for i := range js {
			es[i] = expectOf(c, groups[i], clusters[i], version)
		}
		return es
	}
	timeout := b.timeout(jobs * n)
	p, err := c.start(b.dir)
	if err != nil {
		return fail(err)
	}
	defer func() {
		st := p.stop()
		// Plus the processes a restart killed.
		r.CPU, r.HWM = r.CPU+st.CPU, max(r.HWM, st.HWM)
		b.settleAudit(ctx, time.Now())
		r.Total = b.audit.count(c.user(), rowStart, time.Now())
		b.endCost(r)
		r.LoadEnd = loadAvg()
	}()
	if err := b.warmUp(ctx, c, p, ns); err != nil {
		return fail(fmt.Errorf("warm-up: %w", err))
	}
	hub0 := b.sampleHub()
	r.FanOut = b.stepRun(ctx, "fan-out", c.user(), p, func(start time.Time) (time.Duration, error) {
		if err := parallel(jobs, 0, func(i int) error { return c.create(ctx, js[i], n, "v1") }); err != nil {
			return 0, err
		}
		return b.works.wait(ctx, "fan-out", start, timeout, p.alive, expects("v1")...)
	})
	r.Hub = b.fanOutCost(ctx, hub0, b.sampleHub(), "")
	if !r.FanOut.ok() {
		return b.abandon(ctx, c, r, js)
	}
	r.RollUp = b.stepRun(ctx, "roll-up", c.user(), p, func(start time.Time) (time.Duration, error) {
		return b.rollUp(ctx, p, ns, groups, n, jobs, start, timeout)
	})
	r.RollUp.Agents, r.RollUp.AgentRetries, r.RollUp.ReportsSeen = b.agents.Seconds(), b.agentRetries, b.reportsSeen.Seconds()
	if !r.RollUp.ok() {
		return b.abandon(ctx, c, r, js)
	}
	var ok bool
	if p, ok = middle(p, r, js, expects, ns, timeout); !ok {
		return b.abandon(ctx, c, r, js)
	}
	r.Delete = b.stepRun(ctx, "delete", c.user(), p, func(start time.Time) (time.Duration, error) {
		return b.remove(ctx, c, p, js, start, timeout)
	})
	b.scrape(p, r)
	return r
}

// warmUp runs a one-cluster job through the contender and deletes it, so the timed steps start with its
// caches synced and its workers running.
func (b *bench) warmUp(ctx context.Context, c contender, p *process, ns string) error {
	j := job{ns: ns, name: "warm-up", placement: "warm-up"}
	cl := names(0, 1)
	if err := placeClusters(ctx, b.h.harness, ns, j.placement, cl); err != nil {
		return err
	}
	start := time.Now()
	if err := c.create(ctx, j, 1, "v1"); err != nil {
		return err
	}
	if _, err := b.works.wait(ctx, "warm-up", start, 2*time.Minute, p.alive, expectOf(c, c.group(j), cl, "v1")); err != nil {
		return err
	}
	_, err := b.remove(ctx, c, p, []job{j}, time.Now(), 2*time.Minute)
	return err
}

// rollUp plays the agents of every pending work of the groups, then waits until jobs summaries show want
// clusters available.
func (b *bench) rollUp(ctx context.Context, p *process, ns string, groups []string, want, jobs int, start time.Time, timeout time.Duration) (time.Duration, error) {
	agentsStart, retries0 := time.Now(), b.works.retries.Load()
	if _, err := b.works.actAsAgents(ctx, b.h.harness, groups...); err != nil {
		return 0, err
	}
	b.agents, b.agentRetries, b.reportsSeen = time.Since(agentsStart), b.works.retries.Load()-retries0, 0
	lastLog := time.Now()
	for {
		got, at := b.works.summaries.complete(ns, want)
		seenAll, lastSeen := b.works.reportsSeen(groups...)
		if got >= jobs && (seenAll || time.Since(start) > timeout) {
			if seenAll {
				b.reportsSeen = lastSeen.Sub(start)
			}
			return max(at.Sub(start), 0), nil
		}
		if err := p.alive(); err != nil {
			return 0, err
		}
		if time.Since(start) > timeout {
			return 0, fmt.Errorf("roll-up: %d of %d summaries show %d available after %s", got, jobs, want, timeout)
		}
		if time.Since(lastLog) > 15*time.Second {
			logf("    ... roll-up: %d/%d summaries complete after %s", got, jobs, time.Since(start).Round(time.Second))
			lastLog = time.Now()
		}
		// Only the harness's memory is read: the time comes from the watch event.
		time.Sleep(5 * time.Millisecond)
	}
}

// remove deletes the jobs and waits until their works and objects are gone.
func (b *bench) remove(ctx context.Context, c contender, p *process, js []job, start time.Time, timeout time.Duration) (time.Duration, error) {
	if err := parallel(len(js), 0, func(i int) error { return c.remove(ctx, js[i]) }); err != nil {
		return 0, err
	}
	es := make([]expect, len(js))
	for i, j := range js {
		es[i] = newExpect(c.group(j), nil, "", 0)
	}
	d, err := b.works.wait(ctx, "delete", start, timeout, p.alive, es...)
	if err != nil {
		return d, err
	}
	for {
		all := true
		for _, j := range js {
			g, err := c.gone(ctx, j)
			if err != nil {
				return 0, err
			}
			if !g {
				all = false
				break
			}
		}
		if all {
			return max(d, time.Since(start)), nil
		}
		if time.Since(start) > timeout {
			return 0, errors.New("delete: the objects are still there")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// abandon cleans up after a failed step so the next row starts from an empty hub.
func (b *bench) abandon(ctx context.Context, c contender, r *row, js []job) *row {
	for _, s := range []*step{r.FanOut, r.RollUp, r.Update, r.Churn} {
		if s != nil && s.Err != "" {
			r.Errors = append(r.Errors, s.Err)
		}
	}
	if _, err := b.remove(ctx, c, &process{}, js, time.Now(), b.timeout(r.Works)); err != nil {
		r.Errors = append(r.Errors, "cleanup: "+err.Error())
	}
	return r
}

// steadyState waits a moment once everything converged, then counts the contender's requests over the
// steady window.
func (b *bench) steadyState(ctx context.Context, c contender, p *process, r *row) {
	if strings.HasPrefix(c.title(), "manager ") { // not for managers with other flags
		return
	}
	// What churn left (requeues, deferred status) settles first, also in runs that count nothing, so the delete
	// starts from the same state in every run.
	time.Sleep(3 * time.Second)
	if b.steady <= 0 {
		return
	}
	start := time.Now()
	logf("  steady state: counting requests for %s", b.steady)
	select {
	case <-ctx.Done():
		return
	case <-time.After(b.steady):
	}
	end := time.Now()
	r.RSSSteady = p.sample().RSS
	b.settleAudit(ctx, end)
	t := b.audit.count(c.user(), start, end)
	r.Steady, r.SteadySeconds = &t, end.Sub(start).Seconds()
	logf("  steady state: %d writes, %d requests in %.0fs %s", t.Writes, t.Requests, r.SteadySeconds, t.String())
}

// scrape adds the manager's reconciles and their total time (its controller-runtime metrics) to the row.
func (b *bench) scrape(p *process, r *row) {
	if p.metricsURL == "" {
		return
	}
	if m, err := scrapeManager(p.metricsURL); err == nil {
		r.Reconciles += m.reconciles
		r.ReconcileSeconds += m.reconcileSeconds
	}
}

// limitAtOnce is how many requests the limit proper has in flight: every one of a row's up to 5,000, where
// all at once is fastest. At 50,000 all at once the API server timed out 168,187 of the first 171,103 creates
// (504) in five minutes while its RSS grew past 14 GiB.
const limitAtOnce = 5000

// runLimit creates the works of a row's jobs (n clusters each; cluster (i·n+k) mod pool of job i, as the
// contenders' jobs of a many row) with the limit client, inFlight at once (0: the limit proper, limitAtOnce),
// updates them once the agents reported them (limitUpdate), and deletes them. The works are the manager's, or
// with plain those of OCM's ManifestWorkReplicaSet without feedback rules. kind is the row's: "clusters" (one
// job of every cluster) or "many".
func (b *bench) runLimit(ctx context.Context, kind string, jobs, n, pool, inFlight int, plain bool) *row {
	name, id, shape := limitJob(jobs, n, inFlight, plain)
	if inFlight == 0 {
		inFlight = limitAtOnce
	}
	r := &row{Contender: name, Kind: kind, N: n, Jobs: jobs, Works: jobs * n, LoadStart: loadAvg()}
	logf("%s, %s: %d jobs x %d clusters", name, kind, jobs, n)
	rowStart := time.Now()
	lj := limitJobsOf(id, jobs, n, pool)
	var works, next []*workv1.ManifestWork
	for _, j := range lj {
		works = append(works, shape(j.id, j.clusters, "v1")...)
		next = append(next, shape(j.id, j.clusters, "v2")...)
	}
	expects := func(version string, replicas int64) []expect {
		es := make([]expect, len(lj))
		for i, j := range lj {
			var clusters []string
			if version != "" {
				clusters = j.clusters
			}
			es[i] = newExpect(j.group(), clusters, version, replicas)
		}
		return es
	}
	noProc := &process{}
	var retries atomic.Int64
	// Warm up the limit client's connection and the API server's ManifestWork write path, as the contenders'
	// warm-up jobs do.
	warm := shape(id+"-warm-up", names(0, 1), "v1")[0]
	if err := b.limitClient.Create(ctx, warm); err == nil {
		_ = b.limitClient.Delete(ctx, warm)
	}
	hub0 := b.sampleHub()
	r.FanOut = b.stepRun(ctx, "fan-out", userLimit, nil, func(start time.Time) (time.Duration, error) {
		// A create the API server drops (unbounded parallelism can overrun it) is sent again, as any client
		// would; the retries are counted.
		err := parallel(len(works), inFlight, func(i int) error {
			for attempt := 0; ; attempt++ {
				err := b.limitClient.Create(ctx, works[i].DeepCopy())
				if err == nil || apierrors.IsAlreadyExists(err) {
					return nil
				}
				if attempt >= 20 || ctx.Err() != nil {
					return err
				}
				retries.Add(1)
				time.Sleep(100 * time.Millisecond)
			}
		})
		r.Retries = int(retries.Load())
		r.CreatesReturned = time.Since(start).Seconds()
		if err != nil {
			return 0, err
		}
		return b.works.wait(ctx, "fan-out", start, b.timeout(len(works)), noProc.alive, expects("v1", replicasPerCluster)...)
	})
	// The bytes per work are those of the first job's works: every job's are alike.
	r.Hub = b.fanOutCost(ctx, hub0, b.sampleHub(), lj[0].group())
	if r.FanOut.ok() {
		r.Update = b.limitUpdate(ctx, r, expects, inFlight, next)
	}
	r.Delete = b.stepRun(ctx, "delete", userLimit, nil, func(start time.Time) (time.Duration, error) {
		if err := parallel(len(works), inFlight, func(i int) error { return client.IgnoreNotFound(b.limitClient.Delete(ctx, works[i])) }); err != nil {
			return 0, err
		}
		return b.works.wait(ctx, "delete", start, b.timeout(len(works)), noProc.alive, expects("", 0)...)
	})
	if !r.FanOut.ok() {
		r.Errors = append(r.Errors, r.FanOut.Err)
	}
	if !r.Update.ok() && r.Update != nil {
		r.Errors = append(r.Errors, r.Update.Err)
	}
	if !r.Delete.ok() {
		r.Errors = append(r.Errors, r.Delete.Err)
	}
	b.settleAudit(ctx, time.Now())
	r.Total = b.audit.count(userLimit, rowStart, time.Now())
	b.endCost(r)
	r.LoadEnd = loadAvg()
	return r
}

// slug makes a title fit in a namespace name.
func slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 40 {
		out = strings.Trim(out[:40], "-")
	}
	return out
}
