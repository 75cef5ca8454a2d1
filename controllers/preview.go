package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/interpreterwebhook"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/placementdecision"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/planner"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/text"
)

// PreviewAction is what the manager would do to one cluster's ManifestWork.
type PreviewAction string

const (
	// ActionCreate creates the cluster's work.
	ActionCreate PreviewAction = "Create"
	// ActionUpdate updates the cluster's work (Diff says how its manifests change).
	ActionUpdate PreviewAction = "Update"
	// ActionDelete deletes the cluster's work: the cluster left the decisions, or a finished run's works are
	// removed, or the PlacementManifestWork is being deleted.
	ActionDelete PreviewAction = "Delete"
	// ActionUnchanged writes nothing: the work already carries what the manager wants.
	ActionUnchanged PreviewAction = "Unchanged"
	// ActionHeld writes nothing now: the rollout strategy keeps the cluster on its current template (or without
	// a work) until its turn; Desired is what it gets then.
	ActionHeld PreviewAction = "Held"
	// ActionFailed writes nothing: an override fails on the cluster (or its work cannot be built), so its work
	// is kept as it is.
	ActionFailed PreviewAction = "Failed"
	// ActionKept writes nothing: the cluster left the decisions, and its work is kept while the clusters that
	// take its place join or take over its share (moveStrategy MakeBeforeBreak), or while nothing is decided, or
	// the desired state is invalid.
	ActionKept PreviewAction = "Kept"
	// ActionConflict would create a work whose name a ManifestWork of someone else holds: the manager leaves
	// that one alone and tries again later.
	ActionConflict PreviewAction = "Conflict"
)

// PreviewOptions tune a preview as the manager's flags tune the manager.
type PreviewOptions struct {
	// MaxManifestBytes is the manager's --max-manifest-bytes; planner.DefaultMaxManifestBytes when 0.
	MaxManifestBytes int
	// Webhooks calls ResourceInterpreters' webhooks. When nil, they are called as the manager calls them, by
	// their URL or their Service's cluster DNS name, which a machine outside the hub's cluster often cannot
	// reach: such an interpreter then fails (InterpreterFailed), or with failurePolicy Ignore falls back.
	Webhooks interpreter.Webhooks
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// PreviewResult is what the manager would do for a PlacementManifestWork on the hub as it is now.
type PreviewResult struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Exists is true when the PlacementManifestWork is on the hub; the preview is then of its change to the
	// spec previewed (SpecChanged is false when the spec is the same).
	Exists      bool `json:"exists"`
	SpecChanged bool `json:"specChanged"`
	// Placement is the Placement's name; PlacementNote says what is known of its decisions.
	Placement     string `json:"placement"`
	PlacementNote string `json:"placementNote"`
	// Decided are the decided clusters, sorted; empty while the Placement is missing or undecided.
	Decided []string `json:"decided,omitempty"`
	// Invalid is set when no valid desired state exists (InvalidSpec, InvalidTemplate, InvalidOverride,
	// DependencyNotFound, InterpreterFailed, ...): nothing would be written and the delivered works are kept.
	// It is the Distributed condition the manager would report.
	Invalid *metav1.Condition `json:"invalid,omitempty"`
	// RolloutStrategy is the rollout strategy's type (All when none is set).
	RolloutStrategy string `json:"rolloutStrategy"`
	// Notes are the rest worth knowing: decisions being rewritten, a rollout strategy that cannot be used, ...
	Notes []string `json:"notes,omitempty"`
	// Clusters are the decided clusters and the clusters that hold a work of the PlacementManifestWork, sorted
	// by name.
	Clusters []ClusterPreview `json:"clusters,omitempty"`
}

// ClusterPreview is what the manager would do to one cluster's ManifestWork.
type ClusterPreview struct {
	Cluster string        `json:"cluster"`
	Action  PreviewAction `json:"action"`
	// Message says why, for the actions that need saying (Held, Failed, Kept, Conflict, Delete).
	Message string `json:"message,omitempty"`
	// Shares are the cluster's split shares, keyed "<manifest> <field path>" as the works' shares annotation.
	Shares map[string]int32 `json:"shares,omitempty"`
	// Overrides are the names of the overrides that select the cluster, in spec order.
	Overrides []string `json:"overrides,omitempty"`
	// RolloutFirst is set for the clusters the write brings a new template to now: what the rollout strategy
	// updates first (every cluster with a new template when the strategy is All).
	RolloutFirst bool `json:"rolloutFirst,omitempty"`
	// Desired is the ManifestWork the manager would write (without status and managedFields): now for Create
	// and Update; for Held once the rollout reaches the cluster (an update's updatedAt annotation is then that
	// time's; a create carries none).
	// Its owner UID annotation is empty for a PlacementManifestWork not on the hub yet: the API server assigns
	// the UID when it is created.
	Desired *workv1.ManifestWork `json:"desired,omitempty"`
	// Live is the cluster's ManifestWork on the hub (without managedFields), nil when it has none.
	Live *workv1.ManifestWork `json:"live,omitempty"`
	// Diff is a unified diff of the manifests, as YAML with sorted keys, from Live to Desired (Update, Held).
	Diff string `json:"diff,omitempty"`
}

// Preview computes what the manager would do for pmw (a PlacementManifestWork read from a file, possibly not on
// the hub yet, or a live one changed) on the hub that reader reads, without writing. It runs the reconciler's
// own gather (owned works, Placement and decisions, cluster facts, scores, interpreters, dependencies) through
// reader and its own desiredState, planWrites and planRollout, so what it shows is what the manager decides.
//
// pmw's spec is the one previewed; the rest comes from the hub. When a PlacementManifestWork of that namespace
// and name exists, its identity (UID, generation, finalizers, deletion) and status are used, as the manager
// would see them after the change; otherwise it is previewed as created: no status, and an empty UID (the API
// server assigns it), which the works' owner UID annotation shows. The spec is normalized as the API server
// stores it (JSON with sorted keys and integers as integers), so hashes match what the manager computes; CRD
// defaults and validation are not applied: a caller that wants them sends pmw as a server-side dry run first and
// previews what the API server returned.
//
// The manager keeps some state of each PlacementManifestWork in memory (controllers/memory.go); a preview
// rebuilds it from the hub: the split shares delivered are the works' shares annotations (what a running
// manager wrote there, unless a work agent edited its own), failover states are seeded from status.failedOver
// as after a restart (an unhealthy spell under way starts now), and the clusters that left the decisions start
// their make-before-break wait now. A manager that has been running may so remove a leaving work sooner, or
// fail a cluster over sooner, than the preview shows.
//
// The errors say in one line what is wrong: a hub without the CRD, a user without access.
func Preview(ctx context.Context, reader client.Reader, pmw *workv1alpha1.PlacementManifestWork, opts PreviewOptions) (*PreviewResult, error) {
	if pmw.Name == "" || pmw.Namespace == "" {
		return nil, errors.New("the PlacementManifestWork needs a name and a namespace")
	}
	// The reconciler's steps log for the manager's operators; a preview reports what matters in its result.
	ctx = ctrl.LoggerInto(ctx, ctrl.Log.WithSink(logf.NullLogSink{}))
	pmw, err := canonical(pmw)
	if err != nil {
		return nil, err
	}
	live := &workv1alpha1.PlacementManifestWork{}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(pmw), live); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, hubError(err)
		}
		live = nil
	}
	pmw = withIdentity(pmw, live)
	res := &PreviewResult{Namespace: pmw.Namespace, Name: pmw.Name, Exists: live != nil, Placement: pmw.PlacementName(),
		SpecChanged: live == nil || !equality.Semantic.DeepEqual(live.Spec, pmw.Spec), RolloutStrategy: string(clusterv1alpha1.All)}
	if s := pmw.Spec.RolloutStrategy; s != nil && s.Type != "" {
		res.RolloutStrategy = string(s.Type)
	}

	webhooks := opts.Webhooks
	if webhooks == nil {
		webhooks = &interpreterwebhook.Caller{Client: &interpreterwebhook.Client{}}
	}
	caller, _ := webhooks.(*interpreterwebhook.Caller) // a session per reconcile, as the manager's
	r := &PlacementManifestWorkReconciler{preview: reader, APIReader: reader, MaxManifestBytes: opts.MaxManifestBytes,
		Now: opts.Now, interpreterCache: interpreter.NewCacheWithWebhooks(webhooks), webhooks: caller}
	owned, err := r.ownedWorks(ctx, pmw)
	if err != nil {
		return nil, hubError(err)
	}
	if !pmw.DeletionTimestamp.IsZero() {
		res.PlacementNote = "the PlacementManifestWork is being deleted: the manager deletes its ManifestWorks, then releases it"
		if !controllerutil.ContainsFinalizer(pmw, workv1alpha1.Finalizer) {
			res.PlacementNote = "the PlacementManifestWork is being deleted without the manager's finalizer: the manager does nothing"
			return res, nil
		}
		for _, c := range sortedKeys(owned) {
			if owned[c].DeletionTimestamp.IsZero() {
				res.Clusters = append(res.Clusters, ClusterPreview{Cluster: c, Action: ActionDelete, Live: cleaned(owned[c]),
					Message: "the PlacementManifestWork is being deleted"})
			}
		}
		return res, nil
	}
	obs, _, err := r.gather(ctx, pmw, owned)
	if err != nil {
		return nil, hubError(err)
	}
	res.PlacementNote = placementNote(pmw, obs)
	res.Decided = obs.clusters
	if obs.decided() {
		if why := placementdecision.Unsettled(obs.placement, obs.decisions); why != "" {
			res.Notes = append(res.Notes, fmt.Sprintf("The Placement's decisions are being rewritten (%s): the manager waits for them to settle, at most %s, then acts on them as they are, as this preview does", why, defaultDecisionSettleTimeout))
		}
	}
	// A running manager's record of the shares it delivered is what it wrote on the works: the preview takes the
	// works' annotations as that record (a fresh manager would check them against the status, which fails
	// whenever the decisions changed since, and divide afresh).
	r.memory.setDeliveredShares(manifestwork.Owner(pmw), obs.shares)
	wp, _, err := r.decide(ctx, pmw, obs)
	if err != nil {
		return nil, err
	}
	if obs.invalid != nil {
		res.Invalid = &metav1.Condition{Type: workv1alpha1.ConditionDistributed, Status: metav1.ConditionFalse,
			Reason: obs.invalid.Reason, Message: obs.invalid.Message}
	}
	if wp == nil {
		// Undecided, or invalid: nothing is written, every delivered work is kept as it is.
		why := "the Placement is not decided: the delivered ManifestWorks are kept"
		if obs.invalid != nil {
			why = "the desired state is invalid: the delivered ManifestWorks are kept"
		}
		for _, c := range sortedKeys(owned) {
			res.Clusters = append(res.Clusters, ClusterPreview{Cluster: c, Action: ActionKept, Live: cleaned(owned[c]), Message: why})
		}
		return res, nil
	}
	res.Notes = append(res.Notes, rolloutNotes(wp)...)
	res.Clusters, err = clusterPreviews(ctx, reader, pmw, obs, wp, r.now())
	if err != nil {
		return nil, err
	}
	return res, nil
}

// canonical is a copy of pmw as the API server stores it: decoded into JSON values (integers kept as integers)
// and encoded again, so its manifests' bytes, which the template hash covers, are the ones the manager reads.
func canonical(pmw *workv1alpha1.PlacementManifestWork) (*workv1alpha1.PlacementManifestWork, error) {
	raw, err := json.Marshal(pmw)
	if err != nil {
		return nil, fmt.Errorf("encoding the PlacementManifestWork: %w", err)
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("decoding the PlacementManifestWork: %w", err)
	}
	if raw, err = json.Marshal(obj); err != nil {
		return nil, fmt.Errorf("encoding the PlacementManifestWork: %w", err)
	}
	out := &workv1alpha1.PlacementManifestWork{}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("decoding the PlacementManifestWork: %w", err)
	}
	return out, nil
}

// withIdentity gives pmw the identity and status of the live PlacementManifestWork, or of a new one when there
// is none (live nil).
func withIdentity(pmw, live *workv1alpha1.PlacementManifestWork) *workv1alpha1.PlacementManifestWork {
	if live == nil {
		pmw.UID, pmw.ResourceVersion, pmw.Generation = "", "", 1
		pmw.CreationTimestamp, pmw.DeletionTimestamp, pmw.Finalizers = metav1.Time{}, nil, nil
		pmw.Status = workv1alpha1.PlacementManifestWorkStatus{}
		return pmw
	}
	pmw.UID, pmw.ResourceVersion, pmw.Generation = live.UID, live.ResourceVersion, live.Generation
	pmw.CreationTimestamp, pmw.DeletionTimestamp, pmw.Finalizers = live.CreationTimestamp, live.DeletionTimestamp, live.Finalizers
	if !equality.Semantic.DeepEqual(live.Spec, pmw.Spec) {
		pmw.Generation++
	}
	pmw.Status = *live.Status.DeepCopy()
	return pmw
}

// placementNote says what is known of the Placement's decisions.
func placementNote(pmw *workv1alpha1.PlacementManifestWork, obs *observation) string {
	switch {
	case !obs.placementFound && pmw.Spec.PlacementRef == nil:
		return fmt.Sprintf("Placement %s does not exist yet: the manager would create it (empty, owned by the PlacementManifestWork); its clusters are unknown until OCM's placement controller decides them, and nothing is written until then", obs.placementName)
	case !obs.placementFound:
		return fmt.Sprintf("Placement %s does not exist: nothing is written until it does, and the delivered ManifestWorks are kept", obs.placementName)
	case obs.undecided != "":
		return obs.undecided + ": nothing is written until it is decided, and the delivered ManifestWorks are kept"
	default:
		return fmt.Sprintf("Placement %s decides %s", obs.placementName, text.Count(len(obs.clusters), "cluster", "clusters"))
	}
}

// rolloutNotes say what holds the rollout back.
func rolloutNotes(wp *writePlan) []string {
	var out []string
	ro := wp.rollout
	switch {
	case ro.err != nil:
		out = append(out, fmt.Sprintf("The rollout strategy cannot be used (%v): no cluster gets a new template until it is fixed", ro.err))
	case ro.maxFailures:
		out = append(out, "The rollout stopped: more updated clusters failed than maxFailures allows")
	}
	if ro.currentGroup != "" {
		out = append(out, "The rollout is at group "+ro.currentGroup)
	}
	if len(ro.timedOut) > 0 {
		out = append(out, fmt.Sprintf("Clusters %s did not become available within progressDeadline", names(ro.timedOut)))
	}
	if ro.completion.removed {
		out = append(out, "The run finished and ttlSecondsAfterFinished has passed: every ManifestWork is removed")
	}
	if len(wp.buildErrors) > 0 {
		out = append(out, fmt.Sprintf("ManifestWorks that cannot be built: %v", errors.Join(wp.buildErrors...)))
	}
	return out
}

// clusterPreviews says, for every decided cluster and every cluster with a work, what the write plan does to
// its work, sorted by cluster.
func clusterPreviews(ctx context.Context, reader client.Reader, pmw *workv1alpha1.PlacementManifestWork, obs *observation, wp *writePlan, now time.Time) ([]ClusterPreview, error) {
	ops := make(map[string]writeOp, len(wp.ops))
	for _, o := range wp.ops {
		ops[o.cluster] = o
	}
	out := make([]ClusterPreview, 0, len(obs.clusters)+len(obs.owned))
	seen := make(map[string]bool, len(obs.clusters))
	for _, cluster := range obs.clusters {
		seen[cluster] = true
		existing := obs.owned[cluster]
		cp := ClusterPreview{Cluster: cluster, Live: cleaned(existing), Shares: obs.plan.Shares[cluster], Overrides: overrideNames(obs.plan, cluster)}
		o, write := ops[cluster]
		switch {
		case write && o.delete:
			cp.Action, cp.Message = ActionDelete, "the run finished and ttlSecondsAfterFinished has passed"
		case obs.plan.OverrideFailures[cluster] != nil:
			cp.Action, cp.Message = ActionFailed, obs.plan.OverrideFailures[cluster].Error()+"; its ManifestWork is kept as it is"
		case obs.plan.DependencyFailures[cluster] != nil:
			cp.Action, cp.Message = ActionFailed, obs.plan.DependencyFailures[cluster].Message+"; its ManifestWork is kept as it is"
		case wp.desired[cluster] == nil:
			cp.Action, cp.Message = ActionFailed, "its ManifestWork cannot be built; it is kept as it is"
		case write:
			cp.Desired, cp.RolloutFirst = cleaned(o.written(now)), o.templateChange
			cp.Action = ActionUpdate
			if existing == nil {
				cp.Action = ActionCreate
				conflict, err := foreignWork(ctx, reader, cluster, obs.workName)
				if err != nil {
					return nil, err
				}
				if conflict != "" {
					cp.Action, cp.Desired, cp.RolloutFirst, cp.Message = ActionConflict, nil, false, conflict
				}
			}
		case !manifestwork.CarriesTemplate(existing, obs.clusterTemplateHash(cluster)):
			cp.Action, cp.Desired = ActionHeld, cleaned(writeOp{desired: wp.desired[cluster], existing: existing, templateChange: true}.written(now))
			cp.Message = "the rollout strategy keeps it on its current template for now"
			if existing == nil {
				cp.Message = "the rollout strategy has not brought it the template yet"
			}
		default:
			cp.Action = ActionUnchanged
		}
		if cp.Desired != nil {
			cp.Desired.Status = workv1.ManifestWorkStatus{} // a write of the work leaves its status alone
		}
		if cp.Action == ActionUpdate || cp.Action == ActionHeld {
			cp.Diff = manifestsDiff(cluster, existing, cp.Desired)
		}
		out = append(out, cp)
	}
	for _, cluster := range sortedKeys(obs.owned) {
		w := obs.owned[cluster]
		if seen[cluster] || !w.DeletionTimestamp.IsZero() {
			continue
		}
		cp := ClusterPreview{Cluster: cluster, Live: cleaned(w), Shares: manifestwork.Shares(w)}
		if o, write := ops[cluster]; write && o.delete {
			cp.Action, cp.Message, cp.Shares = ActionDelete, "the cluster left the decisions", nil
			if wp.rollout.completion.removed {
				cp.Message = "the run finished and ttlSecondsAfterFinished has passed"
			}
		} else {
			cp.Action = ActionKept
			cp.Message = fmt.Sprintf("the cluster left the decisions; its work is kept while the clusters that take its place join or scale up (make before break), at most %s", moveTimeout(pmw))
			if len(obs.clusters) == 0 {
				cp.Message = fmt.Sprintf("no cluster is decided; the works are kept (a drop to nothing is often a moment), at most %s", moveTimeout(pmw))
			}
		}
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cluster < out[j].Cluster })
	return out, nil
}

// foreignWork says whose ManifestWork holds the name a create would use in the cluster's namespace, "" when
// none does.
func foreignWork(ctx context.Context, reader client.Reader, cluster, name string) (string, error) {
	w := &workv1.ManifestWork{}
	if err := reader.Get(ctx, types.NamespacedName{Namespace: cluster, Name: name}, w); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", hubError(err)
	}
	owner := "not written by a PlacementManifestWork"
	if o, ok := manifestwork.OwnerOf(w); ok {
		owner = "of PlacementManifestWork " + o.String()
		if w.Annotations[workv1alpha1.AnnotationOwnerUID] != "" {
			owner += " (UID " + w.Annotations[workv1alpha1.AnnotationOwnerUID] + ")"
		}
	}
	return fmt.Sprintf("ManifestWork %s/%s already exists, %s: the manager leaves it alone and tries again every %s", cluster, name, owner, conflictRetry), nil
}

// overrideNames are the names of the overrides that select the cluster, in spec order.
func overrideNames(plan *planner.Plan, cluster string) []string {
	var out []string
	seen := map[string]bool{}
	for _, o := range plan.OverrideOutcomes[cluster] {
		if !seen[o.Override] {
			seen[o.Override] = true
			out = append(out, o.Override)
		}
	}
	return out
}

// cleaned is a copy of a work without its managedFields, with its kind.
func cleaned(w *workv1.ManifestWork) *workv1.ManifestWork {
	if w == nil {
		return nil
	}
	out := w.DeepCopy()
	out.ManagedFields = nil
	out.APIVersion, out.Kind = workv1.GroupVersion.String(), "ManifestWork"
	return out
}

// hubError says in one line what reading the hub ran into when it is a missing CRD or a refused read, keeping
// the API server's error for errors.As; other errors are returned as they are.
func hubError(err error) error {
	var noKind *meta.NoKindMatchError
	var noResource *meta.NoResourceMatchError
	kind := ""
	switch {
	case errors.As(err, &noKind):
		kind = noKind.GroupKind.Kind
	case errors.As(err, &noResource):
		kind = noResource.PartialResource.Resource
	case apierrors.IsForbidden(err):
		msg := err.Error()
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			msg = status.Status().Message
		}
		return &previewError{msg: "forbidden: " + msg, err: err}
	default:
		return err
	}
	switch kind {
	case "PlacementManifestWork", "ResourceInterpreter", "placementmanifestworks", "resourceinterpreters":
		return &previewError{msg: fmt.Sprintf("the hub has no %s CRD: install it (docs/install.md)", kind), err: err}
	}
	return &previewError{msg: fmt.Sprintf("the hub has no %s CRD: install Open Cluster Management's hub (cluster-manager) first (docs/install.md)", kind), err: err}
}

// previewError is an error said in one line that keeps the error it stands for.
type previewError struct {
	msg string
	err error
}

func (e *previewError) Error() string { return e.msg }
func (e *previewError) Unwrap() error { return e.err }

// manifestsDiff is a unified diff of the works' manifests as YAML, from live to desired.
func manifestsDiff(cluster string, live, desired *workv1.ManifestWork) string {
	name := ""
	if desired != nil {
		name = desired.Name
	} else if live != nil {
		name = live.Name
	}
	return unifiedDiff(cluster+"/"+name+" (live)", cluster+"/"+name+" (desired)", manifestsYAML(live), manifestsYAML(desired))
}

// manifestsYAML renders a work's manifests as YAML documents with sorted keys, each headed by a comment that
// names it; "" for no work.
func manifestsYAML(w *workv1.ManifestWork) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	for i, m := range w.Spec.Workload.Manifests {
		if i > 0 {
			b.WriteString("---\n")
		}
		var obj map[string]any
		if err := utiljson.Unmarshal(m.Raw, &obj); err != nil {
			fmt.Fprintf(&b, "# manifest %d (not an object)\n%s\n", i, m.Raw)
			continue
		}
		y, err := yaml.Marshal(obj)
		if err != nil {
			fmt.Fprintf(&b, "# manifest %d\n%s\n", i, m.Raw)
			continue
		}
		fmt.Fprintf(&b, "# manifest %d: %s\n", i, manifestName(obj))
		b.Write(y)
	}
	return b.String()
}

// manifestName is "<kind> <namespace>/<name>" of a decoded manifest.
func manifestName(obj map[string]any) string {
	kind, _ := obj["kind"].(string)
	md, _ := obj["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	if ns, _ := md["namespace"].(string); ns != "" {
		name = ns + "/" + name
	}
	return kind + " " + name
}

// diffContext is how many unchanged lines a hunk shows around a change.
const diffContext = 3

// maxDiffCells bounds the line-by-line comparison (lines of a times lines of b, once common ends are cut): beyond
// it the changed middle is shown as removed and added whole.
const maxDiffCells = 4 << 20

// unifiedDiff is a unified diff of a and b by lines, with diffContext lines of context; "" when they are equal.
func unifiedDiff(nameA, nameB, a, b string) string {
	if a == b {
		return ""
	}
	ops := diffLines(splitLines(a), splitLines(b))
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	for start := 0; start < len(ops); {
		// A hunk runs from diffContext lines before a change to diffContext lines after the last change that is
		// at most 2*diffContext unchanged lines from the next.
		first := start
		for first < len(ops) && ops[first].kind == ' ' {
			first++
		}
		if first == len(ops) {
			break
		}
		from := max(first-diffContext, start)
		to, equal := first, 0
		for i := first; i < len(ops); i++ {
			if ops[i].kind == ' ' {
				equal++
				if equal > 2*diffContext {
					break
				}
				continue
			}
			equal, to = 0, i
		}
		end := min(to+1+diffContext, len(ops))
		writeHunk(&out, ops[from:end])
		start = end
	}
	return out.String()
}

type diffOp struct {
	kind byte // ' ', '-' or '+'
	line string
	// a and b are the line's numbers (from 1) in a and b; 0 when it is not in that side.
	a, b int
}

// writeHunk writes one hunk of a unified diff.
func writeHunk(out *strings.Builder, ops []diffOp) {
	aStart, aLen, bStart, bLen := 0, 0, 0, 0
	for _, o := range ops {
		if o.kind != '+' {
			if aLen == 0 {
				aStart = o.a
			}
			aLen++
		}
		if o.kind != '-' {
			if bLen == 0 {
				bStart = o.b
			}
			bLen++
		}
	}
	// An empty side is numbered by the line before it, as diff -u does.
	if aLen == 0 {
		aStart = ops[0].a
	}
	if bLen == 0 {
		bStart = ops[0].b
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
	for _, o := range ops {
		out.WriteByte(o.kind)
		out.WriteString(o.line)
		out.WriteByte('\n')
	}
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffLines is the edit script from a to b along a longest common subsequence of lines. The common first and
// last lines are cut first; the rest is compared line by line unless that is over maxDiffCells.
func diffLines(a, b []string) []diffOp {
	prefix := 0
	for prefix < len(a) && prefix < len(b) && a[prefix] == b[prefix] {
		prefix++
	}
	suffix := 0
	for suffix < len(a)-prefix && suffix < len(b)-prefix && a[len(a)-1-suffix] == b[len(b)-1-suffix] {
		suffix++
	}
	ops := make([]diffOp, 0, len(a)+len(b))
	for i := range prefix {
		ops = append(ops, diffOp{kind: ' ', line: a[i], a: i + 1, b: i + 1})
	}
	ma, mb := a[prefix:len(a)-suffix], b[prefix:len(b)-suffix]
	ia, ib := prefix, prefix // lines of a and b written so far
	del := func(line string) { ia++; ops = append(ops, diffOp{kind: '-', line: line, a: ia, b: ib}) }
	add := func(line string) { ib++; ops = append(ops, diffOp{kind: '+', line: line, a: ia, b: ib}) }
	same := func(line string) { ia++; ib++; ops = append(ops, diffOp{kind: ' ', line: line, a: ia, b: ib}) }
	if len(ma)*len(mb) > maxDiffCells {
		for _, l := range ma {
			del(l)
		}
		for _, l := range mb {
			add(l)
		}
	} else {
		// lcs[i][j] is the length of a longest common subsequence of ma[i:] and mb[j:].
		lcs := make([][]int32, len(ma)+1)
		for i := range lcs {
			lcs[i] = make([]int32, len(mb)+1)
		}
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				same(ma[i])
				i++
				j++
			case j < len(mb) && (i == len(ma) || lcs[i][j+1] > lcs[i+1][j]):
				add(mb[j])
				j++
			default:
				del(ma[i])
				i++
			}
		}
	}
	for k := len(a) - suffix; k < len(a); k++ {
		same(a[k])
	}
	return ops
}

// Print writes the preview in format: "text" (the default when ""; a summary, a line per cluster and the diff
// of every update), "yaml" or "json" (the PreviewResult).
func (r *PreviewResult) Print(w io.Writer, format string) error {
	switch format {
	case "", "text":
		return r.printText(w)
	case "yaml":
		b, err := yaml.Marshal(r)
		if err != nil {
			return fmt.Errorf("encoding the preview: %w", err)
		}
		_, err = w.Write(b)
		return err
	case "json":
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the preview: %w", err)
		}
		_, err = w.Write(append(b, '\n'))
		return err
	default:
		return fmt.Errorf("unknown output format %q: use text, yaml or json", format)
	}
}

// HasWrites reports whether the manager would write any ManifestWork (create, update or delete).
func (r *PreviewResult) HasWrites() bool {
	for _, c := range r.Clusters {
		if c.Action == ActionCreate || c.Action == ActionUpdate || c.Action == ActionDelete {
			return true
		}
	}
	return false
}

// Counts are how many clusters get each action.
func (r *PreviewResult) Counts() map[PreviewAction]int {
	out := map[PreviewAction]int{}
	for _, c := range r.Clusters {
		out[c.Action]++
	}
	return out
}

func (r *PreviewResult) printText(w io.Writer) error {
	var b strings.Builder
	state := "not on the hub yet: created"
	switch {
	case r.Exists && r.SpecChanged:
		state = "on the hub: its spec changed"
	case r.Exists:
		state = "on the hub: its spec unchanged"
	}
	fmt.Fprintf(&b, "PlacementManifestWork %s/%s (%s)\n", r.Namespace, r.Name, state)
	fmt.Fprintf(&b, "%s\n", r.PlacementNote)
	if r.Invalid != nil {
		fmt.Fprintf(&b, "Invalid (%s): %s\n", r.Invalid.Reason, r.Invalid.Message)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "Note: %s\n", n)
	}
	counts := r.Counts()
	var parts []string
	for _, a := range []PreviewAction{ActionCreate, ActionUpdate, ActionDelete, ActionUnchanged, ActionHeld, ActionKept, ActionFailed, ActionConflict} {
		if counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", strings.ToLower(string(a)), counts[a]))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "nothing to write")
	}
	fmt.Fprintf(&b, "ManifestWorks: %s\n", strings.Join(parts, ", "))
	first := 0
	for _, c := range r.Clusters {
		if c.RolloutFirst {
			first++
		}
	}
	if (r.RolloutStrategy != string(clusterv1alpha1.All) && first > 0) || counts[ActionHeld] > 0 {
		fmt.Fprintf(&b, "Rollout %s: %s first (*), %d held\n", r.RolloutStrategy, text.Count(first, "cluster gets the new template", "clusters get the new template"), counts[ActionHeld])
	}
	if len(r.Clusters) > 0 {
		b.WriteString("\n")
		var table strings.Builder
		tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CLUSTER\tACTION\tSHARES\tOVERRIDES\tWHY")
		for _, c := range r.Clusters {
			action := string(c.Action)
			if c.RolloutFirst {
				action += " *"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Cluster, action, orNone(sharesText(c.Shares)), orNone(strings.Join(c.Overrides, ",")), c.Message)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n") {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
	for _, c := range r.Clusters {
		if c.Action == ActionUpdate && c.Diff != "" {
			b.WriteString("\n")
			b.WriteString(c.Diff)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sharesText is "<manifest> <field>=<share>" for each share, sorted.
func sharesText(shares map[string]int32) string {
	keys := make([]string, 0, len(shares))
	for k := range shares {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, shares[k])
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
