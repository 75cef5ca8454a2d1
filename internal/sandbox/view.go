package sandbox

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// maxClusterRows bounds the cluster table; the rest are counted on one line.
const maxClusterRows = 30

// Render draws the live view of a snapshot: a table of clusters with one column per PlacementManifestWork
// (its work's state, ready pods and split shares on that cluster, and for a PlacementManifestWork with
// overrides the images the work carries), then the fleet namespaces of transparent mode with a line per
// object, then each PlacementManifestWork's summary, conditions and splits. It is plain text; the caller
// decides how to put it on screen.
func Render(s Snapshot) string {
	var b strings.Builder
	owners := ownerColumns(s)
	// The works of a PlacementManifestWork with overrides may differ per cluster: their cells name the images.
	overridden := map[string]bool{}
	for _, p := range s.PMWs {
		overridden[p.String()] = p.HasOverrides
	}

	fmt.Fprintf(&b, "CLUSTERS (%d)\n", len(s.Clusters))
	header := []string{"CLUSTER", "LABELS", "AGENT"}
	for _, o := range owners {
		header = append(header, shortOwner(o))
	}
	rows := [][]string{header}
	for i, c := range s.Clusters {
		if i == maxClusterRows {
			rows = append(rows, []string{fmt.Sprintf("... %d more", len(s.Clusters)-maxClusterRows)})
			break
		}
		row := []string{c.Name, labelString(c.Labels), string(c.Behavior)}
		for _, o := range owners {
			w, ok := c.workOf(o)
			if !ok {
				row = append(row, "-")
				continue
			}
			cell := workCell(w)
			if overridden[o] {
				cell += prefixed(" ", strings.Join(w.images(), ","))
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	writeTable(&b, rows, "  ")
	renderFleet(&b, s.Fleet)

	fmt.Fprintf(&b, "\nPLACEMENTMANIFESTWORKS (%d)\n", len(s.PMWs))
	for _, p := range s.PMWs {
		sum := p.Summary
		fmt.Fprintf(&b, "  %s  placement=%s  total=%d applied=%d available=%d progressing=%d degraded=%d%s\n",
			p.NamespacedName, orDash(p.Placement), sum.Total, sum.Applied, sum.Available, sum.Progressing, sum.Degraded,
			staleNote(p))
		// All conditions on one line, then the reason and message of each one that is not as it should be.
		conds := orderedConditions(p.Conditions)
		if len(conds) > 0 {
			parts := make([]string, 0, len(conds))
			for _, c := range conds {
				parts = append(parts, fmt.Sprintf("%s=%s", c.Type, c.Status))
			}
			fmt.Fprintf(&b, "    conditions: %s\n", strings.Join(parts, " "))
		}
		for _, c := range conds {
			if c.Status != goodStatus(c.Type) {
				fmt.Fprintf(&b, "    %s=%s %s: %s\n", c.Type, c.Status, c.Reason, clip(c.Message, 110))
			}
		}
		if len(p.Overrides) > 0 {
			fmt.Fprintf(&b, "    overrides: %s\n", overrideCounts(p.Overrides))
			for _, o := range p.Overrides {
				if o.Failed > 0 {
					fmt.Fprintf(&b, "    override %s failed on %d: %s\n", o.Name, o.Failed, clip(o.Message, 100))
				}
			}
		}
		for _, sp := range p.Splits {
			fmt.Fprintf(&b, "    split %s %s: total=%d placed=%d unplaced=%d shares=%s\n",
				manifestName(sp.Kind, sp.Namespace, sp.Name), sp.FieldPath, sp.Total, sp.Placed, sp.Unplaced, shareCounts(sp.Shares))
		}
		for _, m := range p.Manifests {
			if len(m.Feedback) == 0 && len(m.Aggregated) == 0 {
				continue // ConfigMaps and the like: healthy once applied, nothing to add
			}
			fmt.Fprintf(&b, "    manifest %s: healthy=%d progressing=%d degraded=%d%s\n",
				manifestName(m.Kind, m.Namespace, m.Name), m.Healthy, m.Progressing, m.Degraded, prefixed(" ", feedbackSums(m.Feedback)))
			if len(m.Aggregated) > 0 {
				fmt.Fprintf(&b, "      aggregated: %s\n", aggregatedFields(m.Aggregated))
			}
		}
		for _, u := range p.Unhealthy {
			fmt.Fprintf(&b, "    unhealthy %s: %s %s: %s\n", u.Cluster, u.State, u.Reason, clip(u.Message, 100))
		}
		if p.UnhealthyNotListed > 0 {
			fmt.Fprintf(&b, "    unhealthy: %d more\n", p.UnhealthyNotListed)
		}
	}
	if len(s.Interpreters) > 0 {
		fmt.Fprintf(&b, "\nRESOURCEINTERPRETERS (%d)\n", len(s.Interpreters))
		rows := make([][]string, 0, len(s.Interpreters))
		for _, ri := range s.Interpreters {
			state := fmt.Sprintf("Ready=%s %s", orDash(string(ri.Ready)), ri.Reason)
			if ri.Ready == metav1.ConditionFalse {
				state += ": " + clip(ri.Message, 80)
			}
			rows = append(rows, []string{ri.Name, strings.TrimSuffix(ri.Kind+"."+ri.Group, "."), strings.TrimSpace(state)})
		}
		writeTable(&b, rows, "  ")
	}
	return b.String()
}

// aggregatedFields writes a manifest's roll-up as its interpreter asks for it: "readyInstances 6 (sum),
// phase Ready on 4, Provisioning on 1".
func aggregatedFields(fields []workv1alpha1.AggregatedField) string {
	parts := make([]string, 0, len(fields))
	for _, f := range fields {
		if f.Operation == workv1alpha1.AggregationCount {
			counts := make([]string, 0, len(f.Counts))
			for _, c := range f.Counts {
				counts = append(counts, fmt.Sprintf("%s on %d", c.Value, c.Clusters))
			}
			parts = append(parts, f.Name+" "+orDash(strings.Join(counts, ", ")))
			continue
		}
		value := "-"
		if f.Value != nil {
			value = fmt.Sprint(*f.Value)
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", f.Name, value, strings.ToLower(string(f.Operation))))
	}
	return strings.Join(parts, ", ")
}

// overrideCounts writes "regional-registry on 4, pause on 0 (failed on 2)".
func overrideCounts(overrides []workv1alpha1.OverrideStatus) string {
	parts := make([]string, 0, len(overrides))
	for _, o := range overrides {
		part := fmt.Sprintf("%s on %d", o.Name, o.Clusters)
		if o.Failed > 0 {
			part += fmt.Sprintf(" (failed on %d)", o.Failed)
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// images lists the distinct images of the work's workloads, in manifest order.
func (w WorkView) images() []string {
	seen := map[string]bool{}
	var out []string
	for _, wl := range w.Workloads {
		for _, image := range wl.Images {
			if !seen[image] {
				seen[image] = true
				out = append(out, image)
			}
		}
	}
	return out
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

// ownerColumns are the owners of the works on the clusters: sample and other PlacementManifestWorks first,
// by name, then works nobody owns, under their own name.
func ownerColumns(s Snapshot) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range s.PMWs {
		seen[p.String()] = true
		out = append(out, p.String())
	}
	var extra []string
	for _, c := range s.Clusters {
		for _, w := range c.Works {
			if w.Owner != "" && !seen[w.Owner] {
				seen[w.Owner] = true
				extra = append(extra, w.Owner)
			}
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// shortOwner drops the sample namespace from a column title.
func shortOwner(o string) string {
	return strings.TrimPrefix(o, SampleNamespace+"/")
}

// workCell says, in a few words, where one cluster's work stands: its state, ready pods over wanted pods, and
// the split shares it carries.
func workCell(w WorkView) string {
	var state string
	switch {
	case w.Applied == "":
		state = "pending"
	case w.Applied == metav1.ConditionFalse:
		state = "apply-failed"
	case w.Degraded == metav1.ConditionTrue || w.stuck():
		state = "degraded"
	case w.Available != metav1.ConditionTrue:
		state = "unavailable"
	case w.Progressing == metav1.ConditionTrue || !w.Ready():
		state = "progressing"
	default:
		state = "ready"
	}
	var ready, desired int64
	var shares []string
	for _, wl := range w.Workloads {
		ready += wl.Ready
		desired += wl.Desired
		if wl.Split {
			shares = append(shares, fmt.Sprintf("%s=%d", wl.Name, wl.Desired))
		}
	}
	cell := state
	if len(w.Workloads) > 0 && w.Applied == metav1.ConditionTrue {
		cell += fmt.Sprintf(" %d/%d", ready, desired)
	}
	if len(shares) > 0 {
		cell += " split " + strings.Join(shares, ",")
	}
	return cell
}

func labelString(labels map[string]string) string {
	// region and environment first: they are what the sandbox sets and what Placements select on.
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		switch k {
		case LabelRegion:
			return 0
		case LabelEnvironment:
			return 1
		}
		return 2
	}
	sort.Slice(keys, func(a, b int) bool {
		if rank(keys[a]) != rank(keys[b]) {
			return rank(keys[a]) < rank(keys[b])
		}
		return keys[a] < keys[b]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

// orderedConditions lists the conditions in the order they are documented in.
func orderedConditions(conds []metav1.Condition) []metav1.Condition {
	order := map[string]int{
		workv1alpha1.ConditionReady:               0,
		workv1alpha1.ConditionReconciling:         1,
		workv1alpha1.ConditionStalled:             2,
		workv1alpha1.ConditionPlacementVerified:   3,
		workv1alpha1.ConditionManifestworkApplied: 4,
		workv1alpha1.ConditionDistributed:         5,
	}
	out := append([]metav1.Condition(nil), conds...)
	sort.SliceStable(out, func(a, b int) bool {
		ra, oka := order[out[a].Type]
		rb, okb := order[out[b].Type]
		if !oka {
			ra = len(order)
		}
		if !okb {
			rb = len(order)
		}
		return ra < rb
	})
	return out
}

func staleNote(p PMWView) string {
	if p.ObservedGeneration != p.Generation {
		return fmt.Sprintf("  (status of generation %d, spec at %d)", p.ObservedGeneration, p.Generation)
	}
	return ""
}

func manifestName(kind, namespace, name string) string {
	if namespace != "" {
		name = namespace + "/" + name
	}
	if kind != "" {
		name = kind + " " + name
	}
	return name
}

// goodStatus is the status of a condition type when all is well: False for the kstatus abnormal-true
// conditions, True for the others.
func goodStatus(t string) metav1.ConditionStatus {
	if t == workv1alpha1.ConditionReconciling || t == workv1alpha1.ConditionStalled {
		return metav1.ConditionFalse
	}
	return metav1.ConditionTrue
}

// feedbackSums writes "readyReplicas=6 replicas=6": the manifest's feedback summed over clusters.
func feedbackSums(sums []workv1alpha1.FeedbackSum) string {
	parts := make([]string, 0, len(sums))
	for _, s := range sums {
		parts = append(parts, fmt.Sprintf("%s=%d", s.Name, s.Value))
	}
	return strings.Join(parts, " ")
}

// shareCounts writes "2x1,1x4": share 2 on one cluster, share 1 on four.
func shareCounts(shares []workv1alpha1.ShareCount) string {
	if len(shares) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(shares))
	for _, s := range shares {
		parts = append(parts, fmt.Sprintf("%dx%d", s.Share, s.Clusters))
	}
	return strings.Join(parts, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func (w WorkView) stuck() bool {
	for _, wl := range w.Workloads {
		if wl.Stuck {
			return true
		}
	}
	return false
}

// writeTable writes rows with columns padded to their widest cell.
func writeTable(b *strings.Builder, rows [][]string, indent string) {
	var widths []int
	for _, r := range rows {
		for i, cell := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len(cell))
		}
	}
	for _, r := range rows {
		b.WriteString(indent)
		for i, cell := range r {
			if i == len(r)-1 {
				b.WriteString(cell)
				break
			}
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", widths[i]-len(cell)+2))
		}
		b.WriteString("\n")
	}
}

// renderFleet writes the namespaces opted in to transparent mode: how each opts in and the PlacementManifestWork
// generated for it, then a line per object with its status as written back on the fleet API server ("6/6 ready
// Available"), on how many clusters the generated PlacementManifestWork has it, and, while it is not ready, the
// manager's latest event on it.
func renderFleet(b *strings.Builder, namespaces []FleetNamespaceView) {
	if len(namespaces) == 0 {
		return
	}
	fmt.Fprintf(b, "\nFLEET NAMESPACES (%d)\n", len(namespaces))
	for _, ns := range namespaces {
		fmt.Fprintf(b, "  %s  %s  pmw=%s\n", ns.Name, optInString(ns), orDash(ns.PMW))
		rows := make([][]string, 0, len(ns.Objects))
		for _, o := range ns.Objects {
			row := []string{fleetObjectName(o), fleetObjectState(o), clusterCount(o.Clusters)}
			if o.Event != "" {
				row = append(row, clip(o.Event, 100))
			}
			rows = append(rows, row)
		}
		writeTable(b, rows, "    ")
	}
}

// optInString says how a fleet namespace opts in: `placement=web`, `cluster-selector="env=prod"
// number-of-clusters=2`, or why the manager cannot read it.
func optInString(ns FleetNamespaceView) string {
	if ns.Invalid != "" {
		return "invalid opt-in: " + clip(ns.Invalid, 100)
	}
	if !ns.Selects {
		return "placement=" + ns.Placement
	}
	out := fmt.Sprintf("cluster-selector=%q", ns.Selector)
	if ns.NumberOfClusters != "" {
		out += " number-of-clusters=" + ns.NumberOfClusters
	}
	return out + " placement=" + ns.Placement
}

func clusterCount(n int32) string {
	switch n {
	case -1:
		return "not delivered yet"
	case 1:
		return "on 1 cluster"
	}
	return fmt.Sprintf("on %d clusters", n)
}
