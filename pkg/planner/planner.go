// Package planner computes the ManifestWorks a PlacementManifestWork wants: one per decided cluster, with
// replicated manifests copied and split manifests carrying that cluster's share.
package planner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/split"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// maxListedClusters bounds how many clusters a SplitStatus names.
const maxListedClusters = 20

// DefaultMaxManifestBytes is OCM's default limit on the total size of a ManifestWork's manifests (its
// webhook and agent reject larger works).
const DefaultMaxManifestBytes = 500 * 1024

// Input is everything the plan depends on.
type Input struct {
	// Clusters are the decided clusters.
	Clusters []string
	// ClusterLabels are the labels of the decided ManagedClusters, for Weighted splits with clusterSelector.
	ClusterLabels map[string]map[string]string
	// Scores holds, per score source, the valid (present and not expired) score of each cluster.
	Scores map[workv1alpha1.ScoreSource]map[string]int32
	// Previous is, per cluster, the shares its current ManifestWork carries, keyed by SplitKey.
	Previous map[string]map[string]int32
	// FailedOver are decided clusters whose split shares the other clusters carry: they are left out of every
	// division and keep their previous shares.
	FailedOver map[string]bool
	// MaxManifestBytes bounds the total size of one ManifestWork's manifests; DefaultMaxManifestBytes when 0.
	MaxManifestBytes int
	// Kinds interprets the manifests' kinds: the fields a Split divides when its fieldPath is not set, the
	// feedback the agent reports, the fields the cluster keeps. nil: the built-in kinds only.
	Kinds *health.Interpreters
	// Overrides are the PlacementManifestWork's compiled spec.overrides (nil: none), applied after the split.
	Overrides *override.Set
	// ClusterFacts are the decided clusters' labels and claims, which the overrides select by and read; the
	// planner fills in each cluster's name and shares.
	ClusterFacts map[string]override.Cluster
	// Marks, when set, stamps the template marker (health.Mark) on the manifests it names.
	Marks *Marks
	// Dependencies, when set (spec.propagateDependencies), finds the dependencies of the manifests an override
	// changes for a cluster. The manifests Compute is given then end with the template's dependencies (those
	// marked Dependency), which every cluster whose overrides change no manifest carries.
	Dependencies DependencyFinder
}

// DependencyFinder finds which ConfigMaps, Secrets and ServiceAccounts a cluster's manifests reference once its
// overrides are applied (spec.propagateDependencies follows the manifests a cluster gets, not the template's).
type DependencyFinder interface {
	// Find returns the dependencies of manifests, the template's manifests (those not marked Dependency, in
	// order) for the cluster: each manifest an override changes as it leaves it, the others as given to
	// Compute. same is true when they are the template's dependencies, which the cluster then carries as
	// every other cluster does; otherwise deps are the ones its work carries after its manifests, in their
	// place, marked Dependency. An *InvalidError (a dependency missing on the hub, an interpreter that fails)
	// fails this cluster alone, as a failing override does: Compute records it in Plan.DependencyFailures and
	// keeps the cluster's work as it is. Any other error Compute returns.
	Find(cluster string, manifests []template.Manifest) (deps []template.Manifest, same bool, err error)
}

// Marks says which manifests carry the template marker (those health.Interpreters.Marked) and with what value
// on each cluster.
type Marks struct {
	// Indexes are the template indexes (template.Manifest.Index) of the marked manifests.
	Indexes map[int]bool
	// TemplateHash is the template hash of a cluster's work (workv1alpha1.AnnotationTemplateHash).
	TemplateHash func(cluster string) string
}

// Problem is something the user should fix, reported on the Distributed condition.
type Problem struct {
	Reason  string
	Message string
}

// Plan is the desired state.
type Plan struct {
	// Manifests holds, per decided cluster, the manifests of its ManifestWork.
	Manifests map[string][]workv1.Manifest
	// Shares holds, per decided cluster, its share of every split manifest, keyed by SplitKey.
	Shares map[string]map[string]int32
	// Splits describes each split manifest's division as planned.
	Splits []workv1alpha1.SplitStatus
	// SplitKeys holds the SplitKey of each entry of Splits.
	SplitKeys []string
	// Problems are entries that match no manifest or several, and unplaced replicas. They do not stop the plan.
	Problems []Problem
	// OverrideOutcomes holds, per decided cluster that an override selects, what each override that selects it
	// did (override.Render's outcomes), for override.Status.
	OverrideOutcomes map[string][]override.Outcome
	// OverrideFailures are the decided clusters where an override cannot be applied: they have no entry in
	// Manifests, so their ManifestWorks are kept as they are (a cluster without one gets none).
	OverrideFailures map[string]*override.ClusterError
	// DependencyFailures are the decided clusters whose dependencies cannot be found once their overrides are
	// applied (Input.Dependencies answered an *InvalidError: a dependency the overridden manifests name is
	// missing on the hub, an interpreter fails on them). As with OverrideFailures, they have no entry in
	// Manifests, so their ManifestWorks are kept as they are, and no OverrideOutcomes: their works carry none of
	// the overrides' changes. Clusters alike share one error. (The template's own dependencies missing is no
	// cluster's failure: the caller refuses the whole desired state.)
	DependencyFailures map[string]*InvalidError
	// Dependencies holds, per decided cluster whose overrides change which dependencies its manifests reference
	// (Input.Dependencies), the dependencies its work carries after the template's manifests in place of the
	// template's dependencies. Clusters alike share one slice: not to be modified.
	Dependencies map[string][]template.Manifest
}

// Kept reports whether the cluster's work is kept as it is because the cluster cannot get the current template:
// an override fails there (OverrideFailures), or the dependencies of its overridden manifests cannot be found
// (DependencyFailures).
func (p *Plan) Kept(cluster string) bool {
	return p.OverrideFailures[cluster] != nil || p.DependencyFailures[cluster] != nil
}

// InvalidError means no valid desired state exists: the works already delivered must be kept as they are.
type InvalidError struct {
	Reason  string
	Message string
}

func (e *InvalidError) Error() string { return e.Message }

// SplitKey identifies a split manifest and its field in a ManifestWork's shares annotation.
func SplitKey(m template.Manifest, fieldPath string) string {
	return m.ID() + " " + fieldPath
}

// ParseTemplate decodes the template's manifests; a manifest that is not an object is an InvalidError.
func ParseTemplate(pmw *workv1alpha1.PlacementManifestWork) ([]template.Manifest, error) {
	manifests, err := template.Parse(pmw.Spec.ManifestWorkTemplate.Workload.Manifests)
	if err != nil {
		return nil, &InvalidError{Reason: workv1alpha1.ReasonInvalidTemplate, Message: err.Error() + "; the ManifestWorks already delivered are kept"}
	}
	return manifests, nil
}

// Compute plans the ManifestWorks of pmw, whose template decodes to manifests, for the input's clusters.
func Compute(pmw *workv1alpha1.PlacementManifestWork, manifests []template.Manifest, in Input) (*Plan, error) {
	if err := invalidClusterSelectors(pmw.Spec.DistributionStrategy); err != nil {
		return nil, err
	}
	strategies, strategyProblems := template.MatchStrategies(manifests, pmw.Spec.DistributionStrategy)
	plan := &Plan{
		Manifests: map[string][]workv1.Manifest{},
		Shares:    map[string]map[string]int32{},
	}
	for _, p := range strategyProblems {
		plan.Problems = append(plan.Problems, Problem{Reason: p.Reason, Message: p.Message})
	}

	clusters := sortedUnique(in.Clusters)
	for _, c := range clusters {
		plan.Manifests[c] = make([]workv1.Manifest, 0, len(manifests))
	}
	splitFields := SplitFieldsByIndex(strategies, manifests, in.Kinds)
	var companions []override.Companion
	var copiedCompanions []override.CompanionProblem
	if pmw.Spec.SplitCompanions != workv1alpha1.SplitCompanionsCopy {
		companions, copiedCompanions = override.Companions(manifests, splitFields)
	}
	// split holds, per manifest position, each cluster's split object when the manifests differ per cluster
	// beyond their shares (companions, overrides); nil otherwise.
	var split []map[string]*unstructured.Unstructured
	if in.Overrides.Len() > 0 || len(companions) > 0 {
		split = make([]map[string]*unstructured.Unstructured, len(manifests))
	}
	for i, m := range manifests {
		s := strategies[m.Index]
		if s == nil || s.Type != workv1alpha1.DistributionSplit || s.Split == nil {
			raw, err := json.Marshal(m.Object.Object)
			if err != nil {
				return nil, &InvalidError{Reason: workv1alpha1.ReasonInvalidTemplate, Message: fmt.Sprintf("manifest %s: %v", m.ID(), err)}
			}
			for _, c := range clusters {
				plan.Manifests[c] = append(plan.Manifests[c], workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
			}
			continue
		}
		var objs map[string]*unstructured.Unstructured
		if split != nil {
			objs = make(map[string]*unstructured.Unstructured, len(clusters))
			split[i] = objs
		}
		if err := planSplit(plan, pmw, m, *s.Split, splitFields[m.Index], clusters, in, objs); err != nil {
			return nil, err
		}
	}
	if split != nil {
		if err := perCluster(plan, manifests, splitFields, split, companions, clusters, in); err != nil {
			return nil, err
		}
	}
	addCompanionStatus(plan, manifests, companions, copiedCompanions)
	if err := mark(plan, manifests, clusters, in.Marks); err != nil {
		return nil, err
	}
	if err := checkSize(plan, in.MaxManifestBytes); err != nil {
		return nil, err
	}
	return plan, nil
}

// mark stamps the template marker on the marked manifests of every cluster's work. Clusters share their
// manifests' encodings where they are alike, so a marked encoding is made once per encoding and hash: the cost
// follows the distinct manifests, not the clusters.
func mark(plan *Plan, manifests []template.Manifest, clusters []string, marks *Marks) error {
	if marks == nil || len(marks.Indexes) == 0 {
		return nil
	}
	type encoding struct {
		first *byte
		size  int
		hash  string
	}
	marked := map[encoding][]byte{}
	own := templateLen(manifests)
	for _, c := range clusters {
		ms, ok := plan.Manifests[c]
		if !ok {
			continue // an override failed here, or its dependencies cannot be found: nothing is written
		}
		hash := marks.TemplateHash(c)
		deps, ownDeps := plan.Dependencies[c]
		out := make([]workv1.Manifest, len(ms)) // the slice may be another cluster's too
		for i := range ms {
			out[i] = ms[i]
			m, ok := carried(manifests, own, deps, ownDeps, i)
			if !ok || !marks.Indexes[m.Index] || len(ms[i].Raw) == 0 {
				continue
			}
			key := encoding{first: &ms[i].Raw[0], size: len(ms[i].Raw), hash: hash}
			raw, ok := marked[key]
			if !ok {
				obj := map[string]any{}
				dec := json.NewDecoder(bytes.NewReader(ms[i].Raw))
				dec.UseNumber() // integers beyond float64's precision stay as they are
				if err := dec.Decode(&obj); err != nil {
					return &InvalidError{Reason: workv1alpha1.ReasonInvalidTemplate, Message: fmt.Sprintf("manifest %s: %v", m.ID(), err)}
				}
				var err error
				if raw, err = json.Marshal(health.Mark(obj, hash)); err != nil {
					return &InvalidError{Reason: workv1alpha1.ReasonInvalidTemplate, Message: fmt.Sprintf("manifest %s: %v", m.ID(), err)}
				}
				marked[key] = raw
			}
			out[i] = workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
		}
		plan.Manifests[c] = out
	}
	return nil
}

// templateLen is the number of the template's own manifests: those before the dependencies that
// spec.propagateDependencies appends (marked Dependency).
func templateLen(manifests []template.Manifest) int {
	for i, m := range manifests {
		if m.Dependency {
			return i
		}
	}
	return len(manifests)
}

// carried is the manifest at position i of a cluster's work: the template's own manifests (the first own of
// manifests), then the template's dependencies, or, when the cluster carries dependencies of its own (ownDeps,
// Plan.Dependencies), those.
func carried(manifests []template.Manifest, own int, deps []template.Manifest, ownDeps bool, i int) (template.Manifest, bool) {
	switch {
	case i < own || !ownDeps && i < len(manifests):
		return manifests[i], true
	case ownDeps && i-own < len(deps):
		return deps[i-own], true
	}
	return template.Manifest{}, false
}

// checkSize rejects a plan whose works would exceed the manifests size limit: OCM would refuse them, so the
// works already delivered are kept instead.
func checkSize(plan *Plan, limit int) error {
	if limit <= 0 {
		limit = DefaultMaxManifestBytes
	}
	for cluster, ms := range plan.Manifests {
		size := 0
		for _, m := range ms {
			// As OCM's webhook counts (its ValidateManifests): each manifest's protobuf size, a few bytes
			// above its JSON, so that a work the manager plans is one OCM admits.
			size += m.Size()
		}
		if size > limit {
			return &InvalidError{Reason: workv1alpha1.ReasonManifestWorkTooLarge,
				Message: fmt.Sprintf("the manifests of the ManifestWork for cluster %s take %d bytes, more than the limit of %d; the ManifestWorks already delivered are kept", cluster, size, limit)}
		}
	}
	return nil
}

// SplitFields are the fields a Split strategy divides in m: its fieldPath when set, else the fields the kind's
// interpreter names, else .spec.replicas. The first is the one status and health follow.
func SplitFields(spec workv1alpha1.SplitStrategy, m template.Manifest, kinds *health.Interpreters) []string {
	if spec.FieldPath != "" {
		return []string{spec.FieldPath}
	}
	if k := kinds.For(m.GVK); k != nil && len(k.ReplicaPaths()) > 0 {
		return k.ReplicaPaths()
	}
	return []string{workv1alpha1.DefaultSplitFieldPath}
}

// fieldSplit is the division of one field of a split manifest.
type fieldSplit struct {
	path     string
	key      string
	previous map[string]int32
	result   split.Result
	total    int32
}

// SplitFieldsByIndex holds, by manifest index, the split fields of each manifest a Split strategy matches
// (strategies as template.MatchStrategies gives them).
func SplitFieldsByIndex(strategies map[int]*workv1alpha1.DistributionStrategy, manifests []template.Manifest, kinds *health.Interpreters) map[int][]string {
	out := map[int][]string{}
	for _, m := range manifests {
		if s := strategies[m.Index]; s != nil && s.Type == workv1alpha1.DistributionSplit && s.Split != nil {
			out[m.Index] = SplitFields(*s.Split, m, kinds)
		}
	}
	return out
}

// TemplateSplitFields is SplitFieldsByIndex of a PlacementManifestWork's template, decoded to manifests.
func TemplateSplitFields(pmw *workv1alpha1.PlacementManifestWork, manifests []template.Manifest, kinds *health.Interpreters) map[int][]string {
	strategies, _ := template.MatchStrategies(manifests, pmw.Spec.DistributionStrategy)
	return SplitFieldsByIndex(strategies, manifests, kinds)
}

// planSplit divides m among the clusters; objs, when not nil, receives each cluster's split object.
func planSplit(plan *Plan, pmw *workv1alpha1.PlacementManifestWork, m template.Manifest, spec workv1alpha1.SplitStrategy, fieldPaths []string, clusters []string, in Input, objs map[string]*unstructured.Unstructured) error {
	active := clusters
	if len(in.FailedOver) > 0 {
		active = make([]string, 0, len(clusters))
		for _, c := range clusters {
			if !in.FailedOver[c] {
				active = append(active, c)
			}
		}
	}
	// Every field is divided with the same weights and limits: a RayCluster's head and workers go to the same
	// clusters in the same proportions.
	var fields []fieldSplit
	w := weights(spec, active, in)
	for _, fieldPath := range fieldPaths {
		total, err := template.IntField(m.Object, fieldPath)
		if err != nil {
			return &InvalidError{Reason: workv1alpha1.ReasonInvalidSplitField,
				Message: fmt.Sprintf("cannot split %s: %v; the ManifestWorks already delivered are kept", m.ID(), err)}
		}
		f := fieldSplit{path: fieldPath, key: SplitKey(m, fieldPath), previous: map[string]int32{}, total: total}
		for cluster, shares := range in.Previous {
			if v, ok := shares[f.key]; ok {
				f.previous[cluster] = v
			}
		}
		f.result = split.Divide(split.Input{
			Total:    total,
			Clusters: active,
			Weights:  w,
			Limits:   split.Limits{Min: limit(spec.LimitRange, true), Max: limit(spec.LimitRange, false)},
			Previous: f.previous,
			Seed:     string(pmw.UID) + "/" + f.key,
		})
		fields = append(fields, f)
	}
	keptOnFailedOver := make([]int32, len(fields))
	// Thousands of clusters share a handful of distinct shares: encode each combination's manifest once.
	byShares := map[string][]byte{}
	objOf := map[string]*unstructured.Unstructured{}
	shares := make([]int32, len(fields))
	for _, c := range clusters {
		for i, f := range fields {
			shares[i] = f.result.Shares[c]
			if in.FailedOver[c] {
				shares[i] = f.previous[c]
				keptOnFailedOver[i] += shares[i]
			}
		}
		combination := fmt.Sprint(shares)
		raw, ok := byShares[combination]
		if !ok {
			obj, err := revisedReplicas(m, shares[0], in.Kinds)
			if err != nil {
				return err
			}
			for i, f := range fields {
				if obj, err = template.SetIntField(obj, f.path, shares[i]); err != nil {
					return &InvalidError{Reason: workv1alpha1.ReasonInvalidSplitField, Message: fmt.Sprintf("cannot split %s: %v", m.ID(), err)}
				}
			}
			if raw, err = json.Marshal(obj.Object); err != nil {
				return &InvalidError{Reason: workv1alpha1.ReasonInvalidTemplate, Message: fmt.Sprintf("manifest %s: %v", m.ID(), err)}
			}
			byShares[combination], objOf[combination] = raw, obj
		}
		if objs != nil {
			objs[c] = objOf[combination]
		}
		plan.Manifests[c] = append(plan.Manifests[c], workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
		if plan.Shares[c] == nil {
			plan.Shares[c] = map[string]int32{}
		}
		for i, f := range fields {
			plan.Shares[c][f.key] = shares[i]
		}
	}
	for i, f := range fields {
		st := splitStatus(m, f.path, f.total, f.result.Shares)
		st.Placed, st.Unplaced = f.result.Placed, f.result.Unplaced
		st.FailedOver = keptOnFailedOver[i]
		plan.Splits = append(plan.Splits, st)
		plan.SplitKeys = append(plan.SplitKeys, f.key)
		if f.result.Unplaced > 0 {
			msg := fmt.Sprintf("%d of %d at %s of %s cannot be placed within limitRange.max on %d clusters",
				f.result.Unplaced, f.total, f.path, m.ID(), len(active))
			if lower := limit(spec.LimitRange, true); lower != nil && f.total < *lower {
				msg = fmt.Sprintf("%d at %s of %s is below limitRange.min %d, so no cluster gets a share: lower limitRange.min or raise the total",
					f.total, f.path, m.ID(), *lower)
			}
			plan.Problems = append(plan.Problems, Problem{Reason: workv1alpha1.ReasonReplicasUnplaced, Message: msg})
		}
	}
	return nil
}

// replicaReviser is an interpreter that sets a manifest's replicas itself (a ResourceInterpreter's webhook
// answering ReviseReplica): ok is false when it does not.
type replicaReviser interface {
	ReviseReplicas(m template.Manifest, replicas int32) (revised map[string]any, ok bool, err error)
}

// revisedReplicas is m with its replicas set to a cluster's share by its kind's interpreter, when that
// interpreter does so; m's object otherwise (the split fields are set on it after). Its failure is an
// InvalidError: the works already delivered are kept.
func revisedReplicas(m template.Manifest, share int32, kinds *health.Interpreters) (*unstructured.Unstructured, error) {
	r, ok := kinds.For(m.GVK).(replicaReviser)
	if !ok {
		return m.Object, nil
	}
	revised, ok, err := r.ReviseReplicas(m, share)
	switch {
	case err != nil:
		return nil, &InvalidError{Reason: workv1alpha1.ReasonInterpreterFailed,
			Message: fmt.Sprintf("cannot split %s: %v; the ManifestWorks already delivered are kept", m.ID(), err)}
	case !ok:
		return m.Object, nil
	}
	return &unstructured.Unstructured{Object: revised}, nil
}

// weights returns nil for Balance (equal weights), and each cluster's weight for Weighted and Score splits.
func weights(spec workv1alpha1.SplitStrategy, clusters []string, in Input) map[string]int64 {
	switch spec.Type {
	case workv1alpha1.SplitWeighted:
		return weightedWeights(spec.Weights, clusters, in.ClusterLabels)
	case workv1alpha1.SplitScore:
		if spec.Score == nil {
			return nil
		}
		return ScoreWeights(in.Scores[*spec.Score], clusters)
	default:
		return nil
	}
}

// invalidClusterSelectors is an InvalidError (ReasonInvalidSpec) naming each weights[].clusterSelector that does
// not parse as a label selector: the CRD refuses the operators and values it can check, but a selector stored
// before it did, or a key or value that is not a label's, would otherwise select no cluster and weigh 0 silently.
func invalidClusterSelectors(strategies []workv1alpha1.DistributionStrategy) error {
	var problems []string
	for i, s := range strategies {
		if s.Split == nil {
			continue
		}
		for j, w := range s.Split.Weights {
			if w.ClusterSelector == nil {
				continue
			}
			if _, err := metav1.LabelSelectorAsSelector(w.ClusterSelector); err != nil {
				problems = append(problems, fmt.Sprintf("spec.distributionStrategy[%d].split.weights[%d].clusterSelector: %v", i, j, err))
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return &InvalidError{Reason: workv1alpha1.ReasonInvalidSpec, Message: fmt.Sprintf(
		"A cluster selector is not a valid label selector: %s; fix it. Nothing is written and the ManifestWorks already delivered are kept",
		strings.Join(problems, "; "))}
}

// weightedWeights gives each cluster the weight of the first entry that matches it, and 0 when none does.
// Compute has refused a selector that does not parse (invalidClusterSelectors).
func weightedWeights(entries []workv1alpha1.ClusterWeight, clusters []string, clusterLabels map[string]map[string]string) map[string]int64 {
	selectors := make([]labels.Selector, len(entries))
	for i, e := range entries {
		if e.ClusterSelector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(e.ClusterSelector)
		if err != nil {
			sel = labels.Nothing()
		}
		selectors[i] = sel
	}
	out := make(map[string]int64, len(clusters))
	for _, c := range clusters {
		out[c] = 0
		for i, e := range entries {
			if (e.ClusterName != "" && e.ClusterName == c) ||
				(selectors[i] != nil && selectors[i].Matches(labels.Set(clusterLabels[c]))) {
				out[c] = int64(e.Weight)
				break
			}
		}
	}
	return out
}

// ScoreWeights turns AddOnPlacementScore values (-100 to 100) into weights: a score's weight is the score
// itself, negative scores weigh 0, and a cluster with no valid score (missing or expired) weighs 0. When no
// cluster has a positive weight the split falls back to Balance.
func ScoreWeights(scores map[string]int32, clusters []string) map[string]int64 {
	out := make(map[string]int64, len(clusters))
	for _, c := range clusters {
		if s, ok := scores[c]; ok && s > 0 {
			out[c] = int64(s)
		} else {
			out[c] = 0
		}
	}
	return out
}

func limit(r *workv1alpha1.LimitRange, lower bool) *int32 {
	if r == nil {
		return nil
	}
	if lower {
		return r.Min
	}
	return r.Max
}

// DeliveredSplits describes each split of the plan as the works deliver it after this reconcile: a cluster
// that a rollout holds on an earlier template, or whose write failed, counts with the share its work carries
// (0 without a work), and the failed-over clusters' shares count as failedOver, not placed. unplaced stays the
// plan's: what no cluster can take.
func DeliveredSplits(plan *Plan, delivered map[string]map[string]int32, clusters []string, failedOver map[string]bool) []workv1alpha1.SplitStatus {
	if len(plan.Splits) == 0 {
		return nil
	}
	out := make([]workv1alpha1.SplitStatus, len(plan.Splits))
	for i, planned := range plan.Splits {
		key := plan.SplitKeys[i]
		shares := make(map[string]int32, len(clusters))
		var placed, kept int32
		for _, c := range clusters {
			v := delivered[c][key]
			if failedOver[c] {
				kept += v
				continue
			}
			shares[c] = v
			placed += v
		}
		st := splitStatusOf(planned, shares)
		st.Placed, st.Unplaced, st.FailedOver = placed, planned.Unplaced, kept
		out[i] = st
	}
	return out
}

func splitStatus(m template.Manifest, fieldPath string, total int32, shares map[string]int32) workv1alpha1.SplitStatus {
	return splitStatusOf(workv1alpha1.SplitStatus{
		Name:      m.Object.GetName(),
		Namespace: m.Object.GetNamespace(),
		Group:     m.GVK.Group,
		Kind:      m.GVK.Kind,
		FieldPath: fieldPath,
		Total:     total,
	}, shares)
}

// splitStatusOf fills the share counts and the clusters of uncommon shares into a SplitStatus that names its
// manifest, field and total.
func splitStatusOf(id workv1alpha1.SplitStatus, shares map[string]int32) workv1alpha1.SplitStatus {
	st := workv1alpha1.SplitStatus{Name: id.Name, Namespace: id.Namespace, Group: id.Group, Kind: id.Kind, FieldPath: id.FieldPath, Total: id.Total,
		Companions: id.Companions}
	counts := map[int32]int32{}
	for _, v := range shares {
		counts[v]++
	}
	var mode int32
	var modeCount int32 = -1
	for share, n := range counts {
		st.Shares = append(st.Shares, workv1alpha1.ShareCount{Share: share, Clusters: n})
		if n > modeCount || (n == modeCount && share > mode) {
			mode, modeCount = share, n
		}
	}
	sort.Slice(st.Shares, func(i, j int) bool { return st.Shares[i].Share > st.Shares[j].Share })
	names := make([]string, 0, len(shares))
	for c, v := range shares {
		if v != mode {
			names = append(names, c)
		}
	}
	sort.Strings(names)
	for _, c := range names {
		if len(st.Clusters) == maxListedClusters {
			st.ClustersNotListed = int32(len(names) - maxListedClusters)
			break
		}
		st.Clusters = append(st.Clusters, workv1alpha1.ClusterShare{Cluster: c, Share: shares[c]})
	}
	return st
}

func sortedUnique(in []string) []string {
	seen := make(map[string]struct{}, len(in))
	out := make([]string, 0, len(in))
	for _, s := range in {
		if _, ok := seen[s]; ok || s == "" {
			continue
		}
		seen[s] = struct{}{}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// perCluster applies, after the split, what makes the manifests differ per cluster beyond their shares: the
// companions' apportioned counts, then the overrides (override.Render). split holds, per manifest position,
// each cluster's split object (nil for a replicated manifest). Clusters with the same shares and the same
// override.Resolved key get the same result, which is rendered and encoded once: the cost follows the number of
// distinct results, not the number of clusters or overrides. A cluster where an override fails gets no
// manifests (its work is kept as it is) and is recorded in OverrideFailures. When an override changes one of the
// template's manifests and in.Dependencies is set, the dependencies follow the manifests as overridden: a
// cluster whose manifests reference other dependencies than the template's carries those instead
// (Plan.Dependencies), with the overrides that select them applied; one whose dependencies cannot be found
// gets no manifests either and is recorded in DependencyFailures.
func perCluster(plan *Plan, manifests []template.Manifest, splitFields map[int][]string, split []map[string]*unstructured.Unstructured,
	companions []override.Companion, clusters []string, in Input) error {
	apportioned := make(map[int]override.Companion, len(companions))
	totals := map[int]int32{}
	for _, c := range companions {
		apportioned[c.Index] = c
		pos := position(manifests, c.Workload)
		total, err := template.IntField(manifests[pos].Object, workv1alpha1.DefaultSplitFieldPath)
		if err != nil {
			return &InvalidError{Reason: workv1alpha1.ReasonInvalidSplitField, Message: fmt.Sprintf("cannot split %s: %v", manifests[pos].ID(), err)}
		}
		totals[c.Workload] = total
	}
	own := templateLen(manifests)

	type result struct {
		manifests []workv1.Manifest
		// deps are the cluster's own dependencies (Plan.Dependencies), when ownDeps.
		deps     []template.Manifest
		ownDeps  bool
		outcomes []override.Outcome
		failures []override.Failure
		// depFailure is why the dependencies of its overridden manifests cannot be found (DependencyFailures).
		depFailure *InvalidError
	}
	results := map[string]*result{}
	// depEncodings are the encodings of the dependencies clusters carry of their own, unchanged by overrides:
	// one per object, however many results carry it.
	depEncodings := map[*unstructured.Unstructured][]byte{}
	var key strings.Builder
	for _, c := range clusters {
		facts := in.ClusterFacts[c]
		facts.Name, facts.Shares = c, plan.Shares[c]
		resolved := in.Overrides.Resolve(facts)
		if resolved.Key() == "" && len(companions) == 0 {
			continue // the split's manifests as they are
		}
		key.Reset()
		for _, k := range plan.SplitKeys {
			key.WriteString(strconv.Itoa(int(plan.Shares[c][k])))
			key.WriteByte(',')
		}
		key.WriteByte(0)
		key.WriteString(resolved.Key())
		res, ok := results[key.String()]
		if !ok {
			res = &result{}
			results[key.String()] = res
			// The manifests as the split left them for this cluster, companions apportioned.
			given := make([]template.Manifest, len(manifests))
			for i, m := range manifests {
				given[i] = m
				if split[i] != nil {
					given[i].Object = split[i][c]
				}
				if comp, ok := apportioned[m.Index]; ok {
					share := plan.Shares[c][SplitKey(manifests[position(manifests, comp.Workload)], workv1alpha1.DefaultSplitFieldPath)]
					obj, err := override.Apportion(given[i].Object, share, totals[comp.Workload])
					if err != nil {
						return &InvalidError{Reason: workv1alpha1.ReasonInvalidTemplate,
							Message: fmt.Sprintf("cannot apportion %s to the split of its workload: %v; fix it or set spec.splitCompanions to Copy", m.ID(), err)}
					}
					given[i].Object = obj
				}
			}
			rendered, outcomes, err := resolved.Render(given[:own], splitFields)
			deps := given[own:]
			if err == nil && in.Dependencies != nil {
				found, same, ferr := findDependencies(in.Dependencies, c, manifests[:own], given[:own], rendered)
				switch {
				case errors.As(ferr, &res.depFailure):
					// This cluster's (and those alike) alone: the others are served.
				case ferr != nil:
					return ferr
				case !same:
					deps, res.deps, res.ownDeps = found, found, true
				}
			}
			if len(deps) > 0 && res.depFailure == nil {
				renderedDeps, depOutcomes, depErr := resolved.Render(deps, splitFields)
				outcomes, err = mergeRender(outcomes, err, depOutcomes, depErr)
				rendered = append(rendered, renderedDeps...)
			}
			res.outcomes = outcomes
			var ce *override.ClusterError
			switch {
			case res.depFailure != nil:
				res.outcomes = nil // its work keeps what it carries: none of the overrides' changes
			case errors.As(err, &ce):
				res.failures = ce.Failures
			case err != nil:
				return err
			default:
				res.manifests = make([]workv1.Manifest, len(rendered))
				for i, r := range rendered {
					var raw []byte
					switch {
					case i >= own && res.ownDeps:
						if r.Object == deps[i-own].Object {
							raw = depEncodings[r.Object]
						}
					case r.Object == manifests[i].Object || (split[i] != nil && r.Object == split[i][c]):
						res.manifests[i] = plan.Manifests[c][i] // unchanged: the split's encoding
						continue
					}
					if raw == nil {
						var err error
						if raw, err = json.Marshal(r.Object.Object); err != nil {
							return &InvalidError{Reason: workv1alpha1.ReasonInvalidTemplate, Message: fmt.Sprintf("manifest %s: %v", r.ID(), err)}
						}
						if i >= own && res.ownDeps && r.Object == deps[i-own].Object {
							depEncodings[r.Object] = raw
						}
					}
					res.manifests[i] = workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
				}
			}
		}
		if len(res.outcomes) > 0 {
			if plan.OverrideOutcomes == nil {
				plan.OverrideOutcomes = map[string][]override.Outcome{}
			}
			plan.OverrideOutcomes[c] = res.outcomes
		}
		if len(res.failures) > 0 {
			if plan.OverrideFailures == nil {
				plan.OverrideFailures = map[string]*override.ClusterError{}
			}
			failures := make([]override.Failure, len(res.failures))
			for i, f := range res.failures {
				f.Cluster = c
				failures[i] = f
			}
			plan.OverrideFailures[c] = &override.ClusterError{Cluster: c, Failures: failures}
			delete(plan.Manifests, c)
			continue
		}
		if res.depFailure != nil {
			if plan.DependencyFailures == nil {
				plan.DependencyFailures = map[string]*InvalidError{}
			}
			plan.DependencyFailures[c] = res.depFailure
			delete(plan.Manifests, c)
			continue
		}
		plan.Manifests[c] = res.manifests
		if res.ownDeps {
			if plan.Dependencies == nil {
				plan.Dependencies = map[string][]template.Manifest{}
			}
			plan.Dependencies[c] = res.deps
		}
	}
	return nil
}

// findDependencies asks the finder for the dependencies of a cluster's manifests when an override changed one of
// them (rendered against given, the manifests before the overrides): each changed manifest as the overrides
// leave it, the others as in the template (templ), whatever the split made of them, so that clusters whose
// overrides change the same manifests alike ask the same question. same without asking when no override
// changed a manifest.
func findDependencies(f DependencyFinder, cluster string, templ, given, rendered []template.Manifest) ([]template.Manifest, bool, error) {
	var view []template.Manifest
	for i := range rendered {
		if rendered[i].Object == given[i].Object {
			continue
		}
		if view == nil {
			view = make([]template.Manifest, len(templ))
			copy(view, templ)
		}
		view[i] = rendered[i]
	}
	if view == nil {
		return nil, true, nil
	}
	return f.Find(cluster, view)
}

// mergeRender combines what override.Resolved.Render returned for a cluster's manifests and, rendered apart,
// for its dependencies, as one Render of both would have: the changes counted per override, the first failure
// of each kept, every failure reported once (an expression that failed, once for all manifests).
func mergeRender(outcomes []override.Outcome, err error, more []override.Outcome, moreErr error) ([]override.Outcome, error) {
	for i := range outcomes {
		if i >= len(more) {
			break
		}
		outcomes[i].Changed += more[i].Changed
		if outcomes[i].Failure == nil {
			outcomes[i].Failure = more[i].Failure
		}
	}
	if moreErr == nil {
		return outcomes, err
	}
	var a, b *override.ClusterError
	if !errors.As(moreErr, &b) {
		return outcomes, moreErr
	}
	if err == nil {
		return outcomes, moreErr
	}
	if !errors.As(err, &a) {
		return outcomes, err
	}
	failures := slices.Clone(a.Failures)
	for _, f := range b.Failures {
		if f.Manifest != "" || !slices.Contains(failures, f) {
			failures = append(failures, f)
		}
	}
	return outcomes, &override.ClusterError{Cluster: a.Cluster, Failures: failures}
}

// position is the position in manifests of the manifest with the given index.
func position(manifests []template.Manifest, index int) int {
	for i, m := range manifests {
		if m.Index == index {
			return i
		}
	}
	return -1
}

// addCompanionStatus names, on the split status of each workload's replicas, the companions apportioned by it
// and the fields that change, and the would-be companions delivered unchanged (a PodDisruptionBudget over the
// pods of several workloads) with why.
func addCompanionStatus(plan *Plan, manifests []template.Manifest, companions []override.Companion, copied []override.CompanionProblem) {
	add := func(workload int, c workv1alpha1.SplitCompanion) {
		key := SplitKey(manifests[position(manifests, workload)], workv1alpha1.DefaultSplitFieldPath)
		for i := range plan.Splits {
			if plan.SplitKeys[i] == key {
				plan.Splits[i].Companions = append(plan.Splits[i].Companions, c)
			}
		}
	}
	for _, c := range companions {
		m := manifests[position(manifests, c.Index)]
		add(c.Workload, workv1alpha1.SplitCompanion{Kind: c.Kind, Name: m.Object.GetName(), Fields: override.ApportionedFields(m.Object)})
	}
	for _, p := range copied {
		m := manifests[position(manifests, p.Index)]
		for _, w := range p.Workloads {
			add(w, workv1alpha1.SplitCompanion{Kind: override.KindPodDisruptionBudget, Name: m.Object.GetName(), Message: interpreter.Truncate(p.Message)})
		}
	}
}
