// Package webhook is the interpreter review protocol: the JSON a ResourceInterpreter's webhook receives and
// answers (an InterpreterReview, after Karmada's ResourceInterpreterContext), and the pure functions over it
// that the manager and webhook authors share: checking an answer against its question, turning it into a
// health verdict, applying a ReviseReplica patch, and an http.Handler that speaks the envelope.
//
// It lives in pkg/ because it is a contract other modules import (a webhook written in Go decodes these
// types; internal/ could not be imported), and it stays pure: no context, no client, no network. Handler is
// an http.Handler, called by whatever server its author runs; it does no I/O of its own. The client that
// calls webhooks over HTTPS is internal/interpreterwebhook.
package webhook

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

const (
	// APIVersion is the version of the review envelope.
	APIVersion = "interpreter.work.open-cluster-management.io/v1alpha1"
	// Kind is the kind of the review envelope.
	Kind = "InterpreterReview"
)

// Review is the envelope of a question (Request) and of its answer (Response).
type Review struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Request    *Request  `json:"request,omitempty"`
	Response   *Response `json:"response,omitempty"`
}

// NewReview wraps a request in the envelope.
func NewReview(req Request) Review {
	return Review{APIVersion: APIVersion, Kind: Kind, Request: &req}
}

// Request is the question the manager asks. Which fields are set depends on the operation.
type Request struct {
	// UID identifies this round trip; the response must carry it back.
	UID string `json:"uid"`
	// Kind is the manifest's group, version and kind.
	Kind metav1.GroupVersionKind `json:"kind"`
	// Name and Namespace are the manifest's.
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// Operation is what is asked.
	Operation workv1alpha1.InterpreterOperation `json:"operation"`
	// Object is the manifest as delivered (InterpretHealth: with the cluster's share), or as in the template
	// (InterpretDependency, ReviseReplica, AggregateStatus).
	Object json.RawMessage `json:"object,omitempty"`
	// DesiredReplicas is the cluster's share the patch must set (ReviseReplica).
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`
	// Cluster is the managed cluster the manifest is judged on (InterpretHealth).
	Cluster string `json:"cluster,omitempty"`
	// Status is the status feedback the work agent reported for the manifest on Cluster, by the interpreter's
	// names (InterpretHealth).
	Status Status `json:"status,omitempty"`
	// ClusterStatuses are the reported status feedback of every cluster (AggregateStatus).
	ClusterStatuses []ClusterStatus `json:"clusterStatuses,omitempty"`
}

// ClusterStatus is the status feedback one cluster reported.
type ClusterStatus struct {
	Cluster string `json:"cluster"`
	Status  Status `json:"status,omitempty"`
}

// State is a health state a webhook may answer.
type State string

const (
	StateHealthy     State = "Healthy"
	StateProgressing State = "Progressing"
	StateDegraded    State = "Degraded"
	// StateCompleted is Healthy and finished (the workload ran to its end).
	StateCompleted State = "Completed"
	// StateFailed is Degraded and finished.
	StateFailed State = "Failed"
)

// PatchType is the kind of patch a response carries.
type PatchType string

// PatchTypeJSONPatch is RFC 6902, the only kind there is.
const PatchTypeJSONPatch PatchType = "JSONPatch"

// Response is the webhook's answer.
type Response struct {
	// UID is the request's.
	UID string `json:"uid"`
	// Successful is false when the webhook could not answer; Message says why.
	Successful bool `json:"successful"`
	// Message is why the webhook failed, or the health message (InterpretHealth).
	Message string `json:"message,omitempty"`

	// Healthy is the short health answer (InterpretHealth); State, when set, wins over it.
	Healthy *bool `json:"healthy,omitempty"`
	// State is the full health answer (InterpretHealth).
	State State `json:"state,omitempty"`
	// Reason is a CamelCase word for the state (InterpretHealth).
	Reason string `json:"reason,omitempty"`

	// Replicas is the object's replicas, if the webhook knows it (ReviseReplica).
	Replicas *int32 `json:"replicas,omitempty"`
	// Patch is an RFC 6902 JSON patch that sets the object's replicas to DesiredReplicas (ReviseReplica). On
	// the wire it is either a JSON array or a base64 string of one.
	Patch Patch `json:"patch,omitempty"`
	// PatchType is JSONPatch.
	PatchType PatchType `json:"patchType,omitempty"`

	// Dependencies are the hub objects the manifest needs (InterpretDependency).
	Dependencies []Dependency `json:"dependencies,omitempty"`

	// Status are the rolled-up fields (AggregateStatus).
	Status []workv1alpha1.AggregatedField `json:"status,omitempty"`
}

// Dependency is a hub object, in the PlacementManifestWork's namespace, that a manifest needs.
type Dependency struct {
	// Kind is ConfigMap, Secret or ServiceAccount.
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// DependencyKinds are the kinds a Dependency may name.
var DependencyKinds = []string{"ConfigMap", "Secret", "ServiceAccount"}

// Patch is a JSON patch. It decodes from a JSON array or from a base64 string (as Kubernetes encodes []byte)
// and encodes as the JSON array.
type Patch []byte

// MarshalJSON writes the patch as it is, a JSON array.
func (p Patch) MarshalJSON() ([]byte, error) {
	if len(p) == 0 {
		return []byte("null"), nil
	}
	if !json.Valid(p) {
		return nil, fmt.Errorf("patch is not JSON")
	}
	return []byte(p), nil
}

// UnmarshalJSON reads a JSON array or a base64 string of one.
func (p *Patch) UnmarshalJSON(data []byte) error {
	trimmed := strings.TrimSpace(string(data))
	switch {
	case trimmed == "null":
		*p = nil
	case strings.HasPrefix(trimmed, "["):
		*p = append((*p)[:0], trimmed...)
	case strings.HasPrefix(trimmed, `"`):
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return fmt.Errorf("patch is a string but not base64: %w", err)
		}
		*p = raw
	default:
		return fmt.Errorf("patch is neither a JSON array nor a base64 string")
	}
	return nil
}

// Serves tells whether the webhook answers the operation.
func Serves(hook *workv1alpha1.InterpreterWebhook, op workv1alpha1.InterpreterOperation) bool {
	if hook == nil {
		return false
	}
	for _, o := range hook.Operations {
		if o == op {
			return true
		}
	}
	return false
}

// Limits on what an answer may carry into a PlacementManifestWork's status.
const (
	maxReason       = 64
	maxMessage      = 1024
	maxDependencies = 64
	maxCounts       = 10
)

var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// Check tells whether the response answers the request: same uid, successful, and the fields the operation
// needs, well formed. Its errors say what is wrong with the answer.
func Check(req Request, resp *Response) error {
	if resp == nil {
		return fmt.Errorf("no response in the review")
	}
	// Neither uid is quoted: the request's is new on every call, and so is often a wrong one (another call's), so
	// a message that quoted them would differ for the same mistake.
	switch {
	case resp.UID == "" && req.UID != "":
		return fmt.Errorf("response has no uid, want the request's")
	case resp.UID != req.UID:
		return fmt.Errorf("response uid is not the request's")
	}
	if !resp.Successful {
		if resp.Message == "" {
			return fmt.Errorf("not successful, without a message")
		}
		return fmt.Errorf("not successful: %s", truncate(resp.Message, maxMessage))
	}
	switch req.Operation {
	case workv1alpha1.OperationInterpretHealth:
		_, err := resp.Verdict()
		return err
	case workv1alpha1.OperationInterpretDependency:
		return checkDependencies(resp.Dependencies)
	case workv1alpha1.OperationReviseReplica:
		if len(resp.Patch) == 0 {
			return fmt.Errorf("no patch")
		}
		if resp.PatchType != PatchTypeJSONPatch {
			return fmt.Errorf("patchType %q, want %s", resp.PatchType, PatchTypeJSONPatch)
		}
		return nil
	case workv1alpha1.OperationAggregateStatus:
		return checkAggregated(resp.Status)
	default:
		return fmt.Errorf("unknown operation %q", req.Operation)
	}
}

func checkDependencies(deps []Dependency) error {
	if len(deps) > maxDependencies {
		return fmt.Errorf("%d dependencies, at most %d", len(deps), maxDependencies)
	}
	for _, d := range deps {
		if !slices.Contains(DependencyKinds, d.Kind) {
			return fmt.Errorf("dependency kind %q is none of %s", d.Kind, strings.Join(DependencyKinds, ", "))
		}
		if errs := validation.IsDNS1123Subdomain(d.Name); len(errs) > 0 {
			return fmt.Errorf("dependency %s name %q: %s", d.Kind, d.Name, strings.Join(errs, "; "))
		}
	}
	return nil
}

func checkAggregated(fields []workv1alpha1.AggregatedField) error {
	for _, f := range fields {
		if f.Name == "" {
			return fmt.Errorf("an aggregated field has no name")
		}
		switch f.Operation {
		case workv1alpha1.AggregationSum, workv1alpha1.AggregationMin, workv1alpha1.AggregationMax:
			if len(f.Counts) > 0 {
				return fmt.Errorf("aggregated field %s: %s carries counts", f.Name, f.Operation)
			}
		case workv1alpha1.AggregationCount:
			if f.Value != nil {
				return fmt.Errorf("aggregated field %s: Count carries a value", f.Name)
			}
			if len(f.Counts) > maxCounts {
				return fmt.Errorf("aggregated field %s: %d counts, at most %d", f.Name, len(f.Counts), maxCounts)
			}
		default:
			return fmt.Errorf("aggregated field %s: operation %q is none of Sum, Min, Max, Count", f.Name, f.Operation)
		}
		if f.Clusters < 0 {
			return fmt.Errorf("aggregated field %s: %d clusters", f.Name, f.Clusters)
		}
	}
	return nil
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
