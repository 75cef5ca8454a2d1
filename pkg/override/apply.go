package override

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/interpreter"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// Failure is why an override cannot be applied on one cluster. The caller keeps that cluster's delivered
// ManifestWork and names the override and the cluster.
type Failure struct {
	// Override is the override's name.
	Override string
	// Cluster is the cluster's name.
	Cluster string
	// Manifest names the manifest (template.Manifest.ID) the override failed on; empty when its expressions
	// failed for the cluster, which fails it on every manifest it selects.
	Manifest string
	// Message says what failed.
	Message string
}

func (f Failure) Error() string {
	if f.Manifest == "" {
		return fmt.Sprintf("override %s on cluster %s: %s", f.Override, f.Cluster, f.Message)
	}
	return fmt.Sprintf("override %s on cluster %s: %s: %s", f.Override, f.Cluster, f.Manifest, f.Message)
}

// ClusterError is every override that failed on one cluster: its work must be kept as it was.
type ClusterError struct {
	Cluster  string
	Failures []Failure
}

func (e *ClusterError) Error() string {
	msgs := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		msgs[i] = f.Error()
	}
	return strings.Join(msgs, "; ")
}

// Outcome is what one override did on one cluster: to one manifest (Resolved.Apply) or to all of them
// (Render).
type Outcome struct {
	// Override is the override's name, Index its position in the list.
	Override string
	Index    int
	// Changed is how many manifests it changed (one manifest: 0 or 1). An override may select a cluster and
	// change nothing: its values are already there (CheckTemplate refuses an image short form that finds no
	// container in the manifests it selects).
	Changed int
	// Failure is set when it failed; its changes are then not applied.
	Failure *Failure
}

// Resolved is what a Set's overrides come to for one cluster: the overrides that select it, in list order,
// with their expressions evaluated. It is not changed once made.
type Resolved struct {
	cluster   string
	overrides []resolvedOverride
	key       string
}

type resolvedOverride struct {
	o     *compiled
	patch jsonpatch.Patch // nil without patches
	ops   []patchOp       // with their values for this cluster, to name the patch that fails
	image imageParts
	// err says why its expressions failed for this cluster; it then fails on every manifest it selects.
	err string
}

// applyOptions apply RFC 6902 as written: no negative indexes, no parents made on add, no silent remove.
var applyOptions = func() *jsonpatch.ApplyOptions {
	o := jsonpatch.NewApplyOptions()
	o.SupportNegativeIndices = false
	o.EnsurePathExistsOnAdd = false
	o.AllowMissingPathOnRemove = false
	return o
}()

// Resolve selects the overrides that apply to the cluster and evaluates their expressions once. A failed
// expression does not stop the others: it fails its override on the manifests it selects.
func (s *Set) Resolve(c Cluster) *Resolved {
	r := &Resolved{cluster: c.Name}
	if s == nil {
		return r
	}
	var key strings.Builder
	for _, o := range s.overrides {
		if !o.selectsCluster(c) {
			continue
		}
		ro, values := o.resolve(c)
		r.overrides = append(r.overrides, ro)
		if key.Len() > 0 {
			key.WriteByte(';')
		}
		key.WriteString(strconv.Itoa(o.index))
		switch {
		case ro.err != "":
			key.WriteString("!" + ro.err)
		case len(values) > 0:
			b, _ := json.Marshal(values) // the values came from JSON or from toJSON: they encode
			key.WriteByte('=')
			key.Write(b)
		}
	}
	r.key = key.String()
	return r
}

// resolve evaluates o's expressions for c: the override ready to apply, and the values its expressions gave,
// in order (image parts, then patches), for the key.
func (o *compiled) resolve(c Cluster) (resolvedOverride, []any) {
	ro := resolvedOverride{o: o}
	var values []any
	if o.image != nil {
		for _, p := range []struct {
			name string
			in   *part
			out  **string
			chk  func(string) error
		}{
			{"registry", o.image.registry, &ro.image.registry, checkRegistry},
			{"repository", o.image.repository, &ro.image.repository, checkRepository},
			{"tag", o.image.tag, &ro.image.tag, checkTag},
		} {
			if p.in == nil {
				continue
			}
			if p.in.prog == nil {
				v := p.in.value
				*p.out = &v
				continue
			}
			v, err := eval(p.in.prog, c)
			if err != nil {
				ro.err = fmt.Sprintf("image.%s.expression: %v", p.name, err)
				return ro, nil
			}
			str, ok := v.Value().(string)
			if !ok {
				ro.err = fmt.Sprintf("image.%s.expression returned %s, not a string", p.name, v.Type().TypeName())
				return ro, nil
			}
			if err := p.chk(str); err != nil {
				ro.err = fmt.Sprintf("image.%s.expression: %v", p.name, err)
				return ro, nil
			}
			*p.out = &str
			values = append(values, str)
		}
	}
	if len(o.patches) == 0 {
		return ro, values
	}
	ro.ops = o.patches
	if o.static != nil {
		ro.patch = o.static
		return ro, values
	}
	ops := make([]patchOp, len(o.patches))
	copy(ops, o.patches)
	for j := range ops {
		if ops[j].prog == nil {
			continue
		}
		v, err := eval(ops[j].prog, c)
		if err != nil {
			ro.err = fmt.Sprintf("patches[%d].expression: %v", j, err)
			return ro, nil
		}
		val, err := toJSON(v, 0)
		if err != nil {
			ro.err = fmt.Sprintf("patches[%d].expression: %v", j, err)
			return ro, nil
		}
		raw, err := json.Marshal(val)
		if err != nil {
			ro.err = fmt.Sprintf("patches[%d].expression: %v", j, err)
			return ro, nil
		}
		ops[j].value = raw
		values = append(values, val)
	}
	ro.ops = ops
	doc, err := patchDocument(ro.ops)
	if err != nil {
		ro.err = err.Error()
		return ro, nil
	}
	p, err := jsonpatch.DecodePatch(doc)
	if err != nil {
		ro.err = fmt.Sprintf("patches: %v", err)
		return ro, nil
	}
	ro.patch = p
	return ro, values
}

// patchDocument encodes patches as an RFC 6902 document.
func patchDocument(ops []patchOp) ([]byte, error) {
	type op struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value,omitempty"`
	}
	doc := make([]op, len(ops))
	for i, p := range ops {
		doc[i] = op{Op: string(p.op), Path: p.path}
		if p.op != workv1alpha1.OverridePatchRemove {
			doc[i].Value = p.value
		}
	}
	return json.Marshal(doc)
}

// Key identifies what the overrides do to this cluster's manifests: two clusters with equal keys get equal
// results from equal manifests (the same split shares). It is the selected overrides' indexes and the values
// their expressions gave: "" when no override selects the cluster.
func (r *Resolved) Key() string { return r.key }

// Selected is the indexes of the overrides that select the cluster, in list order.
func (r *Resolved) Selected() []int {
	out := make([]int, len(r.overrides))
	for i, ro := range r.overrides {
		out[i] = ro.o.index
	}
	return out
}

// Apply applies the overrides that select the cluster and m, in list order, to m, which is already split for
// the cluster (m.Object carries its shares). splitFields are m's split fields as dotted paths (.spec.replicas),
// none when m is replicated. It returns the result, m.Object itself when nothing applies (do not modify it),
// and one Outcome per override that selects m. When an override fails (its expression failed for the cluster,
// a patch's path is missing, an image cannot be parsed, or the result would change m's apiVersion, kind, name,
// namespace or a split field), the result is nil and the error is a *ClusterError naming each override that
// failed; the others still run, so that every failure is reported.
func (r *Resolved) Apply(m template.Manifest, splitFields []string) (*unstructured.Unstructured, []Outcome, error) {
	obj := m.Object
	var outcomes []Outcome
	var failures []Failure
	for _, ro := range r.overrides {
		if !ro.o.selectsManifest(m) {
			continue
		}
		out := Outcome{Override: ro.o.name, Index: ro.o.index}
		next, changed, msg := ro.apply(m, obj, splitFields)
		if msg != "" {
			f := Failure{Override: ro.o.name, Cluster: r.cluster, Manifest: m.ID(), Message: msg}
			if ro.err != "" {
				f.Manifest = ""
			}
			out.Failure = &f
			failures = append(failures, f)
		} else {
			obj = next
			if changed {
				out.Changed = 1
			}
		}
		outcomes = append(outcomes, out)
	}
	if len(failures) > 0 {
		return nil, outcomes, &ClusterError{Cluster: r.cluster, Failures: failures}
	}
	return obj, outcomes, nil
}

// apply applies one override to obj, the result of the overrides before it on m: the result, whether it
// differs from obj, and why it failed.
func (ro *resolvedOverride) apply(m template.Manifest, obj *unstructured.Unstructured, splitFields []string) (*unstructured.Unstructured, bool, string) {
	if ro.err != "" {
		return nil, false, ro.err
	}
	cur, changed := obj, false
	if ro.o.image != nil {
		next, ch, err := rewriteImages(m, cur, ro.image)
		if err != nil {
			return nil, false, "image: " + err.Error()
		}
		cur, changed = next, ch
	}
	if ro.patch != nil {
		raw, err := json.Marshal(cur.Object)
		if err != nil {
			return nil, false, fmt.Sprintf("the manifest does not encode: %v", err)
		}
		patched, err := ro.patch.ApplyWithOptions(raw, applyOptions)
		if err != nil {
			return nil, false, ro.patchFailure(raw, err)
		}
		var out map[string]any
		if err := utiljson.Unmarshal(patched, &out); err != nil || out == nil {
			return nil, false, "the patches do not leave an object"
		}
		again, err := json.Marshal(out)
		if err != nil {
			return nil, false, fmt.Sprintf("the patched manifest does not encode: %v", err)
		}
		if !bytes.Equal(again, raw) {
			cur, changed = &unstructured.Unstructured{Object: out}, true
		}
	}
	if !changed {
		return obj, false, ""
	}
	if msg := protect(m.Object, cur, splitFields); msg != "" {
		return nil, false, msg
	}
	return cur, true, ""
}

// patchFailure names the patch that fails: the patches are applied one by one until one does.
func (ro *resolvedOverride) patchFailure(raw []byte, whole error) string {
	doc := raw
	for j, op := range ro.ops {
		one, err := patchDocument([]patchOp{op})
		if err != nil {
			break
		}
		p, err := jsonpatch.DecodePatch(one)
		if err != nil {
			break
		}
		next, err := p.ApplyWithOptions(doc, applyOptions)
		if err != nil {
			return fmt.Sprintf("patches[%d] (%s %s): %v", j, op.op, op.path, err)
		}
		doc = next
	}
	return fmt.Sprintf("patches: %v", whole)
}

// protect refuses a result that changes which object the manifest is, or a split field.
func protect(before, after *unstructured.Unstructured, splitFields []string) string {
	for _, f := range [][]string{{"apiVersion"}, {"kind"}, {"metadata", "name"}, {"metadata", "namespace"}} {
		if !sameField(before, after, f) {
			return fmt.Sprintf("the result changes .%s: an override cannot change which object a manifest is", strings.Join(f, "."))
		}
	}
	for _, sf := range splitFields {
		keys, err := template.FieldPathKeys(sf)
		if err != nil {
			continue
		}
		if !sameField(before, after, keys) {
			return fmt.Sprintf("the result changes %s, a split field: the split sets it per cluster", sf)
		}
	}
	return ""
}

// sameField reports whether a field is absent from both objects or encodes alike in both (3 and 3.0 do).
func sameField(a, b *unstructured.Unstructured, keys []string) bool {
	va, foundA, _ := unstructured.NestedFieldNoCopy(a.Object, keys...)
	vb, foundB, _ := unstructured.NestedFieldNoCopy(b.Object, keys...)
	if foundA != foundB {
		return false
	}
	if !foundA {
		return true
	}
	ja, errA := json.Marshal(va)
	jb, errB := json.Marshal(vb)
	if errA != nil || errB != nil {
		return false
	}
	return bytes.Equal(ja, jb)
}

// Render is the manifests one cluster gets: manifests, the template's already split for the cluster, with the
// overrides applied. splitFields holds, by manifest index, each manifest's split fields. Outcomes has one entry
// per override that selects the cluster, in list order, counting the manifests it changed. When an override
// fails on a manifest, the manifests are nil and the error is a *ClusterError with every failure: the cluster
// keeps what it has. A manifest that no override changes is returned as it was given (do not modify it).
func Render(s *Set, manifests []template.Manifest, c Cluster, splitFields map[int][]string) ([]template.Manifest, []Outcome, error) {
	return s.Resolve(c).Render(manifests, splitFields)
}

// Render is Render for the cluster the overrides were resolved for, without evaluating them again.
func (r *Resolved) Render(manifests []template.Manifest, splitFields map[int][]string) ([]template.Manifest, []Outcome, error) {
	outcomes := make([]Outcome, len(r.overrides))
	pos := make(map[int]int, len(r.overrides))
	for i, ro := range r.overrides {
		outcomes[i] = Outcome{Override: ro.o.name, Index: ro.o.index}
		pos[ro.o.index] = i
	}
	out := make([]template.Manifest, 0, len(manifests))
	var failures []Failure
	for _, m := range manifests {
		obj, outs, err := r.Apply(m, splitFields[m.Index])
		for _, o := range outs {
			sum := &outcomes[pos[o.Index]]
			sum.Changed += o.Changed
			if o.Failure != nil && sum.Failure == nil {
				sum.Failure = o.Failure
			}
		}
		if err != nil {
			var ce *ClusterError
			if !errors.As(err, &ce) {
				return nil, outcomes, err
			}
			for _, f := range ce.Failures {
				// An expression that failed fails its override on every manifest: report it once.
				if f.Manifest != "" || !slices.ContainsFunc(failures, func(g Failure) bool { return g == f }) {
					failures = append(failures, f)
				}
			}
			continue
		}
		rendered := m
		rendered.Object = obj
		out = append(out, rendered)
	}
	if len(failures) > 0 {
		return nil, outcomes, &ClusterError{Cluster: r.cluster, Failures: failures}
	}
	return out, outcomes, nil
}

// Status counts, per override in list order, the clusters it applied to and those where it failed, from the
// outcomes of each decided cluster (Render's, by cluster name). A cluster counts as failed for an override
// when the override failed on one of its manifests; a cluster where any override failed keeps its work as it
// was, so it counts for none of the others.
func Status(s *Set, outcomes map[string][]Outcome) []workv1alpha1.OverrideStatus {
	if s.Len() == 0 {
		return nil
	}
	out := make([]workv1alpha1.OverrideStatus, s.Len())
	failed := make([][]string, s.Len())
	messages := make([]map[string]string, s.Len())
	for i, o := range s.overrides {
		out[i].Name = o.name
		messages[i] = map[string]string{}
	}
	for cluster, outs := range outcomes {
		clusterFailed := false
		for _, o := range outs {
			if o.Failure != nil && o.Index >= 0 && o.Index < len(out) {
				clusterFailed = true
				failed[o.Index] = append(failed[o.Index], cluster)
				messages[o.Index][cluster] = o.Failure.Message
				if o.Failure.Manifest != "" {
					messages[o.Index][cluster] = o.Failure.Manifest + ": " + o.Failure.Message
				}
			}
		}
		if clusterFailed {
			continue // its work is kept as it was: it carries none of the overrides
		}
		for _, o := range outs {
			if o.Index >= 0 && o.Index < len(out) {
				out[o.Index].Clusters++
			}
		}
	}
	for i := range out {
		names := failed[i]
		sort.Strings(names)
		out[i].Failed = int32(len(names))
		if len(names) > workv1alpha1.MaxOverrideFailedClusters {
			names = names[:workv1alpha1.MaxOverrideFailedClusters]
		}
		out[i].FailedClusters = names
		if len(names) > 0 {
			out[i].Message = interpreter.Truncate(fmt.Sprintf("on %s: %s", names[0], messages[i][names[0]]))
		}
	}
	return out
}
