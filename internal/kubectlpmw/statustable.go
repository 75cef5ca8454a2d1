package kubectlpmw

import (
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/revision"
)

// StatusInput is what status read from the hub about one PlacementManifestWork.
type StatusInput struct {
	PMW *workv1alpha1.PlacementManifestWork
	// Works are the ManifestWorks the PlacementManifestWork owns (its label and UID), any order; WorksKnown is
	// false when they could not be listed (a user without access to the cluster namespaces).
	Works      []workv1.ManifestWork
	WorksKnown bool
	// Decided are the clusters of the Placement's decisions; DecidedKnown is false when they could not be read.
	Decided      []string
	DecidedKnown bool
	// Revisions are the PlacementManifestWork's ControllerRevisions (its label and UID); each work's revision
	// is found from its template hash (revision.ByTemplateHash). None when they could not be listed.
	Revisions []appsv1.ControllerRevision
}

// StatusReport is what `kubectl pmw status` prints: the table as text, or this structure with -o yaml|json.
type StatusReport struct {
	Name               string                                 `json:"name"`
	Namespace          string                                 `json:"namespace"`
	Generation         int64                                  `json:"generation"`
	ObservedGeneration int64                                  `json:"observedGeneration"`
	Placement          string                                 `json:"placement,omitempty"`
	Ready              bool                                   `json:"ready"`
	Summary            workv1alpha1.PlacedManifestWorkSummary `json:"summary"`
	Rollout            *workv1alpha1.RolloutStatus            `json:"rollout,omitempty"`
	CurrentRevision    *workv1alpha1.RevisionReference        `json:"currentRevision,omitempty"`
	CompletedRevision  *workv1alpha1.RevisionReference        `json:"completedRevision,omitempty"`
	Conditions         []ConditionRow                         `json:"conditions,omitempty"`
	Splits             []workv1alpha1.SplitStatus             `json:"splits,omitempty"`
	// TemplateHashes are the template hashes known to be current (see ClusterRow.Template).
	TemplateHashes []string     `json:"templateHashes,omitempty"`
	Clusters       []ClusterRow `json:"clusters"`
	// Notes say what the table could not know (a stale status, works that could not be listed).
	Notes []string `json:"notes,omitempty"`
}

// ConditionRow is one condition of the PlacementManifestWork.
type ConditionRow struct {
	Type    string                 `json:"type"`
	Status  metav1.ConditionStatus `json:"status"`
	Reason  string                 `json:"reason,omitempty"`
	Message string                 `json:"message,omitempty"`
	// Stale is set when the condition describes an earlier generation than the spec's.
	Stale bool `json:"stale,omitempty"`
	// Good says whether the status is the one a healthy PlacementManifestWork has (Ready True, Stalled False).
	Good bool `json:"good"`
}

// Health values of a ClusterRow.
const (
	HealthAvailable   = "Available"
	HealthProgressing = "Progressing"
	HealthDegraded    = "Degraded"
	HealthUnknown     = "Unknown"
)

// Template values of a ClusterRow.
const (
	TemplateCurrent  = "current"
	TemplateOutdated = "outdated"
	TemplateUnknown  = "unknown"
)

// Sources of a ClusterRow's health.
const (
	// SourceManager: the manager's own record in the status (unhealthyClusters, or absent from a complete list).
	SourceManager = "manager"
	// SourceWork: read here from the work's conditions and per-manifest report, with the built-in kinds only,
	// because the status does not name the cluster (beyond its 10) or describes an earlier generation.
	SourceWork = "work"
)

// ClusterRow is one cluster: decided, or holding a work of the PlacementManifestWork, or both.
type ClusterRow struct {
	Cluster string `json:"cluster"`
	// Work is the ManifestWork's name in the cluster's namespace; empty when the cluster has none.
	Work string `json:"work,omitempty"`
	// Decided is false for a cluster that left the decisions and whose work is kept for now (leaving).
	Decided bool `json:"decided"`
	// Applied and Available are the work's conditions for its current generation: True, False or Unknown (not
	// reported for it); empty without a work.
	Applied   string `json:"applied,omitempty"`
	Available string `json:"available,omitempty"`
	// Health is Available, Progressing, Degraded or Unknown, with the reason and message; HealthSource says
	// who judged it (SourceManager or SourceWork).
	Health       string `json:"health"`
	Reason       string `json:"reason,omitempty"`
	Message      string `json:"message,omitempty"`
	HealthSource string `json:"healthSource,omitempty"`
	// Shares are the split shares the work carries, keyed "<manifest> <field path>".
	Shares map[string]int32 `json:"shares,omitempty"`
	// TemplateHash is the work's template-hash annotation; Template says whether it is the current template
	// (current, outdated or unknown).
	TemplateHash string `json:"templateHash,omitempty"`
	Template     string `json:"template,omitempty"`
	// Revision is the number of the revision whose template the work carries, from the ControllerRevision
	// labelled with its template hash; 0 when none is known.
	Revision int64 `json:"revision,omitempty"`
}

// conditionOrder is the order conditions are printed in: kstatus first, then the others as the reference lists
// them; any other type follows by name.
var conditionOrder = []string{
	workv1alpha1.ConditionReady, workv1alpha1.ConditionReconciling, workv1alpha1.ConditionStalled,
	workv1alpha1.ConditionPlacementVerified, workv1alpha1.ConditionManifestworkApplied,
	workv1alpha1.ConditionDistributed, workv1alpha1.ConditionRolloutComplete, workv1alpha1.ConditionCompleted,
}

// goodStatus is the status of a condition when nothing is wrong: False for Reconciling and Stalled, True for
// the others.
func goodStatus(t string) metav1.ConditionStatus {
	if t == workv1alpha1.ConditionReconciling || t == workv1alpha1.ConditionStalled {
		return metav1.ConditionFalse
	}
	return metav1.ConditionTrue
}

// IsReady reports whether the PlacementManifestWork is Ready for its current generation, which status's exit
// code gates on as `kubectl wait --for=condition=Ready` would.
func IsReady(pmw *workv1alpha1.PlacementManifestWork) bool {
	c := meta.FindStatusCondition(pmw.Status.Conditions, workv1alpha1.ConditionReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == pmw.Generation &&
		pmw.Status.ObservedGeneration == pmw.Generation
}

// BuildStatus builds the report of one PlacementManifestWork from its status, its works and its decisions,
// without I/O. Health comes from the manager's status where it speaks of the cluster and describes the current
// generation, else from the work's own report; the template is current or outdated where the status makes
// it certain (see templateStates), else unknown.
func BuildStatus(in StatusInput) StatusReport {
	pmw := in.PMW
	st := pmw.Status
	fresh := st.ObservedGeneration == pmw.Generation
	r := StatusReport{
		Name: pmw.Name, Namespace: pmw.Namespace, Generation: pmw.Generation, ObservedGeneration: st.ObservedGeneration,
		Placement: st.Placement, Ready: IsReady(pmw), Summary: st.PlacedManifestWorkSummary, Rollout: st.Rollout,
		Splits: st.Splits, Conditions: conditionRows(pmw), Clusters: []ClusterRow{},
		CurrentRevision: st.CurrentRevision, CompletedRevision: st.CompletedRevision,
	}
	revisions := revision.ByTemplateHash(in.Revisions)
	if r.Placement == "" {
		r.Placement = pmw.PlacementName()
	}
	if !fresh {
		r.Notes = append(r.Notes, "the status describes an earlier generation than the spec's: the manager has not caught up yet (is it running?)")
	}
	if !in.WorksKnown {
		r.Notes = append(r.Notes, "the ManifestWorks could not be listed: applied, shares and template are not shown")
	}
	if !in.DecidedKnown {
		r.Notes = append(r.Notes, "the PlacementDecisions could not be read: leaving clusters are not told apart")
	}

	works := map[string]*workv1.ManifestWork{}
	for i := range in.Works {
		works[in.Works[i].Namespace] = &in.Works[i]
	}
	unhealthy := map[string]workv1alpha1.ClusterHealth{}
	if fresh {
		for _, h := range st.UnhealthyClusters {
			unhealthy[h.Cluster] = h
		}
	}
	decided := map[string]bool{}
	for _, c := range in.Decided {
		decided[c] = true
	}
	// Without the decisions, every cluster with a work or named by the status counts as decided; that is
	// wrong only for leaving clusters, which the status counts.
	isDecided := func(c string) bool { return !in.DecidedKnown || decided[c] }

	clusters := map[string]bool{}
	for c := range works {
		clusters[c] = true
	}
	for c := range decided {
		clusters[c] = true
	}
	for c := range unhealthy {
		clusters[c] = true
	}
	// The manager's record is complete when it describes the current generation and names every cluster that
	// is not available; a decided cluster it does not name is then available. Without the decisions, a work
	// might be a leaving cluster's, which the record does not describe, unless none is leaving.
	complete := fresh && st.UnhealthyClustersNotListed == 0 && (in.DecidedKnown || st.LeavingClusters == 0)

	states, current := templateStates(in, works, unhealthy, isDecided, complete)
	r.TemplateHashes = current
	names := make([]string, 0, len(clusters))
	for c := range clusters {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		w := works[c]
		row := ClusterRow{Cluster: c, Decided: isDecided(c)}
		if w != nil {
			row.Work = w.Name
			row.Applied = workCondition(w, workv1.WorkApplied)
			row.Available = workCondition(w, workv1.WorkAvailable)
			row.Shares = manifestwork.Shares(w)
			row.TemplateHash = w.Annotations[workv1alpha1.AnnotationTemplateHash]
			row.Template = states[c]
			row.Revision = revisions[row.TemplateHash]
		} else if !in.WorksKnown {
			row.Work = manifestwork.WorkName(manifestwork.Owner(pmw))
		}
		switch h, listed := unhealthy[c]; {
		case listed && row.Decided:
			row.Health, row.Reason, row.Message, row.HealthSource = string(h.State), h.Reason, h.Message, SourceManager
		case complete && row.Decided:
			row.Health, row.HealthSource = HealthAvailable, SourceManager
		case w != nil || in.WorksKnown:
			v := health.Cluster(health.ClusterInput{Work: w, Manifests: workManifests(w)})
			row.Health, row.Reason, row.Message, row.HealthSource = healthOf(v.State), v.Reason, v.Message, SourceWork
		default:
			row.Health = HealthUnknown
		}
		r.Clusters = append(r.Clusters, row)
	}
	return r
}

func workManifests(w *workv1.ManifestWork) []health.ManifestInput {
	if w == nil {
		return nil
	}
	return health.WorkManifests(w)
}

func healthOf(s health.State) string {
	switch s {
	case health.Healthy:
		return HealthAvailable
	case health.Progressing:
		return HealthProgressing
	case health.Degraded:
		return HealthDegraded
	}
	return HealthUnknown
}

// templateStates says, per cluster with a work, whether the work carries the current template. The status does
// not hold the current template hash (with overrides it differs per cluster), so it is learnt from what the
// status makes certain: a cluster the manager counts available carries the current template, and so does every
// decided cluster once RolloutComplete is True for this generation; a cluster the status names OutdatedTemplate
// does not. A work with a hash known current is current. Without overrides every current work has the same
// hash, so once it is known, any other hash is outdated. Anything else is unknown. It returns the states and the
// hashes known current, sorted.
func templateStates(in StatusInput, works map[string]*workv1.ManifestWork, unhealthy map[string]workv1alpha1.ClusterHealth,
	isDecided func(string) bool, complete bool) (map[string]string, []string) {
	pmw := in.PMW
	fresh := pmw.Status.ObservedGeneration == pmw.Generation
	out := make(map[string]string, len(works))
	if !fresh {
		for c := range works {
			out[c] = TemplateUnknown
		}
		return out, nil
	}
	rollout := meta.FindStatusCondition(pmw.Status.Conditions, workv1alpha1.ConditionRolloutComplete)
	rolledOut := rollout != nil && rollout.Status == metav1.ConditionTrue && rollout.ObservedGeneration == pmw.Generation &&
		(in.DecidedKnown || pmw.Status.LeavingClusters == 0)
	current := map[string]bool{}
	for c, w := range works {
		h := w.Annotations[workv1alpha1.AnnotationTemplateHash]
		if h == "" || !isDecided(c) {
			continue
		}
		_, listed := unhealthy[c]
		if rolledOut || (complete && !listed) {
			current[h] = true
		}
	}
	single := len(pmw.Spec.Overrides) == 0 && len(current) == 1
	for c, w := range works {
		h := w.Annotations[workv1alpha1.AnnotationTemplateHash]
		switch {
		case current[h]:
			out[c] = TemplateCurrent
		case unhealthy[c].Reason == workv1alpha1.ReasonOutdatedTemplate, single:
			out[c] = TemplateOutdated
		default:
			out[c] = TemplateUnknown
		}
	}
	var hashes []string
	for h := range current {
		hashes = append(hashes, h)
	}
	sort.Strings(hashes)
	return out, hashes
}

// workCondition is the status of a work's condition for its current generation: True, False, or Unknown when
// the agent has not reported it for that generation.
func workCondition(w *workv1.ManifestWork, t string) string {
	c := meta.FindStatusCondition(w.Status.Conditions, t)
	if c == nil || c.ObservedGeneration != w.Generation {
		return string(metav1.ConditionUnknown)
	}
	return string(c.Status)
}

func conditionRows(pmw *workv1alpha1.PlacementManifestWork) []ConditionRow {
	rank := map[string]int{}
	for i, t := range conditionOrder {
		rank[t] = i + 1
	}
	conds := append([]metav1.Condition(nil), pmw.Status.Conditions...)
	sort.SliceStable(conds, func(i, j int) bool {
		ri, rj := rank[conds[i].Type], rank[conds[j].Type]
		switch {
		case ri != 0 && rj != 0:
			return ri < rj
		case ri != 0 || rj != 0:
			return ri != 0
		}
		return conds[i].Type < conds[j].Type
	})
	out := make([]ConditionRow, 0, len(conds))
	for _, c := range conds {
		out = append(out, ConditionRow{
			Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message,
			Stale: c.ObservedGeneration != pmw.Generation, Good: c.Status == goodStatus(c.Type),
		})
	}
	return out
}

// shortHash is how a template hash is printed in the table.
func shortHash(h string) string {
	if len(h) > 8 {
		return h[:8]
	}
	return h
}

// shareText prints a work's shares: "<Kind>/<name>=<share>" per split field, the field path added when it is
// not .spec.replicas, sorted.
func shareText(shares map[string]int32) string {
	if len(shares) == 0 {
		return ""
	}
	parts := make([]string, 0, len(shares))
	for key, v := range shares {
		parts = append(parts, shareLabel(key)+"="+strconv.Itoa(int(v)))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// shareLabel shortens a shares key, "<Kind>[.<group>] [<namespace>/]<name> <field path>", to "<Kind>/<name>" and
// the field path when it is not .spec.replicas.
func shareLabel(key string) string {
	fields := strings.Fields(key)
	if len(fields) != 3 {
		return key
	}
	kind, _, _ := strings.Cut(fields[0], ".")
	name := fields[1]
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	label := kind + "/" + name
	if fields[2] != workv1alpha1.DefaultSplitFieldPath {
		label += ":" + fields[2]
	}
	return label
}
