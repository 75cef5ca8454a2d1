// Package revision numbers the templates of a PlacementManifestWork: every distinct template-relevant spec is
// a revision kept as an apps/v1 ControllerRevision in the PlacementManifestWork's namespace, as StatefulSets
// and DaemonSets keep theirs. Plan decides, without I/O, which ControllerRevision to create, renumber, relabel
// and prune.
package revision

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/manifestwork"
)

// DefaultHistoryLimit is how many earlier revisions are kept when spec.revisionHistoryLimit is not set.
const DefaultHistoryLimit = 10

// maxNameLength is the longest name of an object (a DNS subdomain).
const maxNameLength = 253

// hashLength is how many hex characters of a SHA-256 end a ControllerRevision's name.
const hashLength = 10

// Data is what a revision records: the part of the spec that changes what clusters receive (the ManifestWork
// template, distributionStrategy, overrides, splitCompanions and propagateDependencies), as JSON of a
// PlacementManifestWorkSpec with only those fields, so it can be read back as a spec. Equal templates give
// equal bytes.
func Data(pmw *workv1alpha1.PlacementManifestWork) ([]byte, error) {
	b, err := json.Marshal(workv1alpha1.PlacementManifestWorkSpec{
		ManifestWorkTemplate:  pmw.Spec.ManifestWorkTemplate,
		DistributionStrategy:  pmw.Spec.DistributionStrategy,
		Overrides:             pmw.Spec.Overrides,
		SplitCompanions:       pmw.Spec.SplitCompanions,
		PropagateDependencies: pmw.Spec.PropagateDependencies,
	})
	if err != nil {
		return nil, fmt.Errorf("encoding the template of the revision: %w", err)
	}
	return b, nil
}

// WithTemplate is a copy of pmw whose template, the part of the spec Data records, is spec's: what a rollback
// delivers again. It sets exactly the fields Data reads (TestWithTemplateSetsWhatDataRecords holds the two
// lists together), and keeps the rest of pmw's spec.
func WithTemplate(pmw *workv1alpha1.PlacementManifestWork, spec *workv1alpha1.PlacementManifestWorkSpec) *workv1alpha1.PlacementManifestWork {
	out := pmw.DeepCopy()
	s := spec.DeepCopy()
	out.Spec.ManifestWorkTemplate = s.ManifestWorkTemplate
	out.Spec.DistributionStrategy = s.DistributionStrategy
	out.Spec.Overrides = s.Overrides
	out.Spec.SplitCompanions = s.SplitCompanions
	out.Spec.PropagateDependencies = s.PropagateDependencies
	return out
}

// Name is the name of the ControllerRevision of the template data of the PlacementManifestWork named owner:
// "<owner>-<hash>", the owner's name cut so the name stays within 253 characters. The hash covers the owner's
// full name too, so two long names that share their first 242 characters do not share revisions.
func Name(owner string, data []byte) string {
	h := sha256.New()
	h.Write([]byte(owner))
	h.Write([]byte{0})
	h.Write(data)
	prefix := strings.TrimRight(owner[:min(len(owner), maxNameLength-hashLength-1)], "-.")
	return prefix + "-" + hex.EncodeToString(h.Sum(nil))[:hashLength]
}

// HistoryLimit is spec.revisionHistoryLimit, or DefaultHistoryLimit when it is not set.
func HistoryLimit(pmw *workv1alpha1.PlacementManifestWork) int {
	if l := pmw.Spec.RevisionHistoryLimit; l != nil && *l >= 0 {
		return int(*l)
	}
	return DefaultHistoryLimit
}

// Desired is the current revision's template as the desired state sees it.
type Desired struct {
	// Data is the revision's data (see Data).
	Data []byte
	// TemplateHash is the template-hash annotation of the works that carry it and that no override selects.
	TemplateHash string
	// ClusterTemplateHashes are the template hashes of the works an override selects, any order.
	ClusterTemplateHashes []string
}

// Plan is what the ControllerRevisions of a PlacementManifestWork need.
type Plan struct {
	// Current is the revision of the current template after the plan's writes.
	Current workv1alpha1.RevisionReference
	// Create is the current revision's ControllerRevision when none exists yet.
	Create *appsv1.ControllerRevision
	// Update is the existing ControllerRevision of the current template with a new number, labels or
	// annotations (its data is immutable and unchanged); UpdateFrom is the object as it was, to patch from.
	Update, UpdateFrom *appsv1.ControllerRevision
	// Delete are the revisions pruned beyond the history limit, oldest first.
	Delete []*appsv1.ControllerRevision
	// Numbers are the numbers of the revisions kept, by name, after the plan's writes.
	Numbers map[string]int64
}

// Compute plans the ControllerRevisions of pmw from those it owns (existing) and its current template:
//   - a template none of them records gets a new ControllerRevision numbered 1 + the highest number known
//     (the existing revisions' and the ones the status names, which may be newer than what a lagging cache shows);
//   - a template an older revision records re-uses it, renumbered to the newest, as a StatefulSet's revisions
//     are; the current revision's template-hash label and annotation follow the works' hashes;
//   - the PMW's kubernetes.io/change-cause, when set, is copied onto the current revision;
//   - beyond the current revision and the completed one (status.completedRevision), only the newest
//     revisionHistoryLimit are kept: the older ones are deleted.
func Compute(pmw *workv1alpha1.PlacementManifestWork, existing []*appsv1.ControllerRevision, d Desired) Plan {
	owner := manifestwork.Owner(pmw)
	name := Name(owner.Name, d.Data)
	labels := map[string]string{
		workv1alpha1.LabelPlacementManifestWork: manifestwork.OwnerLabelValue(owner),
		workv1alpha1.LabelTemplateHash:          d.TemplateHash,
	}
	hashes := clusterHashes(d)

	var cur *appsv1.ControllerRevision
	var highest int64 // the highest number of any other revision
	for _, cr := range existing {
		if cr.Name == name {
			cur = cr
			continue
		}
		highest = max(highest, cr.Revision)
	}
	for _, ref := range []*workv1alpha1.RevisionReference{pmw.Status.CurrentRevision, pmw.Status.CompletedRevision} {
		if ref != nil && ref.Name != name {
			highest = max(highest, ref.Revision)
		}
	}

	p := Plan{Numbers: map[string]int64{}}
	if cur == nil {
		p.Create = &appsv1.ControllerRevision{
			TypeMeta: metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "ControllerRevision"},
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: owner.Namespace, Labels: labels,
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: workv1alpha1.GroupVersion.String(), Kind: "PlacementManifestWork",
					Name: pmw.Name, UID: pmw.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
				}},
			},
			Data:     runtime.RawExtension{Raw: d.Data},
			Revision: highest + 1,
		}
		if hashes != "" {
			p.Create.Annotations = map[string]string{workv1alpha1.AnnotationTemplateHashes: hashes}
		}
		if cause := pmw.Annotations[workv1alpha1.AnnotationChangeCause]; cause != "" {
			if p.Create.Annotations == nil {
				p.Create.Annotations = map[string]string{}
			}
			p.Create.Annotations[workv1alpha1.AnnotationChangeCause] = cause
		}
		p.Current = workv1alpha1.RevisionReference{Revision: p.Create.Revision, Name: name}
	} else {
		want := cur.DeepCopy()
		if want.Revision <= highest {
			want.Revision = highest + 1
		}
		if want.Labels == nil {
			want.Labels = map[string]string{}
		}
		for k, v := range labels {
			want.Labels[k] = v
		}
		if hashes != "" {
			if want.Annotations == nil {
				want.Annotations = map[string]string{}
			}
			want.Annotations[workv1alpha1.AnnotationTemplateHashes] = hashes
		} else {
			delete(want.Annotations, workv1alpha1.AnnotationTemplateHashes)
		}
		// A template that comes back takes the change cause of the spec that brought it back, when it has one.
		if cause := pmw.Annotations[workv1alpha1.AnnotationChangeCause]; cause != "" {
			if want.Annotations == nil {
				want.Annotations = map[string]string{}
			}
			want.Annotations[workv1alpha1.AnnotationChangeCause] = cause
		}
		if want.Revision != cur.Revision || !maps.Equal(want.Labels, cur.Labels) || !maps.Equal(want.Annotations, cur.Annotations) {
			p.Update, p.UpdateFrom = want, cur
		}
		p.Current = workv1alpha1.RevisionReference{Revision: want.Revision, Name: name}
	}
	p.Numbers[name] = p.Current.Revision

	completed := ""
	if pmw.Status.CompletedRevision != nil {
		completed = pmw.Status.CompletedRevision.Name
	}
	var history []*appsv1.ControllerRevision
	for _, cr := range existing {
		switch {
		case cr.Name == name || !cr.DeletionTimestamp.IsZero():
		case cr.Name == completed:
			p.Numbers[cr.Name] = cr.Revision
		default:
			history = append(history, cr)
		}
	}
	sort.Slice(history, func(i, j int) bool {
		if history[i].Revision != history[j].Revision {
			return history[i].Revision > history[j].Revision
		}
		return history[i].Name < history[j].Name
	})
	limit := min(HistoryLimit(pmw), len(history))
	for _, cr := range history[:limit] {
		p.Numbers[cr.Name] = cr.Revision
	}
	for i := len(history) - 1; i >= limit; i-- {
		p.Delete = append(p.Delete, history[i])
	}
	return p
}

// clusterHashes is the value of AnnotationTemplateHashes: the distinct hashes other than the base one, sorted
// and comma-separated; empty without overrides.
func clusterHashes(d Desired) string {
	seen := map[string]bool{d.TemplateHash: true}
	var out []string
	for _, h := range d.ClusterTemplateHashes {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// ByTemplateHash maps the template-hash annotation of a PlacementManifestWork's works to the number of the
// revision they carry, from its ControllerRevisions: by their LabelTemplateHash and AnnotationTemplateHashes.
// Where two revisions claim one hash (their templates differ only in what the works' hashes leave out, such as
// the split strategy), the newest wins.
func ByTemplateHash(revisions []appsv1.ControllerRevision) map[string]int64 {
	out := map[string]int64{}
	claim := func(h string, n int64) {
		if h != "" && out[h] < n {
			out[h] = n
		}
	}
	for i := range revisions {
		cr := &revisions[i]
		claim(cr.Labels[workv1alpha1.LabelTemplateHash], cr.Revision)
		if v := cr.Annotations[workv1alpha1.AnnotationTemplateHashes]; v != "" {
			for _, h := range strings.Split(v, ",") {
				claim(h, cr.Revision)
			}
		}
	}
	return out
}
