package main

import (
	"fmt"
	"slices"
	"strings"
)

// recoveryTables renders the restart and hand-over steps and the concurrent rollouts, when the run had any.
func (r *results) recoveryTables() string {
	return r.restartTable() + r.rolloutTable()
}

// restartTable lists each restart and hand-over, and under it the writes and status differences they found.
func (r *results) restartTable() string {
	var b, findings strings.Builder
	for _, k := range r.sizes() {
		for _, x := range r.runs("manager", k) {
			for _, st := range []struct {
				name, started string
				s             *restartStep
			}{{"restart", "workers started", x.Restart}, {"leader hand-over", "leads", x.Handover}} {
				if st.s == nil {
					continue
				}
				if b.Len() == 0 {
					b.WriteString("\nRestart and leader hand-over, after the row's steady state: the manager (the leader of two replicas) is " +
						"killed (SIGKILL) and a new process (the standby) takes over. Caught up: " + convergedOn + ". " +
						"Seconds from the kill; writes from the audit log, from the kill to the end of the window after catching up; " +
						"statuses compared whole, with the resourceVersion, before the kill and at the end of the window:\n\n")
					b.WriteString("| row | step | caught up s | workers started / leads s | reconciles (by the window's end) | CPU s | ManifestWork writes | PMW status writes | other PMW writes | other writes | statuses unchanged | counted over s |\n")
					b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |\n")
				}
				b.WriteString(restartLine(k.label(), st.name, st.s))
				if lines := append(append([]string(nil), st.s.WriteEntries...), st.s.Changed...); len(lines) > 0 {
					fmt.Fprintf(&findings, "\n%s, %s:\n\n```\n%s\n```\n", k.label(), st.name, strings.Join(lines, "\n"))
				}
			}
		}
	}
	if findings.Len() > 0 {
		b.WriteString("\nWrites and status differences found after a restart or hand-over:\n" + findings.String())
	}
	return b.String()
}

func restartLine(label, name string, s *restartStep) string {
	if s.Err != "" {
		return fmt.Sprintf("| %s | %s | failed: %s | | | | | | | | | |\n", label, name, strings.ReplaceAll(firstLine(s.Err), "|", "/"))
	}
	var other []string
	for k, n := range s.Writes.ByWrite {
		_, res, _ := strings.Cut(k, " ")
		if !strings.HasSuffix(strings.Split(res, "/")[0], "manifestworks") {
			other = append(other, fmt.Sprintf("%s: %d", k, n))
		}
	}
	otherS := "0"
	if len(other) > 0 {
		slices.Sort(other)
		otherS = strings.Join(other, ", ")
	}
	return fmt.Sprintf("| %s | %s | %.2f | %.2f | %.0f (%.0f) | %.1f | %d | %d | %d | %s | %d of %d | %.1f |\n", label, name, s.Seconds, s.Started,
		s.Reconciles, s.ReconcilesWindow, s.CPU, s.ManifestWorkWrites, s.StatusWrites, s.OtherPMWWrites, otherS, s.Unchanged, s.PMWs, s.WindowSeconds)
}

// rolloutTable compares the contenders' concurrent rollouts: percentiles over the jobs of the time until every
// work of a job carried the new template.
func (r *results) rolloutTable() string {
	var b strings.Builder
	for _, k := range r.sizes() {
		if k.kind != "concurrent" {
			continue
		}
		var ocm *rollout
		if o := r.find("OCM MWRS", k); o != nil {
			ocm = o.Rollout
		}
		for _, name := range r.contenders(k) {
			if strings.HasPrefix(name, "limit") { // its update is one time, the main table's limit update
				continue
			}
			x := r.find(name, k)
			if b.Len() == 0 {
				b.WriteString("\nConcurrent rollouts: every job's template changed at once (the updates sent all together); per job, " +
					"the time from the start until every one of its works carried the new template (the watch event of its last work). " +
					"Seconds over the jobs; ×OCM is the manager's over OCM's controller's:\n\n")
				b.WriteString("| row | contender | updates returned | p50 | p90 | max | ×OCM p50 | ×OCM p90 | ×OCM max |\n")
				b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
			}
			ro := x.Rollout
			if ro == nil || !x.Update.ok() || len(ro.Seconds) == 0 {
				fmt.Fprintf(&b, "| %s | %s | failed | | | | | | |\n", k.label(), name)
				continue
			}
			cmp := func(p float64) string {
				if name == "OCM MWRS" || ocm == nil || len(ocm.Seconds) == 0 {
					return "—"
				}
				return ratio(&step{Seconds: percentile(ro.Seconds, p)}, &step{Seconds: percentile(ocm.Seconds, p)})
			}
			fmt.Fprintf(&b, "| %s | %s | %.2f | %.2f | %.2f | %.2f | %s | %s | %s |\n", k.label(), name, ro.PatchesReturned,
				percentile(ro.Seconds, 50), percentile(ro.Seconds, 90), percentile(ro.Seconds, 100), cmp(50), cmp(90), cmp(100))
		}
	}
	return b.String()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
