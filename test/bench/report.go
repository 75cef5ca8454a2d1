package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// results is everything a run measured, written as results.json.
type results struct {
	Date        string   `json:"date"`
	CPU         string   `json:"cpu"`
	Cores       int      `json:"cores"`
	MemoryGiB   float64  `json:"memoryGiB"`
	GoVersion   string   `json:"goVersion"`
	Commit      string   `json:"commit"`
	Command     string   `json:"command"`
	ManagerArgs []string `json:"managerArgs,omitempty"`
	// APIServerArgs are the hub's extra kube-apiserver flags (-apiserver-args).
	APIServerArgs []string `json:"apiServerArgs,omitempty"`
	// Overrides is true when the managers' PMWs carried the region override (-overrides).
	Overrides  bool     `json:"overrides,omitempty"`
	LoadStart  string   `json:"loadStart"`
	LoadEnd    string   `json:"loadEnd"`
	Steady     string   `json:"steadyWindow"`
	SetupNotes []string `json:"setup,omitempty"`
	Rows       []*row   `json:"rows"`
}

// runs are the contender's rows at the size, one per run.
func (r *results) runs(contender string, k sizeKey) []*row {
	var out []*row
	for _, x := range r.Rows {
		if x.Contender == contender && k.of(x) {
			out = append(out, x)
		}
	}
	return out
}

// find returns the contender's row at the size; when the row ran several times, a row whose step times are
// the runs' medians (the roll-up's time after the agents being the median of those times).
func (r *results) find(contender string, k sizeKey) *row {
	runs := r.runs(contender, k)
	switch len(runs) {
	case 0:
		return nil
	case 1:
		return runs[0]
	}
	m := *runs[0]
	m.FanOut = medianStep(runs, func(x *row) *step { return x.FanOut })
	m.Update = medianStep(runs, func(x *row) *step { return x.Update })
	m.Churn = medianStep(runs, func(x *row) *step { return x.Churn })
	m.Delete = medianStep(runs, func(x *row) *step { return x.Delete })
	m.RollUp = medianStep(runs, func(x *row) *step { return x.RollUp })
	if after := medianStep(runs, func(x *row) *step { return afterAgents(x.RollUp) }); m.RollUp.ok() && after.ok() {
		m.RollUp.Agents = m.RollUp.Seconds - after.Seconds
	}
	returned := make([]float64, len(runs))
	for i, x := range runs {
		returned[i] = x.CreatesReturned
	}
	m.CreatesReturned = median(returned)
	return &m
}

// contenders are the names of the contenders with rows at the size, in the order they first ran.
func (r *results) contenders(k sizeKey) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range r.Rows {
		if k.of(x) && !seen[x.Contender] {
			seen[x.Contender] = true
			out = append(out, x.Contender)
		}
	}
	return out
}

// medianStep is the median of the runs' times of a step; the first failure when one failed.
func medianStep(runs []*row, f func(*row) *step) *step {
	var xs []float64
	for _, x := range runs {
		s := f(x)
		switch {
		case s == nil:
			continue
		case !s.ok():
			return s
		}
		xs = append(xs, s.Seconds)
	}
	if len(xs) == 0 {
		return nil
	}
	return &step{Seconds: median(xs)}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func secs(s *step) string {
	switch {
	case s == nil:
		return "—"
	case s.Err != "":
		return "failed"
	}
	return fmt.Sprintf("%.2f", s.Seconds)
}

// afterAgents is a roll-up step timed from the last of the simulated agents' writes returning; the step as it is
// when it has no such time.
func afterAgents(s *step) *step {
	if s == nil || s.Agents == 0 {
		return s
	}
	c := *s
	c.Seconds = s.Seconds - s.Agents
	return &c
}

func ratio(a, b *step) string {
	if !a.ok() || !b.ok() || b.Seconds == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a.Seconds/b.Seconds)
}

func mib(b int64) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f", float64(b)/(1<<20))
}

type sizeKey struct {
	kind    string
	n, jobs int
}

func (r *results) sizes() []sizeKey {
	seen := map[sizeKey]bool{}
	var out []sizeKey
	for _, x := range r.Rows {
		k := sizeKey{x.Kind, x.N, x.Jobs}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].kind != out[j].kind {
			return out[i].kind == "clusters"
		}
		return out[i].n*out[i].jobs < out[j].n*out[j].jobs
	})
	return out
}

// of reports whether x is a row of the size.
func (k sizeKey) of(x *row) bool { return x.Kind == k.kind && x.N == k.n && x.Jobs == k.jobs }

func (k sizeKey) label() string {
	switch k.kind {
	case "many":
		return fmt.Sprintf("%d PMWs × %d", k.jobs, k.n)
	case "concurrent":
		return fmt.Sprintf("%d PMWs × %d, concurrent rollout", k.jobs, k.n)
	}
	return fmt.Sprintf("N = %d", k.n)
}

// markdown renders the tables.
func (r *results) markdown() string {
	var b strings.Builder
	if r.Overrides {
		b.WriteString("With overrides: the manager's PMWs rewrite the Deployment's image registry by the cluster's region (10 regions).\n\n")
	}
	if len(r.APIServerArgs) > 0 {
		fmt.Fprintf(&b, "The hub's kube-apiserver ran with %s.\n\n", strings.Join(r.APIServerArgs, " "))
	}
	fmt.Fprintf(&b, "Times in seconds (lower is better). ×limit, ×plain and ×OCM are the manager's time over theirs; plain is the limit "+
		"client writing plain works (no feedback rules, no annotations), limit update the limit client updating the reported works. Roll-up is timed from "+
		"the harness having marked every work applied and available (the last of its agent writes returned) to the summary; "+
		"with the marking itself, see the roll-up table below.\n\n")
	b.WriteString("| row | works | limit fan-out | plain fan-out | manager fan-out | ×limit | ×plain | OCM fan-out | ×OCM | manager roll-up | OCM roll-up | ×OCM | limit update | manager update | ×limit | OCM update | ×OCM | manager churn | OCM churn | ×OCM | manager delete | OCM delete |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, k := range r.sizes() {
		lim, m, o := r.find("limit", k), r.find("manager", k), r.find("OCM MWRS", k)
		plain := r.find(limitPlain, k)
		get := func(x *row, f func(*row) *step) *step {
			if x == nil {
				return nil
			}
			return f(x)
		}
		fan := func(x *row) *step { return x.FanOut }
		roll := func(x *row) *step { return afterAgents(x.RollUp) }
		upd := func(x *row) *step { return x.Update }
		churn := func(x *row) *step { return x.Churn }
		del := func(x *row) *step { return x.Delete }
		works := k.n * k.jobs
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			k.label(), works,
			secs(get(lim, fan)), secs(get(plain, fan)), secs(get(m, fan)), ratio(get(m, fan), get(lim, fan)), ratio(get(m, fan), get(plain, fan)),
			secs(get(o, fan)), ratio(get(m, fan), get(o, fan)),
			secs(get(m, roll)), secs(get(o, roll)), ratio(get(m, roll), get(o, roll)),
			secs(get(lim, upd)), secs(get(m, upd)), ratio(get(m, upd), get(lim, upd)), secs(get(o, upd)), ratio(get(m, upd), get(o, upd)),
			secs(get(m, churn)), secs(get(o, churn)), ratio(get(m, churn), get(o, churn)),
			secs(get(m, del)), secs(get(o, del)))
	}
	if extra := r.limitVariants(); extra != "" {
		b.WriteString(extra)
	}
	b.WriteString("\nRoll-up, split: the simulated agents' status writes (no rate limit, 500 in flight) come first and take most ")
	b.WriteString("of it; the controller's part is the time after the last of them returned (seconds):\n\n")
	b.WriteString("| row | manager: agents' writes | manager: after them | manager: whole | OCM: agents' writes | OCM: after them | OCM: whole | ×OCM whole |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, k := range r.sizes() {
		split := func(contender string) (string, string, string, *step) {
			runs := r.runs(contender, k)
			for _, x := range runs {
				if !x.RollUp.ok() || x.RollUp.Agents == 0 {
					return "—", "—", "—", nil
				}
			}
			if len(runs) == 0 {
				return "—", "—", "—", nil
			}
			agents := medianStep(runs, func(x *row) *step { return &step{Seconds: x.RollUp.Agents} })
			after := medianStep(runs, func(x *row) *step { return afterAgents(x.RollUp) })
			whole := medianStep(runs, func(x *row) *step { return x.RollUp })
			return secs(agents), secs(after), secs(whole), whole
		}
		ma, mr, mw, mWhole := split("manager")
		oa, or, ow, oWhole := split("OCM MWRS")
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", k.label(), ma, mr, mw, oa, or, ow, ratio(mWhole, oWhole))
	}
	b.WriteString(r.deliveryTable())
	b.WriteString(r.repeatsTable())
	b.WriteString(r.recoveryTables())
	b.WriteString("\nCost per row (each contender runs as its own process, started fresh for the row; requests and writes from the API server's audit log; of the first run where a row ran several times):\n\n")
	b.WriteString("| row | contender | CPU s | peak RSS MiB | steady RSS MiB | peak RSS per work KiB | requests | writes | writes per work | steady-state writes | reconciles | load (1, 5, 15 min) start → end |\n")
	b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, k := range r.sizes() {
		for _, x := range r.Rows {
			if !k.of(x) || x.Run > 1 {
				continue
			}
			name := x.Contender
			steady := "—"
			if x.Steady != nil {
				steady = fmt.Sprintf("%d in %.0f s", x.Steady.Writes, x.SteadySeconds)
			}
			cpu, hwm, per := "—", "—", "—"
			if !strings.HasPrefix(name, "limit") {
				cpu, hwm = fmt.Sprintf("%.1f", x.CPU), mib(x.HWM)
				if x.Works > 0 && x.HWM > 0 {
					per = fmt.Sprintf("%.1f", float64(x.HWM)/1024/float64(x.Works))
				}
			}
			rec := "—"
			if x.Reconciles > 0 {
				rec = fmt.Sprintf("%.0f (%.1f s)", x.Reconciles, x.ReconcileSeconds)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d | %d | %.2f | %s | %s | %s → %s |\n",
				k.label(), name, cpu, hwm, mib(x.RSSSteady), per, x.Total.Requests, x.Total.Writes,
				float64(x.Total.Writes)/float64(max(x.Works, 1)), steady, rec, x.LoadStart, x.LoadEnd)
		}
	}
	b.WriteString(r.hubTables())
	b.WriteString("\n")
	b.WriteString(r.memoryPerWork())
	var errs []string
	for _, x := range r.Rows {
		for _, e := range x.Errors {
			errs = append(errs, fmt.Sprintf("- %s, %s %d: %s", x.Contender, x.Kind, x.N, e))
		}
	}
	if len(errs) > 0 {
		b.WriteString("\nErrors:\n\n" + strings.Join(errs, "\n") + "\n")
	}
	return b.String()
}

// memoryPerWork is the slope of memory against works between the smallest and the largest cluster rows.
func (r *results) memoryPerWork() string {
	var b strings.Builder
	for _, name := range []string{"manager", "OCM MWRS"} {
		var rows []*row
		for _, x := range r.Rows {
			if x.Contender == name && x.Kind == "clusters" && x.HWM > 0 {
				rows = append(rows, x)
			}
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].N < rows[j].N })
		if len(rows) < 2 || rows[0].Works == rows[len(rows)-1].Works {
			continue
		}
		lo, hi := rows[0], rows[len(rows)-1]
		dw := float64(hi.Works - lo.Works)
		fmt.Fprintf(&b, "- %s: memory per managed work (slope from %d to %d clusters): peak RSS %.1f KiB, steady RSS %.1f KiB\n",
			name, lo.N, hi.N, float64(hi.HWM-lo.HWM)/1024/dw, float64(hi.RSSSteady-lo.RSSSteady)/1024/dw)
	}
	return b.String()
}

// limitVariants compares the manager's fan-out with plain clients that keep a bounded number of creates in
// flight, when the run had any.
func (r *results) limitVariants() string {
	var b strings.Builder
	for _, k := range r.sizes() {
		m := r.find("manager", k)
		for _, name := range r.contenders(k) {
			if !strings.HasPrefix(name, "limit-") {
				continue
			}
			x := r.find(name, k)
			if b.Len() == 0 {
				b.WriteString("\nPlain clients with a bounded number of creates in flight (no rate limit), for reference:\n\n")
				b.WriteString("| row | client | fan-out s | last create returned s | manager fan-out ÷ this |\n| --- | --- | ---: | ---: | ---: |\n")
			}
			var ms *step
			if m != nil {
				ms = m.FanOut
			}
			fmt.Fprintf(&b, "| %s | %s in flight | %s | %.2f | %s |\n", k.label(), strings.TrimPrefix(x.Contender, "limit-"), secs(x.FanOut), x.CreatesReturned, ratio(ms, x.FanOut))
		}
	}
	for _, k := range r.sizes() {
		m := r.find("manager", k)
		for _, name := range r.contenders(k) {
			if !strings.HasPrefix(name, "manager ") {
				continue
			}
			x := r.find(name, k)
			if !strings.Contains(b.String(), "Manager with other flags") {
				b.WriteString("\nManager with other flags (seconds; in parentheses the defaults' time):\n\n")
				b.WriteString("| row | flags | fan-out | roll-up | update | churn |\n| --- | --- | ---: | ---: | ---: | ---: |\n")
			}
			both := func(t, d *step) string {
				if m == nil {
					return secs(t)
				}
				return secs(t) + " (" + secs(d) + ")"
			}
			var md row
			if m != nil {
				md = *m
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", k.label(), strings.TrimPrefix(x.Contender, "manager "),
				both(x.FanOut, md.FanOut), both(afterAgents(x.RollUp), afterAgents(md.RollUp)), both(x.Update, md.Update), both(x.Churn, md.Churn))
		}
	}
	return b.String()
}

// repeatsTable lists every run's times of the rows that ran several times, with the ratio of the medians and
// how many runs the manager was as fast or faster than OCM's controller in (runs paired in order: they ran
// one after the other).
func (r *results) repeatsTable() string {
	var b strings.Builder
	steps := []struct {
		name string
		f    func(*row) *step
	}{
		{"fan-out", func(x *row) *step { return x.FanOut }},
		{"roll-up (after the agents)", func(x *row) *step { return afterAgents(x.RollUp) }},
		{"roll-up (whole)", func(x *row) *step { return x.RollUp }},
		{"update", func(x *row) *step { return x.Update }},
		{"churn", func(x *row) *step { return x.Churn }},
		{"delete", func(x *row) *step { return x.Delete }},
	}
	for _, k := range r.sizes() {
		m, o := r.runs("manager", k), r.runs("OCM MWRS", k)
		if len(m) < 2 || len(o) < 2 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\nRows that ran several times (contenders interleaved; the tables above show each step's median), every run in seconds:\n\n")
			b.WriteString("| row | step | manager | OCM | ×OCM of the medians | manager as fast or faster |\n| --- | --- | --- | --- | ---: | ---: |\n")
		}
		for _, st := range steps {
			list := func(runs []*row) string {
				out := make([]string, len(runs))
				for i, x := range runs {
					out[i] = secs(st.f(x))
				}
				return strings.Join(out, " ")
			}
			wins, pairs := 0, 0
			for i := 0; i < len(m) && i < len(o); i++ {
				ms, os := st.f(m[i]), st.f(o[i])
				if !ms.ok() || !os.ok() {
					continue
				}
				pairs++
				if ms.Seconds <= os.Seconds {
					wins++
				}
			}
			if medianStep(m, st.f) == nil && medianStep(o, st.f) == nil {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d of %d |\n", k.label(), st.name, list(m), list(o),
				ratio(medianStep(m, st.f), medianStep(o, st.f)), wins, pairs)
		}
	}
	return b.String()
}

// deliveryTable sets each roll-up beside the API server's delivery of the agents' reports: when the harness's
// own watch of the works saw the last of them, which no controller's watch can beat by much. Medians over the
// runs; rows where the harness's watch had not seen every report by the step's timeout are left out.
func (r *results) deliveryTable() string {
	var b strings.Builder
	for _, k := range r.sizes() {
		for _, contender := range []string{"manager", "OCM MWRS"} {
			runs := r.runs(contender, k)
			if len(runs) == 0 || slices.ContainsFunc(runs, func(x *row) bool { return !x.RollUp.ok() || x.RollUp.ReportsSeen == 0 }) {
				continue
			}
			if b.Len() == 0 {
				b.WriteString("\nRoll-up against the API server's delivery: when the harness's own watch of the works (a plain ")
				b.WriteString("informer in the process that plays the agents) saw the last report, and the summary after that ")
				b.WriteString("(seconds from the step's start):\n\n")
				b.WriteString("| row | contender | agents' writes returned | the harness's watch saw the last report | summary complete | after the watch saw it |\n")
				b.WriteString("| --- | --- | ---: | ---: | ---: | ---: |\n")
			}
			agents := medianStep(runs, func(x *row) *step { return &step{Seconds: x.RollUp.Agents} })
			seen := medianStep(runs, func(x *row) *step { return &step{Seconds: x.RollUp.ReportsSeen} })
			whole := medianStep(runs, func(x *row) *step { return x.RollUp })
			after := medianStep(runs, func(x *row) *step { return &step{Seconds: x.RollUp.Seconds - x.RollUp.ReportsSeen} })
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", k.label(), contender, secs(agents), secs(seen), secs(whole), secs(after))
		}
	}
	return b.String()
}
