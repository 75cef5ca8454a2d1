//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// Convergence phases of a scenario, the columns of the table printed at the end.
const (
	// phaseSpokes: every spoke's API server holds what the scenario expects, workloads rolled out.
	phaseSpokes = "spokes"
	// phaseHub: the PlacementManifestWork's status says so, from the agents' feedback.
	phaseHub = "hub status"
)

// convergenceEntry names the report entries converged adds.
const convergenceEntry = "converged"

// convergence is how long one phase of a scenario took, from the scenario's change to the asserted state.
type convergence struct {
	Phase string
	Took  time.Duration
}

func (c convergence) String() string {
	return fmt.Sprintf("%s in %s", c.Phase, c.Took.Round(time.Millisecond))
}

// converged records that phase converged now, for the table at the end of the suite.
func converged(phase string, since time.Time) {
	AddReportEntry(convergenceEntry, convergence{Phase: phase, Took: time.Since(since)})
}

// The table of scenario → convergence time. A phase that did not converge shows "-".
var _ = ReportAfterSuite("convergence times", func(r Report) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "\nScenario convergence (from the scenario's change until the state is observed):")
	fmt.Fprintf(w, "scenario\t%s\t%s\tresult\n", phaseSpokes, phaseHub)
	for _, s := range r.SpecReports {
		switch s.LeafNodeType {
		case types.NodeTypeBeforeSuite:
			fmt.Fprintf(w, "start the stack (BeforeSuite: binaries, hub and spokes, readiness checks)\t%s\t\t%s\n",
				s.RunTime.Round(time.Millisecond), s.State)
		case types.NodeTypeIt:
			took := map[string]string{phaseSpokes: "-", phaseHub: "-"}
			for _, e := range s.ReportEntries {
				if c, ok := e.GetRawValue().(convergence); ok && e.Name == convergenceEntry {
					took[c.Phase] = c.Took.Round(time.Millisecond).String()
				}
			}
			name := strings.TrimSpace(strings.Join(append(s.ContainerHierarchyTexts, s.LeafNodeText), " / "))
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", name, took[phaseSpokes], took[phaseHub], s.State)
		}
	}
	fmt.Fprintf(w, "whole suite\t%s\t\t%s\n", r.RunTime.Round(time.Second), map[bool]string{true: "passed", false: "failed"}[r.SuiteSucceeded])
	_ = w.Flush()
})
