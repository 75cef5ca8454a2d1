package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/controllers"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/envhub"
	"github.com/open-cluster-management-io/placement-manifestwork/internal/parallel"
)

// The property: whatever the API server admits into a PlacementManifestWork, the manager can decode. One
// undecodable object makes the typed informer's LIST fail, and then no PlacementManifestWork on the hub is
// reconciled. Rather than a few hand-picked cases, the test walks the CRD's schema to every leaf of spec and
// status, writes adversarial values of the leaf's type (and of wrong types) into an object that is otherwise
// valid, and decodes every object the API server admits: the write's response, strictly (the types without
// their tolerant UnmarshalJSON, so the schema alone must keep undecodable values out) and with the manager's
// scheme; for stored objects (one per spec leaf, one per status leaf) also a typed Get, and at the end a typed
// List of them all. It fails when the walk finds fewer leaves than today's schema has, when a leaf is missing
// from the base object, or when too few values are admitted or refused to mean anything.
var _ = Describe("PlacementManifestWork schema", func() {
	It("admits nothing the manager cannot decode, at any leaf of spec or status", func() {
		ctx := context.Background()
		ns := fw.NewNamespace("schema")
		s := pmwSchema.walk()
		// A walk that finds little tests little: these are the counts of today's schema, less some slack.
		s.expectLeaves(60, 45)
		Expect(s.skipped).To(ConsistOf("spec.manifestWorkTemplate.workload.manifests[]", "spec.overrides[].patches[].value"),
			"only the raw manifests and the overrides' JSON values are skipped")
		// Every leaf must exist in the base objects, or its values would land in a context that is invalid for
		// other reasons and test nothing.
		Expect(pmwSchema.uncovered(s)).To(BeEmpty(), "add these leaves to schemaBaseSpec or schemaBaseStatus in schema_test.go")

		t := pmwSchema.exercise(ctx, ns, s)
		Expect(t.problems).To(BeEmpty(), "objects the API server admits must decode with the manager's scheme:\n%s", t.describe())
		t.expectEnough(1000, 1000, 100)

		By("deleting")
		Expect(k8s.DeleteAllOf(ctx, &workv1alpha1.PlacementManifestWork{}, client.InNamespace(ns))).To(Succeed())
		list := &workv1alpha1.PlacementManifestWorkList{}
		Eventually(func(g Gomega) {
			g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			g.Expect(list.Items).To(BeEmpty())
		}, 2*timeout, interval).Should(Succeed())
	})
})

// pmwSchema is the PlacementManifestWork for the schema property: decoded with the manager's scheme, strictly
// (strictPMW) and with no DecodeProblems.
var pmwSchema = schemaResource{
	gv: workv1alpha1.GroupVersion, kind: "PlacementManifestWork", resource: "placementmanifestworks",
	crdFile: "work.open-cluster-management.io_placementmanifestworks.yaml",
	scheme:  controllers.Scheme, readBy: "the manager",
	baseSpec: schemaBaseSpec, baseStatus: schemaBaseStatus, values: adversarialValues,
	newObject: func() client.Object { return &workv1alpha1.PlacementManifestWork{} },
	newList:   func() client.ObjectList { return &workv1alpha1.PlacementManifestWorkList{} },
	// The schema alone must make it decodable: spec and status decoded without their tolerant UnmarshalJSON,
	// as a manager without it, or any other typed client, would.
	strict: func(raw []byte) error { return utiljson.Unmarshal(raw, &strictPMW{}) },
	problems: func(obj client.Object) []string {
		return obj.(*workv1alpha1.PlacementManifestWork).Spec.DecodeProblems()
	},
	problemsAre: "decoded with problems",
}

// strictPMW decodes spec and status with their fields' own decoding only, not the tolerant UnmarshalJSON.
type strictPMW struct {
	Spec   strictSpec   `json:"spec"`
	Status strictStatus `json:"status"`
}

type (
	strictSpec   workv1alpha1.PlacementManifestWorkSpec
	strictStatus workv1alpha1.PlacementManifestWorkStatus
)

// The values the schema refuses so that the manager can decode what it admits, each with a message that
// names the field and the accepted form; docs/bad-input.md lists them with these entries.
var _ = Describe("PlacementManifestWork schema messages", func() {
	DescribeTable("refuses what the manager could not decode, saying what is accepted",
		func(spec, message string) {
			expectRefused(k8s, "messages", `{"apiVersion":"work.open-cluster-management.io/v1alpha1","kind":"PlacementManifestWork",`+
				`"metadata":{"name":"x"},"spec":{"placementRef":{"name":"p"},"manifestWorkTemplate":{"workload":{"manifests":[`+
				`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}]}}}}`, spec, message)
		},
		Entry("a day in moveStrategy.timeout", `{"moveStrategy":{"timeout":"1d"}}`,
			`spec.moveStrategy.timeout: Invalid value: "1d": moveStrategy.timeout must be a non-negative duration such as 30s, 5m or 1h30m (units h, m, s and ms, largest first; days are not supported)`),
		Entry("a negative failover.gracePeriod", `{"failover":{"gracePeriod":"-1s"}}`,
			"failover.gracePeriod must be a non-negative duration"),
		Entry("an empty failover.recoveryPeriod", `{"failover":{"recoveryPeriod":""}}`,
			"failover.recoveryPeriod must be a non-negative duration"),
		Entry("an overflowing duration", `{"moveStrategy":{"timeout":"9999999h"}}`,
			"moveStrategy.timeout must be a non-negative duration"),
		Entry("a day in rolloutStrategy minSuccessTime", `{"rolloutStrategy":{"type":"Progressive","progressive":{"minSuccessTime":"1d"}}}`,
			"spec.rolloutStrategy.progressive.minSuccessTime: Invalid value: rolloutStrategy.progressive.minSuccessTime must be a non-negative duration"),
		Entry("a progressDeadline sdk-go cannot parse", `{"rolloutStrategy":{"type":"All","all":{"progressDeadline":"5sx"}}}`,
			"rolloutStrategy.all.progressDeadline must be None or a duration in whole hours, minutes and seconds, largest first, such as 90s, 10m or 1h30m"),
		Entry("a maxFailures beyond int32", `{"rolloutStrategy":{"type":"ProgressivePerGroup","progressivePerGroup":{"maxFailures":2147483648}}}`,
			"rolloutStrategy.progressivePerGroup.maxFailures must be a whole number of clusters from 0 to 2147483647, unquoted, or a percentage from 0% to 100%"),
		Entry("a quoted maxConcurrency", `{"rolloutStrategy":{"type":"Progressive","progressive":{"maxConcurrency":"5"}}}`,
			"rolloutStrategy.progressive.maxConcurrency must be a whole number of clusters from 0 to 2147483647, unquoted, or a percentage"),
		Entry("a groupIndex beyond int32", `{"rolloutStrategy":{"type":"Progressive","progressive":{"mandatoryDecisionGroups":[{"groupIndex":2147483648}]}}}`,
			"rolloutStrategy.progressive.mandatoryDecisionGroups[].groupIndex must be from 0 to 2147483647"),
		Entry("a rollout gate without a strategy", `{"rolloutGates":[{"name":"canary","afterClusters":1}]}`,
			"rolloutGates need rolloutStrategy.type Progressive or ProgressivePerGroup"),
		Entry("a rollout gate under the All strategy", `{"rolloutStrategy":{"type":"All"},"rolloutGates":[{"name":"canary","afterGroup":"canary"}]}`,
			"rolloutGates need rolloutStrategy.type Progressive or ProgressivePerGroup"),
		Entry("a rollout gate with both afterClusters and afterGroup", `{"rolloutStrategy":{"type":"Progressive"},"rolloutGates":[{"name":"g","afterClusters":1,"afterGroup":"a"}]}`,
			"a rollout gate sets exactly one of afterClusters and afterGroup"),
		Entry("a negative disruption budget", `{"disruptionBudget":{"maxUnavailableReplicas":-1}}`,
			"disruptionBudget.maxUnavailableReplicas must be a whole number of replicas from 0 to 2147483647, unquoted, or a percentage from 0% to 100%"),
		Entry("a quoted disruption budget", `{"disruptionBudget":{"maxUnavailableReplicas":"2"}}`,
			"disruptionBudget.maxUnavailableReplicas must be a whole number of replicas"),
		Entry("a rollout gate whose name is not a DNS label", `{"rolloutStrategy":{"type":"Progressive"},"rolloutGates":[{"name":"Canary/1","afterClusters":1}]}`,
			"spec.rolloutGates[0].name in body should match"),
		Entry("a limitRange beyond int32", `{"distributionStrategy":[{"name":"c","namespace":"default","type":"Split","split":{"limitRange":{"max":2147483648}}}]}`,
			"spec.distributionStrategy[0].split.limitRange.max in body should be less than or equal to 2147483647"),
	)
})

// expectRefused creates, with dryRun and in a new namespace, the object whose JSON is base with the fields of
// the JSON object spec set in its spec, and expects the API server to refuse it as invalid, saying message.
func expectRefused(c client.Client, nsPrefix, base, spec, message string) {
	obj := &unstructured.Unstructured{}
	Expect(json.Unmarshal([]byte(base), &obj.Object)).To(Succeed())
	fields := map[string]any{}
	Expect(utiljson.Unmarshal([]byte(spec), &fields)).To(Succeed()) // integers as int64
	for k, v := range fields {
		Expect(unstructured.SetNestedField(obj.Object, v, "spec", k)).To(Succeed())
	}
	obj.SetNamespace(fw.NewNamespace(nsPrefix))
	err := c.Create(context.Background(), obj, client.DryRunAll)
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	Expect(err.Error()).To(ContainSubstring(message))
}

// schemaResource is a custom resource whose CRD schema the schema property walks: where its API and CRD are,
// an object that sets every leaf to a valid value, the values to write, and how its clients decode and check
// what the API server admits.
type schemaResource struct {
	gv       schema.GroupVersion
	kind     string
	resource string // the plural, as in the API's paths
	crdFile  string // in config/crd/bases
	// scheme is the one its clients decode with; readBy names them in messages ("the manager").
	scheme func() *runtime.Scheme
	readBy string
	// baseSpec and baseStatus set every leaf of spec and status to a valid value.
	baseSpec, baseStatus string
	// values are the JSON literals written at a node of the given kind (adversarialValues, or more).
	values    func(kind string) []string
	newObject func() client.Object
	newList   func() client.ObjectList
	// strict, when set, decodes an admitted object as a client without the types' tolerant decoding would.
	strict func(raw []byte) error
	// problems are what a client finds wrong with an admitted object decoded with scheme, problemsAre says what
	// they mean: there must be none.
	problems    func(obj client.Object) []string
	problemsAre string
}

// schemaWalk is what walkSchema finds under a resource's spec and status.
type schemaWalk struct {
	spec, status, containers []schemaNode
	skipped                  []string
}

// expectLeaves fails when the walk found fewer leaves under spec or status than given.
func (s schemaWalk) expectLeaves(spec, status int) {
	ExpectWithOffset(1, len(s.spec)).To(BeNumerically(">=", spec), "leaves under spec")
	ExpectWithOffset(1, len(s.status)).To(BeNumerically(">=", status), "leaves under status")
}

// walk walks the resource's CRD schema to every leaf of spec and status.
func (r schemaResource) walk() schemaWalk {
	props := crdSchema(r.crdFile)["properties"].(map[string]any)
	var s schemaWalk
	walkSchema(props["spec"].(map[string]any), []string{"spec"}, &s.spec, &s.containers, &s.skipped)
	walkSchema(props["status"].(map[string]any), []string{"status"}, &s.status, &s.containers, &s.skipped)
	return s
}

// uncovered are the leaves the base object lacks.
func (r schemaResource) uncovered(s schemaWalk) []string {
	var out []string
	for _, l := range append(append([]schemaNode{}, s.spec...), s.status...) {
		if !setAt(r.baseObject(), l.path, nil) {
			out = append(out, l.String())
		}
	}
	return out
}

// baseObject is an object of the resource that sets every leaf of the schema to a valid value.
func (r schemaResource) baseObject() map[string]any {
	return decodeJSON(`{"apiVersion":"` + r.gv.String() + `","kind":"` + r.kind + `",` +
		`"metadata":{"name":"x"},"spec":` + r.baseSpec + `,"status":` + r.baseStatus + `}`).(map[string]any)
}

// exercise writes, in namespace ns, the base object and then the resource's values at every leaf of spec and
// status of the walk, decodes every object the API server admits: the write's response (strictly when the
// resource says how, and with its scheme) and, for stored objects (one per spec leaf, one per status leaf), a
// typed Get; at the end a typed List of them all. The tally says what was admitted, refused and undecodable.
func (r schemaResource) exercise(ctx context.Context, ns string, s schemaWalk) *schemaTally {
	w := newSchemaWriter(r, ns)
	t := &schemaTally{problems: map[string][]string{}, exercised: map[string]bool{}}

	// The base object itself is admitted and decodes.
	raw, err := w.create(ctx, "base", r.baseObject(), false)
	Expect(err).NotTo(HaveOccurred())
	t.check(ctx, w, "the base object", "", raw, "base")

	// Spec: every value is written with dryRun (the response is the object as it would be stored, and nothing
	// is stored for a controller to reconcile); then, for each leaf, the first admitted value is stored for
	// real, so a typed Get and the List below read adversarial values of every leaf from etcd.
	var jobs []func()
	for _, l := range append(s.spec, containersUnder("spec", s.containers)...) {
		name := fmt.Sprintf("s%d", len(jobs))
		jobs = append(jobs, func() {
			stored := false
			for _, v := range r.values(l.kind) {
				obj := r.baseObject()
				setAt(obj, l.path, decodeJSON(v))
				raw, err := w.create(ctx, name+"-dry", obj, true)
				t.record(ctx, w, l.String(), truncate(v), raw, err, "")
				if err == nil && !stored {
					raw, err := w.create(ctx, name, obj, false)
					t.record(ctx, w, l.String(), truncate(v), raw, err, name)
					stored = true
				}
			}
		})
	}
	// Status: one object per leaf, its status merge-patched with each value in turn.
	for i, l := range s.status {
		name := fmt.Sprintf("st%d", i)
		_, err := w.create(ctx, name, r.baseObject(), false)
		Expect(err).NotTo(HaveOccurred())
		var patches []map[string]any
		for _, v := range r.values(l.kind) {
			obj := r.baseObject()
			Expect(setAt(obj, l.path, decodeJSON(v))).To(BeTrue())
			patches = append(patches, map[string]any{"status": obj["status"]})
		}
		jobs = append(jobs, func() {
			for j, v := range r.values(l.kind) {
				raw, err := w.patchStatus(ctx, name, patches[j])
				t.record(ctx, w, l.String(), truncate(v), raw, err, name)
			}
		})
	}
	By(fmt.Sprintf("writing %d objects and status patches", len(jobs)))
	parallel.Run(ctx, len(jobs), 8, func(i int) error { jobs[i](); return nil })
	By("listing")

	// An informer lists every object at once: one bad item fails them all.
	if err := w.client.List(ctx, r.newList(), client.InNamespace(ns)); err != nil {
		t.problem("the namespace", "", fmt.Sprintf("a typed List fails: %v", err))
	}

	summary := fmt.Sprintf("%d spec leaves, %d status leaves, %d containers; %d writes admitted, %d refused; %d leaves admitted some adversarial value",
		len(s.spec), len(s.status), len(s.containers), t.admitted, t.refused, len(t.exercised))
	AddReportEntry(r.kind+" schema property", summary)
	GinkgoWriter.Println(r.kind+" schema property:", summary)
	return t
}

// schemaTally counts what the API server admits and refuses, and collects, per leaf, the admitted values the
// resource's clients cannot decode. Its methods are safe for concurrent use.
type schemaTally struct {
	mu                sync.Mutex
	admitted, refused int
	exercised         map[string]bool
	// problems holds, per leaf, the first error and then every value that failed.
	problems map[string][]string
}

// expectEnough fails when more than refused writes were not refused, more than admitted not admitted, or
// fewer than exercised leaves admitted some value: a run that admits or refuses little tests little.
func (t *schemaTally) expectEnough(refused, admitted, exercised int) {
	ExpectWithOffset(1, t.refused).To(BeNumerically(">", refused), "the adversarial values must be refused often, or the test writes nothing bad")
	ExpectWithOffset(1, t.admitted).To(BeNumerically(">", admitted), "the adversarial values must be admitted often, or the base object is invalid")
	ExpectWithOffset(1, len(t.exercised)).To(BeNumerically(">=", exercised), "leaves where some adversarial value was admitted")
}

func (t *schemaTally) problem(leaf, value, msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.problems[leaf]) == 0 {
		t.problems[leaf] = append(t.problems[leaf], msg)
	}
	t.problems[leaf] = append(t.problems[leaf], value)
}

// record takes the outcome of one write of value at leaf to the object name ("" for a dry run).
func (t *schemaTally) record(ctx context.Context, w *schemaWriter, leaf, value string, raw []byte, err error, name string) {
	if err != nil {
		t.mu.Lock()
		t.refused++
		t.mu.Unlock()
		if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
			t.problem(leaf, value, fmt.Sprintf("refused, but not as invalid input: %v", err))
		}
		return
	}
	t.mu.Lock()
	t.exercised[leaf] = true
	t.mu.Unlock()
	t.check(ctx, w, leaf, value, raw, name)
}

// check decodes an admitted object as returned by the write and as read with a typed Get.
func (t *schemaTally) check(ctx context.Context, w *schemaWriter, leaf, value string, raw []byte, name string) {
	t.mu.Lock()
	t.admitted++
	t.mu.Unlock()
	if w.r.strict != nil {
		if err := w.r.strict(raw); err != nil {
			t.problem(leaf, value, fmt.Sprintf("admitted, but does not decode: %v", err))
			return
		}
	}
	// The resource's scheme decodes it with no problem to report: the response, and a typed Get.
	got := w.r.newObject()
	if err := runtime.DecodeInto(w.decoder, raw, got); err != nil {
		t.problem(leaf, value, fmt.Sprintf("admitted, but the scheme of %s does not decode the response: %v", w.r.readBy, err))
		return
	}
	if p := w.r.problems(got); len(p) > 0 {
		t.problem(leaf, value, fmt.Sprintf("admitted, but %s: %v", w.r.problemsAre, p))
	}
	if name == "" {
		return // a dry run: nothing to read back
	}
	if err := w.client.Get(ctx, types.NamespacedName{Namespace: w.ns, Name: name}, w.r.newObject()); err != nil {
		t.problem(leaf, value, fmt.Sprintf("admitted, but a typed Get fails: %v", err))
	}
}

// describe lists each leaf with its first error and the values that failed, one leaf a line.
func (t *schemaTally) describe() string {
	leaves := make([]string, 0, len(t.problems))
	for l := range t.problems {
		leaves = append(leaves, l)
	}
	sort.Strings(leaves)
	var b strings.Builder
	for _, l := range leaves {
		fmt.Fprintf(&b, "%s: %s; values: %s\n", l, t.problems[l][0], strings.Join(t.problems[l][1:], " "))
	}
	return b.String()
}

// containersUnder are the containers below the top-level field top.
func containersUnder(top string, containers []schemaNode) []schemaNode {
	var out []schemaNode
	for _, c := range containers {
		if c.path[0] == top && len(c.path) > 1 {
			out = append(out, c)
		}
	}
	return out
}

// schemaNode is a node of the CRD's OpenAPI schema: a path from the object's root ("[]" for the items of an
// array) and what kind of value it holds.
type schemaNode struct {
	path []string
	kind string
}

func (n schemaNode) String() string { return pathString(n.path) }

// pathString writes a path as in API server messages, with "[]" for every item of an array.
func pathString(path []string) string {
	return strings.ReplaceAll(strings.Join(path, "."), ".[]", "[]")
}

// crdSchema reads the openAPIV3Schema of the one version of a CRD file of config/crd/bases.
func crdSchema(file string) map[string]any {
	data, err := os.ReadFile(filepath.Join(envhub.RepoRoot(), "config", "crd", "bases", file))
	Expect(err).NotTo(HaveOccurred())
	crd := map[string]any{}
	Expect(yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(&crd)).To(Succeed())
	versions := crd["spec"].(map[string]any)["versions"].([]any)
	Expect(versions).To(HaveLen(1))
	return versions[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
}

// walkSchema collects the leaves under node: scalars, int-or-strings and string maps. Objects and arrays
// are collected as containers (written with values of the wrong shape); embedded raw objects are skipped.
func walkSchema(node map[string]any, path []string, leaves, containers *[]schemaNode, skipped *[]string) {
	p := pathString(path)
	switch {
	case node["x-kubernetes-preserve-unknown-fields"] == true || node["x-kubernetes-embedded-resource"] == true:
		*skipped = append(*skipped, p)
		return
	case node["x-kubernetes-int-or-string"] == true:
		*leaves = append(*leaves, schemaNode{path: path, kind: "int-or-string"})
		return
	}
	switch node["type"] {
	case "object":
		if props, ok := node["properties"].(map[string]any); ok {
			*containers = append(*containers, schemaNode{path: path, kind: "container"})
			keys := make([]string, 0, len(props))
			for k := range props {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walkSchema(props[k].(map[string]any), append(append([]string{}, path...), k), leaves, containers, skipped)
			}
			return
		}
		*leaves = append(*leaves, schemaNode{path: path, kind: "map"})
	case "array":
		*containers = append(*containers, schemaNode{path: path, kind: "container"})
		walkSchema(node["items"].(map[string]any), append(append([]string{}, path...), "[]"), leaves, containers, skipped)
	case "string", "integer", "number", "boolean":
		*leaves = append(*leaves, schemaNode{path: path, kind: node["type"].(string)})
	default:
		Fail(fmt.Sprintf("schema node %s has an unexpected type %v", p, node["type"]))
	}
}

// setAt replaces the value at path in obj (the first array element that has the rest of the path) and says
// whether the path exists. A nil value only checks that it exists.
func setAt(obj any, path []string, v any) bool {
	m, ok := obj.(map[string]any)
	if !ok || len(path) == 0 {
		return false
	}
	cur, ok := m[path[0]]
	if !ok {
		return false
	}
	rest := path[1:]
	if len(rest) > 0 && rest[0] == "[]" {
		items, ok := cur.([]any)
		if !ok || len(items) == 0 {
			return false
		}
		if len(rest) == 1 {
			if v != nil {
				items[0] = v
			}
			return true
		}
		for _, item := range items {
			if setAt(item, rest[1:], v) {
				return true
			}
		}
		return false
	}
	if len(rest) == 0 {
		if v != nil {
			m[path[0]] = v
		}
		return true
	}
	return setAt(cur, rest, v)
}

const longString = 5000

// adversarialValues are JSON literals to write at a node of the given kind: values of its type that are
// malformed, out of range or at the edges, and values of other types.
func adversarialValues(kind string) []string {
	strs := []string{`"1d"`, `""`, `"-1s"`, `"1.5h"`, `"abc"`, `"50%"`, `"101%"`, `"-1"`, `"0"`, `"0s"`, `"30s"`,
		`"5m"`, `"1h30m"`, `"1h1h"`, `"90ms"`, `"1us"`, `"1µs"`, `"2562047h"`, `"2562048h"`, `"999999999999h"`,
		`"1e3"`, `" 1s"`, `"None"`, `"5sx"`, `"xNone"`, `"2147483648"`, `"2024-01-01T00:00:00Z"`,
		`"2024-01-01T00:00:00"`, `"2024-01-01T00:00:00+0100"`, `"2024-13-01T00:00:00Z"`, `"2024-01-01t00:00:00z"`,
		`"2024-01-01T00:00:00x5Z"`, `"2024-01-01T00:00:00+24:00"`,
		`"` + strings.Repeat("1", 300) + `s"`, `"` + strings.Repeat("a", longString) + `"`}
	ints := []string{`0`, `-1`, `2147483647`, `2147483648`, `-2147483648`, `-2147483649`, `4294967296`,
		`9007199254740992`, `9007199254740993`, `9223372036854775807`, `9223372036854775808`,
		`-9223372036854775809`, `1.5`, `3.0`, `1e3`, `1e10`, `1e19`, `-0`}
	wrong := []string{`true`, `{}`, `[]`, `[1]`, `["x"]`, `null`}
	switch kind {
	case "string":
		return append(append(strs, `1`), wrong...)
	case "integer", "number":
		return append(append(ints, `"1"`), wrong...)
	case "int-or-string":
		return append(append(ints, strs...), wrong...)
	case "boolean":
		return []string{`true`, `false`, `"true"`, `1`, `{}`, `[]`, `null`}
	case "map":
		return []string{`{}`, `{"k":"v"}`, `{"k":1}`, `{"k":null}`, `{"k":{}}`, `"x"`, `1`, `[]`, `null`}
	case "container":
		return []string{`"x"`, `1`, `true`, `null`}
	}
	Fail("no values for kind " + kind)
	return nil
}

func decodeJSON(v string) any {
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber() // keep every integer literal exact, beyond float64's precision
	var out any
	Expect(dec.Decode(&out)).To(Succeed())
	if out == nil {
		return json.RawMessage("null") // setAt treats a nil value as "only check"
	}
	return out
}

func truncate(v string) string {
	if len(v) > 40 {
		return v[:20] + fmt.Sprintf("...(%d bytes)", len(v))
	}
	return v
}

const schemaBaseSpec = `{
  "placementRef": {"name": "p"},
  "manifestWorkTemplate": {
    "workload": {"manifests": [
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web", "namespace": "default"}},
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web2", "namespace": "default"}},
      {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web3", "namespace": "default"}}
    ]},
    "deleteOption": {
      "propagationPolicy": "SelectivelyOrphan",
      "selectivelyOrphans": {"orphaningRules": [{"group": "", "resource": "configmaps", "namespace": "default", "name": "web"}]},
      "ttlSecondsAfterFinished": 60
    },
    "executor": {"subject": {"type": "ServiceAccount", "serviceAccount": {"namespace": "default", "name": "sa"}}},
    "manifestConfigs": [{
      "resourceIdentifier": {"group": "", "resource": "configmaps", "namespace": "default", "name": "web"},
      "feedbackRules": [{"type": "JSONPaths", "jsonPaths": [{"name": "n", "path": ".data.a", "version": "v1"}]}],
      "feedbackScrapeType": "Poll",
      "updateStrategy": {"type": "ServerSideApply", "serverSideApply": {"fieldManager": "work-agent", "force": true,
        "ignoreFields": [{"condition": "OnSpokePresent", "jsonPaths": [".data.a"], "jqPathExpressions": [".data.b"], "jsonPointers": ["/data/c"]}]}},
      "conditionRules": [{"type": "CEL", "condition": "Ready", "celExpressions": ["true"], "message": "ok", "messageExpression": "'ok'"}]
    }]
  },
  "distributionStrategy": [
    {"name": "web", "namespace": "default", "group": "", "kind": "ConfigMap", "type": "Split",
     "split": {"type": "Balance", "fieldPath": ".data.n", "limitRange": {"min": 1, "max": 4}}},
    {"name": "web2", "namespace": "default", "type": "Split",
     "split": {"type": "Weighted", "weights": [
       {"clusterName": "c1", "weight": 1},
       {"clusterSelector": {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}, "weight": 2}]}},
    {"name": "web3", "namespace": "default", "type": "Split",
     "split": {"type": "Score", "score": {"resourceName": "r", "scoreName": "s"}}}
  ],
  "rolloutStrategy": {
    "type": "Progressive",
    "all": {"minSuccessTime": "1m", "progressDeadline": "10m", "maxFailures": 1},
    "progressive": {"minSuccessTime": "1m", "progressDeadline": "10m", "maxFailures": "10%", "maxConcurrency": 2,
      "mandatoryDecisionGroups": [{"groupName": "g", "groupIndex": 0}]},
    "progressivePerGroup": {"minSuccessTime": "1m", "progressDeadline": "10m", "maxFailures": 1,
      "mandatoryDecisionGroups": [{"groupName": "g", "groupIndex": 0}]}
  },
  "failover": {"disabled": false, "gracePeriod": "5m", "recoveryPeriod": "2m"},
  "moveStrategy": {"type": "MakeBeforeBreak", "timeout": "10m"},
  "ttlSecondsAfterFinished": 60,
  "propagateDependencies": true,
  "overrides": [
    {"name": "literal",
     "clusters": {"names": ["c1"],
       "labelSelector": {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]},
       "claimSelector": {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}},
     "manifests": [{"name": "web", "namespace": "default", "group": "", "kind": "ConfigMap"}],
     "image": {"registry": {"value": "mirror.example.com"}, "repository": {"value": "team/web"}, "tag": {"value": "1.2"}},
     "patches": [{"op": "add", "path": "/data/a", "value": "b"}]},
    {"name": "expression",
     "image": {"registry": {"expression": "'mirror.example.com'"}, "repository": {"expression": "'team/web'"}, "tag": {"expression": "'1.2'"}},
     "patches": [{"op": "replace", "path": "/data/a", "expression": "cluster.name"}]}
  ],
  "splitCompanions": "Apportion",
  "revisionHistoryLimit": 10,
  "paused": false,
  "failurePolicy": "Rollback",
  "rolloutGates": [{"name": "first", "afterClusters": 1}, {"name": "canary", "afterGroup": "canary"}],
  "disruptionBudget": {"maxUnavailableReplicas": "25%"}
}`

const schemaBaseStatus = `{
  "observedGeneration": 1,
  "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1, "lastTransitionTime": "2024-01-01T00:00:00Z", "reason": "Ready", "message": "ok"}],
  "placement": "p",
  "placedManifestWorkSummary": {"total": 1, "applied": 1, "available": 1, "progressing": 0, "degraded": 0},
  "splits": [{"name": "web", "namespace": "default", "group": "", "kind": "ConfigMap", "fieldPath": ".data.n",
    "total": 3, "placed": 3, "unplaced": 0, "failedOver": 0, "shares": [{"share": 3, "clusters": 1}],
    "clusters": [{"cluster": "c1", "share": 3}], "clustersNotListed": 0,
    "companions": [{"kind": "HorizontalPodAutoscaler", "name": "web", "fields": ["spec.minReplicas"], "message": "m"}]}],
  "manifests": [{"name": "web", "namespace": "default", "group": "", "kind": "ConfigMap", "healthy": 1, "progressing": 0,
    "degraded": 0, "feedback": [{"name": "n", "value": 3, "clusters": 1}],
    "aggregated": [{"name": "n", "operation": "Count", "value": 3, "counts": [{"value": "3", "clusters": 1}], "clusters": 1}]}],
  "unhealthyClusters": [{"cluster": "c2", "state": "Degraded", "reason": "ClusterUnavailable", "message": "m"}],
  "unhealthyClustersNotListed": 0,
  "rollout": {"updated": 1, "total": 1, "succeeded": 1, "failed": 0, "currentGroup": "g", "awaitingApproval": "canary",
    "startedAt": "2024-01-01T00:00:00Z"},
  "approvals": [{"revision": 2, "gate": "canary", "approvedAt": "2024-01-01T00:00:00Z"}],
  "disruptionBudget": {"unavailableReplicas": 1, "maxUnavailableReplicas": 2, "held": ["c1"], "heldNotListed": 0, "message": "m"},
  "currentRevision": {"revision": 2, "name": "web-1234567890"},
  "completedRevision": {"revision": 1, "name": "web-0987654321"},
  "failedRevision": {"revision": 2, "name": "web-1234567890", "clusters": ["c1"], "clustersNotListed": 0},
  "retriedRevision": 0,
  "failedOverClusters": 0,
  "failedOver": [{"cluster": "c1", "since": "2024-01-01T00:00:00Z"}],
  "leavingClusters": 0,
  "completion": {"observedGeneration": 1, "completed": 1, "failed": 0, "finishedTime": "2024-01-01T00:00:00Z",
    "worksRemovedTime": "2024-01-01T00:01:00Z"},
  "overrides": [{"name": "literal", "clusters": 1, "failed": 1, "failedClusters": ["c2"], "message": "m"}]
}`

// schemaWriter writes raw JSON to the API server, so every literal reaches it exactly as written, and
// decodes and reads with the resource's scheme.
type schemaWriter struct {
	r       schemaResource
	ns      string
	rest    *rest.RESTClient
	client  client.Client
	decoder runtime.Decoder
}

func newSchemaWriter(r schemaResource, ns string) *schemaWriter {
	scheme := r.scheme()
	codecs := serializer.NewCodecFactory(scheme)
	c := rest.CopyConfig(fw.Config)
	c.GroupVersion = &r.gv
	c.APIPath = "/apis"
	c.NegotiatedSerializer = codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(c)
	Expect(err).NotTo(HaveOccurred())
	cl, err := client.New(fw.Config, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	return &schemaWriter{r: r, ns: ns, rest: rc, client: cl, decoder: codecs.UniversalDeserializer()}
}

// create writes obj with the given name; with dryRun nothing is stored.
func (w *schemaWriter) create(ctx context.Context, name string, obj map[string]any, dryRun bool) ([]byte, error) {
	obj["metadata"] = map[string]any{"name": name, "namespace": w.ns}
	delete(obj, "status") // the status subresource ignores it on create
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	req := w.rest.Post().Namespace(w.ns).Resource(w.r.resource).Body(body)
	if dryRun {
		req = req.Param("dryRun", "All")
	}
	return req.Do(ctx).Raw()
}

func (w *schemaWriter) patchStatus(ctx context.Context, name string, patch map[string]any) ([]byte, error) {
	body, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	return w.rest.Patch(types.MergePatchType).Namespace(w.ns).Resource(w.r.resource).Name(name).
		SubResource("status").Body(body).Do(ctx).Raw()
}
