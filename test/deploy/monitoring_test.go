package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// leaderElectionID reads the manager's leader election ID (the Lease's name, and the name label of
// leader_election_master_status) from cmd/main.go.
func leaderElectionID(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "cmd", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`LeaderElectionID:\s*"([^"]+)"`).FindSubmatch(data)
	if m == nil {
		t.Fatal("cmd/main.go sets no LeaderElectionID literal: has the manager's wiring moved?")
	}
	return string(m[1])
}

// alertRules returns a PrometheusRule's rules by alert name.
func alertRules(t *testing.T, o *unstructured.Unstructured) map[string]map[string]any {
	t.Helper()
	groups, _, _ := unstructured.NestedSlice(o.Object, "spec", "groups")
	out := map[string]map[string]any{}
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			rule := r.(map[string]any)
			out[fmt.Sprint(rule["alert"])] = rule
		}
	}
	return out
}

// checkAlerts checks the alert expressions: PlacementManifestWorkDegraded is per PMW, by the metric's own
// namespace and name labels; PlacementManifestWorkNoLeader (when wantNoLeader) fires both when no replica
// leads and when there is no series at all, that is when no manager runs or is scraped.
func checkAlerts(t *testing.T, name string, o *unstructured.Unstructured, wantNoLeader bool) {
	t.Helper()
	rules := alertRules(t, o)
	degraded := fmt.Sprint(rules["PlacementManifestWorkDegraded"]["expr"])
	if !strings.Contains(degraded, `by (namespace, name) (placementmanifestwork_clusters{health="degraded"})`) {
		t.Errorf("%s: PlacementManifestWorkDegraded %q does not alert per PMW by the metric's namespace and name", name, degraded)
	}
	summary, _, _ := unstructured.NestedString(rules["PlacementManifestWorkDegraded"], "annotations", "summary")
	if !strings.Contains(summary, "kubectl describe pmw -n {{ $labels.namespace }} {{ $labels.name }}") {
		t.Errorf("%s: PlacementManifestWorkDegraded's summary %q does not name the PMW", name, summary)
	}
	rule, ok := rules["PlacementManifestWorkNoLeader"]
	if ok != wantNoLeader {
		t.Errorf("%s: PlacementManifestWorkNoLeader rendered: %v, want %v", name, ok, wantNoLeader)
	}
	if !ok {
		return
	}
	series := fmt.Sprintf(`leader_election_master_status{name=%q}`, leaderElectionID(t))
	expr := strings.Join(strings.Fields(fmt.Sprint(rule["expr"])), " ")
	if want := fmt.Sprintf("max(%s) < 1 or absent(%s)", series, series); expr != want {
		t.Errorf("%s: PlacementManifestWorkNoLeader is %q, want %q: it must fire when no replica leads and when no manager runs at all (no series)", name, expr, want)
	}
}

// checkHonorLabels checks every endpoint of a ServiceMonitor keeps the scraped metrics' labels, so the PMW
// metrics' namespace label stays the PMW's namespace.
func checkHonorLabels(t *testing.T, name string, sm *unstructured.Unstructured) {
	t.Helper()
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(endpoints) == 0 {
		t.Errorf("%s: the ServiceMonitor has no endpoint", name)
	}
	for i, e := range endpoints {
		if honor, _, _ := unstructured.NestedBool(e.(map[string]any), "honorLabels"); !honor {
			t.Errorf("%s: ServiceMonitor endpoint %d lacks honorLabels: true, so Prometheus would replace the PMW's namespace label with the manager's", name, i)
		}
	}
}

func groupsOf(o *unstructured.Unstructured) []any {
	groups, _, _ := unstructured.NestedSlice(o.Object, "spec", "groups")
	return groups
}

// TestMonitoring checks the chart's and config/prometheus' ServiceMonitor and alerts, and that the alerts of
// docs/operating.md are the ones they ship; all are applied to the hub with a dry run.
func TestMonitoring(t *testing.T) {
	c, w := hubClient(t)
	ns := restrictedNamespace(t, c, "pmw-monitoring")

	chart := render(t, "placement-manifestwork", ns, "--set", "metrics.serviceMonitor.enabled=true",
		"--set", "metrics.prometheusRule.enabled=true", "--set", "metrics.prometheusRule.labels.release=prometheus")
	checkHonorLabels(t, "the chart", one(t, chart, "ServiceMonitor"))
	chartRule := one(t, chart, "PrometheusRule")
	checkAlerts(t, "the chart", chartRule, true)
	if chartRule.GetLabels()["release"] != "prometheus" {
		t.Errorf("the chart's PrometheusRule labels %v lack metrics.prometheusRule.labels", chartRule.GetLabels())
	}
	dryRunApply(t, c, w, chart)

	// Without leader election there is no leader metric to alert on.
	single := render(t, "single", ns, "--set", "replicas=1", "--set", "leaderElection.enabled=false",
		"--set", "metrics.prometheusRule.enabled=true")
	checkAlerts(t, "the chart without leader election", one(t, single, "PrometheusRule"), false)

	kustomized := kustomize(t, "config/prometheus")
	if got, want := kinds(kustomized), []string{"PrometheusRule", "ServiceMonitor"}; !cmp.Equal(got, want) {
		t.Errorf("config/prometheus renders %v, want %v", got, want)
	}
	sm := one(t, kustomized, "ServiceMonitor")
	checkHonorLabels(t, "config/prometheus", sm)
	rule := one(t, kustomized, "PrometheusRule")
	checkAlerts(t, "config/prometheus", rule, true)
	if diff := cmp.Diff(groupsOf(chartRule), groupsOf(rule)); diff != "" {
		t.Errorf("the alerts of the chart and config/prometheus differ (-chart +config/prometheus):\n%s", diff)
	}

	// config/prometheus' ServiceMonitor scrapes config/default's metrics Service, in its namespace.
	deployed := kustomize(t, "config/default")
	svc := convert[corev1.Service](t, one(t, deployed, "Service"))
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if !selects(selector, svc.Labels) || sm.GetNamespace() != svc.Namespace {
		t.Errorf("config/prometheus' ServiceMonitor (%s, selector %v) does not select config/default's metrics Service (%s, labels %v)",
			sm.GetNamespace(), selector, svc.Namespace, svc.Labels)
	}
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != svc.Spec.Ports[0].Name {
		t.Errorf("config/prometheus' ServiceMonitor endpoints %v, want the Service's port %s", endpoints, svc.Spec.Ports[0].Name)
	}
	dryRunApply(t, c, w, ensureNamespaces(t, c, append(ofKind(deployed, "Namespace"), kustomized...)))

	// docs/operating.md shows the same alerts.
	data, err := os.ReadFile(filepath.Join(root, "docs", "operating.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented *unstructured.Unstructured
	for _, block := range yamlBlockRE.FindAllStringSubmatch(string(data), -1) {
		for _, o := range decodeAll(t, []byte(block[1])) {
			if o.GetKind() == "PrometheusRule" {
				documented = o
			}
		}
	}
	if documented == nil {
		t.Fatal("docs/operating.md shows no PrometheusRule")
	}
	if diff := cmp.Diff(groupsOf(rule), groupsOf(documented)); diff != "" {
		t.Errorf("the alerts of docs/operating.md are not config/prometheus' (-config/prometheus +docs):\n%s", diff)
	}
}
