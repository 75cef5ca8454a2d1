package fleet

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/text"
)

// events are the per-cluster problems of the object, by cluster name: a Warning for a cluster where it is
// degraded, a Normal event for one where it is progressing or nothing is reported yet; and a Warning when no
// cluster is selected at all.
func (v view) events(gk schema.GroupKind) []Event {
	if len(v.clusters) == 0 {
		msg := "no cluster is selected: nothing runs; check the namespace's placement and the ManagedClusterSets bound to it"
		if n := len(v.leaving); n > 0 {
			msg = fmt.Sprintf("no cluster is selected: only the %s it is leaving still %s it; check the namespace's placement and the ManagedClusterSets bound to it",
				text.Count(n, "cluster", "clusters"), text.Plural(n, "runs", "run"))
		}
		return []Event{{Type: corev1.EventTypeWarning, Reason: EventNoClusters, Message: msg}}
	}
	var out []Event
	for _, c := range v.clusters {
		reported := c.Applied || len(c.Feedback) > 0
		switch {
		case c.Health.State == health.Degraded:
			out = append(out, Event{Type: corev1.EventTypeWarning, Reason: EventClusterDegraded, Message: clusterMessage(gk, c, true), Cluster: c.Cluster})
		case c.Health.State == health.Progressing, c.Health.State == "" && !reported:
			out = append(out, Event{Type: corev1.EventTypeNormal, Reason: EventClusterProgressing, Message: clusterMessage(gk, c, false), Cluster: c.Cluster})
		}
	}
	return out
}

// clusterMessage is "cluster <name>: <counts>", with the health verdict's message when degraded or when there
// are no counts to give.
func clusterMessage(gk schema.GroupKind, c ClusterReport, degraded bool) string {
	counts := countsMessage(gk, c.Feedback)
	why := c.Health.Message
	switch {
	case counts == "" && why == "":
		why = "no status reported yet"
		if !c.Applied {
			why = "not applied yet"
		}
		return "cluster " + c.Cluster + ": " + why
	case counts == "":
		return "cluster " + c.Cluster + ": " + why
	case degraded && why != "":
		return "cluster " + c.Cluster + ": " + counts + ": " + why
	}
	return "cluster " + c.Cluster + ": " + counts
}

// countsMessage summarises the kind's counts on one cluster, "" when there are none.
func countsMessage(gk schema.GroupKind, f health.Feedback) string {
	if len(f) == 0 {
		return ""
	}
	switch gk {
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}, schema.GroupKind{Group: "apps", Kind: "StatefulSet"},
		schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		c := countsOf(f)
		if c.hasSpec {
			return fmt.Sprintf("%d of %d ready", c.ready, c.spec)
		}
		return fmt.Sprintf("%d ready", c.ready)
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		d := f.Count(health.DesiredNumberScheduled)
		return fmt.Sprintf("%d of %d ready", min(f.Count(health.NumberReady), d), d)
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		return fmt.Sprintf("%d active, %d succeeded, %d failed", f.Count(health.Active), f.Count(health.Succeeded), f.Count(health.Failed))
	}
	return ""
}
