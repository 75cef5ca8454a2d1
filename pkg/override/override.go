package override

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/cel-go/cel"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// Cluster is what an override knows of a decided cluster, and what its expressions see as cluster.
type Cluster struct {
	// Name is the ManagedCluster's name.
	Name string `cel:"name"`
	// Labels are the ManagedCluster's labels.
	Labels map[string]string `cel:"labels"`
	// Claims are its ClusterClaims (status.clusterClaims), value by claim name.
	Claims map[string]string `cel:"claims"`
	// Shares are its shares of the split manifests, by the planner's SplitKey.
	Shares map[string]int32 `cel:"shares"`
}

// Problem is an override the manager cannot use: only the user can fix it.
type Problem struct {
	// Override is the override's name (empty when the list itself is at fault).
	Override string
	// Field is the field at fault, such as spec.overrides[2].patches[0].expression.
	Field string
	// Message says what is wrong and what to do.
	Message string
}

func (p Problem) Error() string { return p.Field + ": " + p.Message }

// Problems are the problems of a list of overrides, in list order. As an error, it is all of them.
type Problems []Problem

func (ps Problems) Error() string {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.Error()
	}
	return strings.Join(msgs, "; ")
}

// Set is a compiled list of overrides. It is not changed once compiled, so reconciles may share it.
type Set struct {
	overrides []*compiled
}

// compiled is one override, ready to select and apply.
type compiled struct {
	index     int
	name      string
	names     map[string]bool // nil: any name
	labels    labels.Selector // nil: any labels
	claims    claimSelector   // nil: any claims
	manifests []workv1alpha1.OverrideManifest
	image     *imageRewrite
	patches   []patchOp
	// static is the patch when no patch has an expression: decoded once, shared by every cluster.
	static jsonpatch.Patch
}

// patchOp is one patch: its literal value (JSON) or its program.
type patchOp struct {
	op    workv1alpha1.OverridePatchOp
	path  string
	value json.RawMessage
	prog  cel.Program
}

// imageRewrite holds the parts an image override sets: a literal or a program each, nil when not set.
type imageRewrite struct {
	registry, repository, tag *part
}

type part struct {
	value string
	prog  cel.Program
}

// pointerPattern is an RFC 6901 JSON Pointer that is not the whole document (the CRD's pattern).
var pointerPattern = regexp.MustCompile(`^(/([^/~]|~[01])*)+$`)

// identityPath is a path into the fields that say which object a manifest is (the CRD's rule).
var identityPath = regexp.MustCompile(`^/(apiVersion|kind)(/.*)?$|^/metadata(/(name|namespace)(/.*)?)?$`)

// namePattern is the pattern of an override's name.
var namePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// maxExpression bounds an expression's length (the CRD's MaxLength).
const maxExpression = 4096

// Compile checks overrides and compiles their selectors and expressions. The error is Problems, naming every
// override and field at fault.
func Compile(overrides []workv1alpha1.ClusterOverride) (*Set, error) {
	var problems Problems
	if len(overrides) > workv1alpha1.MaxOverrides {
		problems = append(problems, Problem{Field: "spec.overrides",
			Message: fmt.Sprintf("%d overrides, more than the %d allowed: merge overrides that select the same clusters", len(overrides), workv1alpha1.MaxOverrides)})
	}
	set := &Set{}
	seen := map[string]int{}
	for i := range overrides {
		c, ps := compileOverride(i, &overrides[i])
		if first, ok := seen[overrides[i].Name]; ok && overrides[i].Name != "" {
			ps = append(ps, Problem{Override: overrides[i].Name, Field: fmt.Sprintf("spec.overrides[%d].name", i),
				Message: fmt.Sprintf("%s is also the name of spec.overrides[%d]: give each override its own name", overrides[i].Name, first)})
		} else {
			seen[overrides[i].Name] = i
		}
		problems = append(problems, ps...)
		set.overrides = append(set.overrides, c)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return set, nil
}

func compileOverride(i int, o *workv1alpha1.ClusterOverride) (*compiled, Problems) {
	var problems Problems
	field := fmt.Sprintf("spec.overrides[%d]", i)
	bad := func(f, format string, args ...any) {
		problems = append(problems, Problem{Override: o.Name, Field: field + f, Message: fmt.Sprintf(format, args...)})
	}
	c := &compiled{index: i, name: o.Name, manifests: o.Manifests}
	if !namePattern.MatchString(o.Name) || len(o.Name) > 63 {
		bad(".name", "%q is not a name of lowercase letters, digits and '-', at most 63 characters", o.Name)
	}
	if len(o.Patches) == 0 && o.Image == nil {
		bad("", "the override changes nothing: set patches or image")
	}
	if len(o.Manifests) > 32 {
		bad(".manifests", "%d entries, more than the 32 allowed", len(o.Manifests))
	}
	if cl := o.Clusters; cl != nil {
		if len(cl.Names) > 0 {
			c.names = make(map[string]bool, len(cl.Names))
			for _, n := range cl.Names {
				c.names[n] = true
			}
		}
		var msg string
		if c.labels, msg = selector(cl.LabelSelector); msg != "" {
			bad(".clusters.labelSelector", "%s", msg)
		}
		if c.claims, msg = newClaimSelector(cl.ClaimSelector); msg != "" {
			bad(".clusters.claimSelector", "%s", msg)
		}
	}
	if o.Image != nil {
		c.image = &imageRewrite{}
		parts := []struct {
			name  string
			in    *workv1alpha1.OverrideValue
			out   **part
			check func(string) error
		}{
			{"registry", o.Image.Registry, &c.image.registry, checkRegistry},
			{"repository", o.Image.Repository, &c.image.repository, checkRepository},
			{"tag", o.Image.Tag, &c.image.tag, checkTag},
		}
		for _, p := range parts {
			if p.in == nil {
				continue
			}
			f := ".image." + p.name
			switch {
			case (p.in.Value == "") == (p.in.Expression == ""):
				bad(f, "set exactly one of value and expression")
			case p.in.Value != "":
				if err := p.check(p.in.Value); err != nil {
					bad(f+".value", "%v", err)
				}
				*p.out = &part{value: p.in.Value}
			default:
				prog, msg := compileField(p.in.Expression, resultString)
				if msg != "" {
					bad(f+".expression", "%s", msg)
				}
				*p.out = &part{prog: prog}
			}
		}
		if o.Image.Registry == nil && o.Image.Repository == nil && o.Image.Tag == nil {
			bad(".image", "set at least one of registry, repository and tag")
		}
	}
	if len(o.Patches) > workv1alpha1.MaxOverridePatches {
		bad(".patches", "%d patches, more than the %d allowed", len(o.Patches), workv1alpha1.MaxOverridePatches)
	}
	static := true
	for j, p := range o.Patches {
		f := fmt.Sprintf(".patches[%d]", j)
		op := patchOp{op: p.Op, path: p.Path}
		switch {
		case !pointerPattern.MatchString(p.Path) || len(p.Path) > 512:
			bad(f+".path", "%q is not a JSON Pointer such as /spec/template/spec/containers/0/image ('~0' for '~' and '~1' for '/' inside a key)", p.Path)
		case identityPath.MatchString(p.Path):
			bad(f+".path", "%s touches the manifest's identity: an override cannot change apiVersion, kind, metadata as a whole, name or namespace", p.Path)
		}
		hasValue := p.Value != nil && len(p.Value.Raw) > 0
		switch p.Op {
		case workv1alpha1.OverridePatchAdd, workv1alpha1.OverridePatchReplace:
			switch {
			case hasValue == (p.Expression != ""):
				bad(f, "%s takes exactly one of value and expression", p.Op)
			case hasValue:
				var v any
				if err := utiljson.Unmarshal(p.Value.Raw, &v); err != nil {
					bad(f+".value", "not JSON: %v", err)
				}
				op.value = json.RawMessage(p.Value.Raw)
			default:
				prog, msg := compileField(p.Expression, resultJSON)
				if msg != "" {
					bad(f+".expression", "%s", msg)
				}
				op.prog, static = prog, false
			}
		case workv1alpha1.OverridePatchRemove:
			if hasValue || p.Expression != "" {
				bad(f, "a remove patch takes no value and no expression")
			}
		default:
			bad(f+".op", "%q is not add, replace or remove", p.Op)
		}
		c.patches = append(c.patches, op)
	}
	if static && len(c.patches) > 0 && len(problems) == 0 {
		doc, err := patchDocument(c.patches)
		if err == nil {
			c.static, err = jsonpatch.DecodePatch(doc)
		}
		if err != nil {
			bad(".patches", "%v", err)
		}
	}
	return c, problems
}

func compileField(expr string, want result) (cel.Program, string) {
	if len(expr) > maxExpression {
		return nil, fmt.Sprintf("%d characters, more than the %d allowed", len(expr), maxExpression)
	}
	return compileExpr(expr, want)
}

// selector compiles a label selector; nil (and the message) when it is not set or invalid.
func selector(s *metav1.LabelSelector) (labels.Selector, string) {
	if s == nil {
		return nil, ""
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil, err.Error()
	}
	return sel, ""
}

// claimSelector is a claimSelector: a label selector over ClusterClaims (claim name → value) that, unlike a label
// selector, takes any value, since a claim's value need not be a valid label value (the kube version claim is
// v1.29.3+k3s1). It is the requirements of metav1.LabelSelector, all of which must hold.
type claimSelector []claimRequirement

type claimRequirement struct {
	key    string
	op     metav1.LabelSelectorOperator
	values map[string]bool
}

// newClaimSelector compiles s; nil selects any claims. The message says what is wrong when s cannot be used.
func newClaimSelector(s *metav1.LabelSelector) (claimSelector, string) {
	if s == nil {
		return nil, ""
	}
	out := claimSelector{}
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, claimRequirement{key: k, op: metav1.LabelSelectorOpIn, values: map[string]bool{s.MatchLabels[k]: true}})
	}
	for i, e := range s.MatchExpressions {
		if e.Key == "" {
			return nil, fmt.Sprintf("matchExpressions[%d].key is empty", i)
		}
		switch e.Operator {
		case metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn:
			if len(e.Values) == 0 {
				return nil, fmt.Sprintf("matchExpressions[%d]: %s needs at least one value", i, e.Operator)
			}
		case metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist:
			if len(e.Values) > 0 {
				return nil, fmt.Sprintf("matchExpressions[%d]: %s takes no values", i, e.Operator)
			}
		default:
			return nil, fmt.Sprintf("matchExpressions[%d]: %q is not In, NotIn, Exists or DoesNotExist", i, e.Operator)
		}
		r := claimRequirement{key: e.Key, op: e.Operator, values: map[string]bool{}}
		for _, v := range e.Values {
			r.values[v] = true
		}
		out = append(out, r)
	}
	return out, ""
}

// matches reports whether the claims meet every requirement.
func (s claimSelector) matches(claims map[string]string) bool {
	for _, r := range s {
		v, ok := claims[r.key]
		switch r.op {
		case metav1.LabelSelectorOpIn:
			if !ok || !r.values[v] {
				return false
			}
		case metav1.LabelSelectorOpNotIn:
			if ok && r.values[v] {
				return false
			}
		case metav1.LabelSelectorOpExists:
			if !ok {
				return false
			}
		case metav1.LabelSelectorOpDoesNotExist:
			if ok {
				return false
			}
		}
	}
	return true
}

// Len is the number of overrides.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.overrides)
}

func (o *compiled) selectsCluster(c Cluster) bool {
	return (o.names == nil || o.names[c.Name]) &&
		(o.labels == nil || o.labels.Matches(labels.Set(c.Labels))) &&
		(o.claims == nil || o.claims.matches(c.Claims))
}

// selectsManifest reports whether one of the override's manifests entries matches m; without entries, every
// manifest of the template, not the dependencies delivered beside them: turning propagateDependencies on must
// not send an override written for the template's manifests to ConfigMaps and Secrets it never named (an entry
// that names one selects it).
func (o *compiled) selectsManifest(m template.Manifest) bool {
	if len(o.manifests) == 0 {
		return !m.Dependency
	}
	for _, e := range o.manifests {
		if ManifestMatches(e, m) {
			return true
		}
	}
	return false
}

// ManifestMatches reports whether a manifests entry of an override selects m: every field the entry sets is
// equal.
func ManifestMatches(e workv1alpha1.OverrideManifest, m template.Manifest) bool {
	return (e.Name == "" || e.Name == m.Object.GetName()) &&
		(e.Namespace == "" || e.Namespace == m.Object.GetNamespace()) &&
		(e.Group == "" || e.Group == m.GVK.Group) &&
		(e.Kind == "" || e.Kind == m.GVK.Kind)
}

// CheckTemplate reports what is wrong with the overrides for this template before any cluster is looked at:
// a manifests entry that matches no manifest, an image short form that would rewrite no image (checkImage),
// and a patch that touches a split field (at it or above it) of a manifest it selects. splitFields holds, by
// manifest index, the split fields as dotted paths (.spec.replicas).
func (s *Set) CheckTemplate(manifests []template.Manifest, splitFields map[int][]string) Problems {
	return s.check(manifests, splitFields, true)
}

// CheckDelivered is CheckTemplate for a revision that was delivered already (the completed revision a failed
// rollout rolls back to, or a joining cluster gets): an image short form that rewrites nothing is not held
// against it. Such an override changes nothing on the clusters, and a revision delivered before the manager
// refused them must stay one it can go back to.
func (s *Set) CheckDelivered(manifests []template.Manifest, splitFields map[int][]string) Problems {
	return s.check(manifests, splitFields, false)
}

func (s *Set) check(manifests []template.Manifest, splitFields map[int][]string, images bool) Problems {
	if s == nil {
		return nil
	}
	var problems Problems
	for _, o := range s.overrides {
		for j, e := range o.manifests {
			matched := false
			for _, m := range manifests {
				if ManifestMatches(e, m) {
					matched = true
					break
				}
			}
			if !matched {
				problems = append(problems, Problem{Override: o.name, Field: fmt.Sprintf("spec.overrides[%d].manifests[%d]", o.index, j),
					Message: "matches no manifest of the template"})
			}
		}
		if images && o.image != nil {
			problems = append(problems, o.checkImage(manifests)...)
		}
		for _, m := range manifests {
			if !o.selectsManifest(m) {
				continue
			}
			for _, sf := range splitFields[m.Index] {
				ptr := dottedToPointer(sf)
				for j, p := range o.patches {
					if p.path == ptr || strings.HasPrefix(ptr, p.path+"/") {
						problems = append(problems, Problem{Override: o.name, Field: fmt.Sprintf("spec.overrides[%d].patches[%d].path", o.index, j),
							Message: fmt.Sprintf("%s touches %s of %s, a split field: the split sets it per cluster (select other manifests, or patch below or beside it)", p.path, sf, m.ID())})
					}
				}
			}
		}
	}
	return problems
}

// maxNamed bounds the manifests a message lists.
const maxNamed = 5

// checkImage reports an image short form that would leave images as they are where the user means it to
// rewrite them, as "an override that changes nothing" is refused rather than ignored: a manifest its manifests
// entries select whose containers sit only outside the pod specs the short form reads (template.PodSpecPaths),
// and an override none of whose selected manifests has a container there. A manifest without containers anywhere
// (a ConfigMap, a Service) selected beside a workload is no problem: the override changes the workload.
func (o *compiled) checkImage(manifests []template.Manifest) Problems {
	field := fmt.Sprintf("spec.overrides[%d].image", o.index)
	var problems Problems
	var selected []string
	rewrites := false
	for _, m := range manifests {
		if !o.selectsManifest(m) {
			continue
		}
		selected = append(selected, m.ID())
		if hasPodContainers(m) {
			rewrites = true
			continue
		}
		// Only a manifest the override names is refused for containers elsewhere: selecting every manifest
		// (no manifests entries) beside such objects (a HelmRelease's values, a KEDA ScaledJob, a Prometheus)
		// means the workloads the short form reads, and must not stall the whole PlacementManifestWork.
		if len(o.manifests) == 0 {
			continue
		}
		if stray := strayContainers(m.Object.Object, nil); stray != nil {
			at := keysToPointer(stray)
			problems = append(problems, Problem{Override: o.name, Field: field, Message: fmt.Sprintf(
				"%s has containers at %s, where the image short form does not look (it reads the containers and initContainers of %s): "+
					"their images would stay as they are. Leave %s out of this override's manifests and rewrite its images with patches "+
					"(replace %s/0/image)", m.ID(), at, podSpecPlaces(m.GVK.GroupKind()), m.ID(), at)})
		}
	}
	if rewrites || len(problems) > 0 || len(selected) == 0 {
		// No manifest selected: a manifests entry that matches nothing is reported as such.
		return problems
	}
	names := strings.Join(selected, ", ")
	if len(selected) > maxNamed {
		names = fmt.Sprintf("%s and %d more", strings.Join(selected[:maxNamed], ", "), len(selected)-maxNamed)
	}
	return Problems{{Override: o.name, Field: field, Message: fmt.Sprintf(
		"finds no container to rewrite: it reads the containers and initContainers with an image of a Pod's .spec and of "+
			"the .spec.template.spec and .spec.jobTemplate.spec.template.spec of other kinds, and the manifests it selects (%s) have none. "+
			"Select the workloads whose images to rewrite in manifests, or remove image", names)}}
}

// keysToPointer turns keys (list indexes as numbers) into a JSON Pointer.
func keysToPointer(keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString("/")
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(k))
	}
	return b.String()
}

// dottedToPointer turns a dotted field path (.spec.replicas) into a JSON Pointer (/spec/replicas).
func dottedToPointer(path string) string {
	keys, err := template.FieldPathKeys(path)
	if err != nil {
		return ""
	}
	return keysToPointer(keys)
}
