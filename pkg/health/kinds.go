package health

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// Interpreter is what the manager knows of one kind of manifest. The built-in kinds and the users'
// ResourceInterpreters (pkg/interpreter) answer through it, so the planner, health and status ask one
// question: what is this kind.
type Interpreter interface {
	// Name says where the interpretation comes from, for messages: "built-in" or "ResourceInterpreter <name>".
	Name() string
	// ReplicaPaths are the integer fields a Split divides when its fieldPath is not set, as dotted paths; the
	// first is the one the status and health follow. Empty: .spec.replicas.
	ReplicaPaths() []string
	// FeedbackPaths are the status values the agent must report for m, named without FeedbackPrefix; none when
	// the manager does not judge m by feedback (a Service that is not a LoadBalancer).
	FeedbackPaths(m template.Manifest) []workv1.JsonPath
	// Health judges a manifest on one cluster from its own feedback values (FeedbackPrefix stripped). It is
	// asked only once the agent reported the manifest applied, and not for a split manifest whose share is 0.
	// ok is false when it has no opinion: condition rules, then the agent's Available condition decide.
	Health(in ManifestInput, f Feedback) (v Verdict, ok bool)
	// Aggregation says how reported values roll up across clusters into status.manifests[].aggregated.
	Aggregation() []workv1alpha1.InterpreterAggregation
	// Retain are Kubernetes JSONPaths of fields the managed cluster owns; the agent leaves them as changed
	// there.
	Retain() []string
}

// Interpreters finds the interpreter of a manifest's kind: a user's for its group, kind and version when one
// was added, else the built-in one. The nil *Interpreters has the built-in kinds only. An Interpreters is not
// changed once built, so reconciles may share one.
type Interpreters struct {
	user map[schema.GroupKind][]versioned
}

type versioned struct {
	versions    []string // all when empty
	interpreter Interpreter
}

// NewInterpreters returns an empty set: the built-in kinds only until Add.
func NewInterpreters() *Interpreters {
	return &Interpreters{user: map[schema.GroupKind][]versioned{}}
}

// Add makes in the interpreter of the kind gk in the given versions (all when empty). The first added for a
// version wins; resolving conflicts between users' interpreters is the caller's (pkg/interpreter.Resolve).
func (s *Interpreters) Add(gk schema.GroupKind, versions []string, in Interpreter) {
	s.user[gk] = append(s.user[gk], versioned{versions: versions, interpreter: in})
}

// For returns the interpreter of gvk, nil when the kind is neither built in nor described by a user.
func (s *Interpreters) For(gvk schema.GroupVersionKind) Interpreter {
	if s != nil {
		for _, v := range s.user[gvk.GroupKind()] {
			if len(v.versions) == 0 || slices.Contains(v.versions, gvk.Version) {
				return v.interpreter
			}
		}
	}
	return Builtin(gvk.GroupKind())
}

// Len is the number of users' interpreters.
func (s *Interpreters) Len() int {
	if s == nil {
		return 0
	}
	n := 0
	for _, vs := range s.user {
		n += len(vs)
	}
	return n
}

// Builtin returns the built-in interpreter of a kind, nil when there is none.
func Builtin(gk schema.GroupKind) Interpreter {
	rule, ok := rules[gk]
	if !ok {
		return nil
	}
	return builtin{gk: gk, rule: rule}
}

// builtin serves a kind the manager knows: Deployment, StatefulSet, ReplicaSet, DaemonSet, Job, CronJob, Pod,
// PersistentVolumeClaim, Service, Ingress and HorizontalPodAutoscaler.
type builtin struct {
	gk   schema.GroupKind
	rule kindRule
}

func (b builtin) Name() string { return "built-in" }

func (b builtin) ReplicaPaths() []string {
	switch b.gk.Kind {
	case "Job":
		return []string{".spec.parallelism"}
	case "CronJob":
		return []string{".spec.jobTemplate.spec.parallelism"}
	case "Deployment", "StatefulSet", "ReplicaSet":
		return []string{workv1alpha1.DefaultSplitFieldPath}
	}
	return nil
}

func (b builtin) FeedbackPaths(m template.Manifest) []workv1.JsonPath {
	if !Interpreted(m) {
		return nil
	}
	return b.rule.paths
}

func (b builtin) Health(in ManifestInput, f Feedback) (Verdict, bool) {
	if !in.interpreted(f) {
		return Verdict{}, false
	}
	return interpret(in.Manifest.ID(), in, f), true
}

func (b builtin) Aggregation() []workv1alpha1.InterpreterAggregation { return nil }

func (b builtin) Retain() []string { return nil }
