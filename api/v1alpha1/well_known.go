package v1alpha1

import (
	"strconv"
	"strings"
)

// The finalizer, label and annotations the manager puts on objects are a contract: users select ManifestWorks
// by the label (kubectl get manifestwork -l ...), and tools read the annotations. They live here, next to the
// condition reasons, as OCM keeps its own in its API.
const (
	// Finalizer keeps a PlacementManifestWork until its ManifestWorks are gone.
	Finalizer = "work.open-cluster-management.io/placementmanifestwork-cleanup"

	// LabelPlacementManifestWork is on every ManifestWork a PlacementManifestWork writes. Its value is
	// "<namespace>.<name>" of the PlacementManifestWork, or a prefix of it and a hash when that is not a valid
	// label value, so one label selector lists all of its works.
	LabelPlacementManifestWork = "work.open-cluster-management.io/placementmanifestwork"

	// AnnotationOwner holds "<namespace>/<name>" of the owning PlacementManifestWork: label values are too short
	// to hold every name, and ManifestWorks live in other namespaces, so no ownerReference can point at it.
	AnnotationOwner = "work.open-cluster-management.io/placementmanifestwork-owner"
	// AnnotationOwnerUID holds the owner's UID. A work is owned only when this matches, so a label alone,
	// which anyone can guess, never makes a ManifestWork the manager's.
	AnnotationOwnerUID = "work.open-cluster-management.io/placementmanifestwork-uid"
	// AnnotationSpecHash is a hash of the spec the manager last wrote; an equal hash means nothing to write.
	AnnotationSpecHash = "work.open-cluster-management.io/placementmanifestwork-spec-hash"
	// AnnotationTemplateHash is a hash of the template the work carries, without the cluster's split shares:
	// equal on every cluster that runs the current template. A rollout strategy governs changes of it; a change
	// of the shares alone (a cluster joined, left or failed over) reaches every cluster at once. The manager also
	// stamps it on each manifest it judges by the agent's reads of the object (the template marker, see
	// pkg/health), so a report read before the agent applied the work's template is told apart.
	AnnotationTemplateHash = "work.open-cluster-management.io/placementmanifestwork-template-hash"
	// AnnotationShares records the split shares a ManifestWork carries, as JSON keyed by "<manifest> <field
	// path>". The manager does not trust it (a work agent may edit its own work): it keeps its own record.
	AnnotationShares = "work.open-cluster-management.io/placementmanifestwork-shares"
	// LabelTemplateHash is on every ControllerRevision of a PlacementManifestWork (beside
	// LabelPlacementManifestWork): the AnnotationTemplateHash value of the works that carry that revision when
	// no override selects them, so a work's annotation finds its revision by label. It is kept up to date on
	// the current revision only.
	LabelTemplateHash = "work.open-cluster-management.io/placementmanifestwork-template-hash"
	// AnnotationTemplateHashes is on a ControllerRevision whose template has overrides: the AnnotationTemplateHash
	// values, comma-separated and sorted, of the works an override selects (those differ per cluster), as they
	// were while it was the current revision.
	AnnotationTemplateHashes = "work.open-cluster-management.io/placementmanifestwork-template-hashes"

	// AnnotationUpdatedAt is when the manager last changed the work's template: the start of that cluster's
	// rollout step, from which progressDeadline is counted.
	AnnotationUpdatedAt = "work.open-cluster-management.io/placementmanifestwork-updated-at"

	// AnnotationRetryRevision, on a PlacementManifestWork, asks the manager to roll its failed revision out
	// again (kubectl pmw rollout retry sets it): its value is the revision's number, so a retry applies to
	// status.failedRevision only when the numbers match, and once (status.retriedRevision).
	AnnotationRetryRevision = "work.open-cluster-management.io/retry-revision"

	// AnnotationApprove, on a PlacementManifestWork, approves rollout gates (spec.rolloutGates): a
	// comma-separated list of "<revision>/<gate>", such as "4/canary". An entry approves the gate for that
	// revision number only, so an approval left from an earlier revision does not approve a new one. kubectl
	// pmw rollout approve adds the entry.
	AnnotationApprove = "work.open-cluster-management.io/approve"

	// AnnotationChangeCause is Kubernetes' annotation for why an object changed. The manager copies a
	// PlacementManifestWork's onto the revision its template makes (kubectl pmw rollout history shows it), as
	// a Deployment's is copied onto its ReplicaSets.
	AnnotationChangeCause = "kubernetes.io/change-cause"
)

// ParseApprovals reads the value of AnnotationApprove: its "<revision>/<gate>" entries, comma-separated, in
// order. Entries that do not parse are left out (kubectl pmw rollout approve writes well-formed ones).
func ParseApprovals(value string) []RolloutApproval {
	var out []RolloutApproval
	for _, entry := range strings.Split(value, ",") {
		rev, gate, ok := strings.Cut(strings.TrimSpace(entry), "/")
		n, err := strconv.ParseInt(rev, 10, 64)
		if !ok || err != nil || n < 0 || gate == "" {
			continue
		}
		out = append(out, RolloutApproval{Revision: n, Gate: gate})
	}
	return out
}

// FormatApprovals is the value of AnnotationApprove for approvals, as ParseApprovals reads it.
func FormatApprovals(approvals []RolloutApproval) string {
	entries := make([]string, len(approvals))
	for i, a := range approvals {
		entries[i] = strconv.FormatInt(a.Revision, 10) + "/" + a.Gate
	}
	return strings.Join(entries, ",")
}
