package health

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/template"
)

// TestConditionRulesMatch: a user's condition rules apply to a manifest as OCM's work agent applies them
// (ocm v1.2.0 pkg/work/helper FindManifestConfiguration): group and resource equal, name and namespace equal or
// matched by a * wildcard, and only the first matching manifestConfig that has condition rules counts.
func TestConditionRulesMatch(t *testing.T) {
	T := metav1.ConditionTrue
	rule := func(group, resource, namespace, name string, conditions ...string) workv1.ManifestConfigOption {
		o := workv1.ManifestConfigOption{ResourceIdentifier: workv1.ResourceIdentifier{Group: group, Resource: resource, Namespace: namespace, Name: name}}
		for _, c := range conditions {
			o.ConditionRules = append(o.ConditionRules, workv1.ConditionRule{Condition: c, Type: workv1.CelConditionExpressionsType, CelExpressions: []string{"true"}})
		}
		return o
	}
	webConfigMap := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"default"}}`
	widget := func(name string) string {
		return `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"` + name + `","namespace":"default"}}`
	}
	// Chaos Mesh's NetworkChaos is served as networkchaos; the guess from the kind is networkchaoses.
	chaos := `{"apiVersion":"chaos-mesh.org/v1alpha1","kind":"NetworkChaos","metadata":{"name":"delay","namespace":"default"}}`
	reported := func(resource string) *workv1.ManifestCondition {
		mc := status(T, nil)
		mc.ResourceMeta = workv1.ManifestResourceMeta{Group: "chaos-mesh.org", Version: "v1alpha1", Kind: "NetworkChaos", Resource: resource, Name: "delay", Namespace: "default"}
		return mc
	}
	pending := func(id, condition string) Verdict {
		return Verdict{State: Progressing, Reason: ReasonConditionRulePending, Message: id + ": condition " + condition + " is not True yet"}
	}
	cases := map[string]struct {
		manifest string
		configs  []workv1.ManifestConfigOption
		status   *workv1.ManifestCondition
		want     Verdict
	}{
		"a rule for Service web is not one for ConfigMap web": {
			manifest: webConfigMap,
			configs:  []workv1.ManifestConfigOption{rule("", "services", "default", "web", "Ready")},
			want:     Verdict{State: Healthy},
		},
		"a rule for ConfigMap web": {
			manifest: webConfigMap,
			configs:  []workv1.ManifestConfigOption{rule("", "configmaps", "default", "web", "Ready")},
			want:     pending("ConfigMap default/web", "Ready"),
		},
		"the resource is matched exactly, not case-insensitively": {
			manifest: webConfigMap,
			configs:  []workv1.ManifestConfigOption{rule("", "ConfigMaps", "default", "web", "Ready")},
			want:     Verdict{State: Healthy},
		},
		"another group": {
			manifest: widget("w"),
			configs:  []workv1.ManifestConfigOption{rule("other.io", "widgets", "default", "w", "Ready")},
			want:     Verdict{State: Healthy},
		},
		"a name wildcard": {
			manifest: widget("web-1"),
			configs:  []workv1.ManifestConfigOption{rule("example.io", "widgets", "default", "web-*", "Ready")},
			want:     pending("Widget.example.io default/web-1", "Ready"),
		},
		"a name wildcard that does not match": {
			manifest: widget("api-1"),
			configs:  []workv1.ManifestConfigOption{rule("example.io", "widgets", "default", "web-*", "Ready")},
			want:     Verdict{State: Healthy},
		},
		"any name in any namespace": {
			manifest: widget("w"),
			configs:  []workv1.ManifestConfigOption{rule("example.io", "widgets", "*", "*", "Ready")},
			want:     pending("Widget.example.io default/w", "Ready"),
		},
		"only the first matching config with condition rules counts": {
			manifest: widget("w"),
			configs: []workv1.ManifestConfigOption{
				rule("example.io", "widgets", "default", "w"), // no condition rules: skipped
				rule("example.io", "widgets", "*", "*", "Synced"),
				rule("example.io", "widgets", "default", "w", "Ready"),
			},
			status: withCondition(status(T, nil), "Synced", T),
			want:   Verdict{State: Healthy},
		},
		"a well-known-conditions rule the agent has no rule for sets nothing": {
			manifest: widget("w"),
			configs: []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{Group: "example.io", Resource: "widgets", Namespace: "default", Name: "w"},
				ConditionRules:     []workv1.ConditionRule{{Condition: workv1.ManifestComplete, Type: workv1.WellKnownConditionsType}},
			}},
			want: Verdict{State: Healthy},
		},
		"the resource the agent reports, not the guess from the kind": {
			manifest: chaos,
			configs:  []workv1.ManifestConfigOption{rule("chaos-mesh.org", "networkchaos", "default", "delay", "Ready")},
			status:   reported("networkchaos"),
			want:     pending("NetworkChaos.chaos-mesh.org default/delay", "Ready"),
		},
		"the guess from the kind when the agent reports no resource": {
			manifest: chaos,
			configs:  []workv1.ManifestConfigOption{rule("chaos-mesh.org", "networkchaoses", "default", "delay", "Ready")},
			status:   reported(""),
			want:     pending("NetworkChaos.chaos-mesh.org default/delay", "Ready"),
		},
		"a rule for the guessed resource when the agent reports another": {
			manifest: chaos,
			configs:  []workv1.ManifestConfigOption{rule("chaos-mesh.org", "networkchaoses", "default", "delay", "Ready")},
			status:   reported("networkchaos"),
			want:     Verdict{State: Healthy},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := Inputs([]template.Manifest{parse(t, tc.manifest)}, tc.configs)[0]
			in.Status = tc.status
			if in.Status == nil {
				in.Status = status(T, nil)
			}
			if diff := cmp.Diff(tc.want, Manifest(in)); diff != "" {
				t.Errorf("Manifest (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWildcardMatch checks wildcardMatch against the regular expression OCM's agent builds.
func TestWildcardMatch(t *testing.T) {
	agent := func(value, pattern string) bool {
		if value == pattern || pattern == "*" {
			return true
		}
		re := regexp.MustCompile(strings.ReplaceAll("^"+regexp.QuoteMeta(pattern)+"$", `\*`, ".*"))
		return re.MatchString(value)
	}
	values := []string{"", "a", "web", "web-1", "web-1-canary", "api-web", "w.b", "wxb", "aa", "aaa"}
	patterns := []string{"", "*", "web", "web-*", "*-web", "*web*", "w*b", "w.b", "a*a", "*a*a*", "**", "web-*-canary", "x*"}
	for _, v := range values {
		for _, p := range patterns {
			if got, want := wildcardMatch(v, p), agent(v, p); got != want {
				t.Errorf("wildcardMatch(%q, %q) = %v, the agent says %v", v, p, got, want)
			}
		}
	}
}

// agentView is the manifestConfigs entry OCM's agent makes of configs for a resource (ocm v1.2.0
// FindManifestConfiguration): the first matching entry's feedback rules, condition rules and update strategy
// that has any, and the last matching entry's feedback scrape type.
func agentView(configs []workv1.ManifestConfigOption, id workv1.ResourceIdentifier) workv1.ManifestConfigOption {
	out := workv1.ManifestConfigOption{ResourceIdentifier: id}
	for _, c := range configs {
		if !matches(c.ResourceIdentifier, id) {
			continue
		}
		if len(out.FeedbackRules) == 0 {
			out.FeedbackRules = c.FeedbackRules
		}
		if len(out.ConditionRules) == 0 {
			out.ConditionRules = c.ConditionRules
		}
		if out.UpdateStrategy == nil {
			out.UpdateStrategy = c.UpdateStrategy
		}
		out.FeedbackScrapeType = c.FeedbackScrapeType
	}
	return out
}

// TestManifestConfigsAsTheAgentSees: whatever the user's manifestConfigs, the agent finds the manager's
// feedback rule for each interpreted manifest, after the user's own feedback rules for it, and everything else
// the user configured for it is as the user wrote it.
func TestManifestConfigsAsTheAgentSees(t *testing.T) {
	web := workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "default", Name: "web"}
	var ourPaths []workv1.JsonPath
	for _, p := range rules[schema.GroupKind{Group: "apps", Kind: "Deployment"}].paths {
		ourPaths = append(ourPaths, workv1.JsonPath{Name: FeedbackPrefix + p.Name, Path: p.Path})
	}
	ourPaths = append(ourPaths, workv1.JsonPath{Name: FeedbackPrefix + TemplateHash, Path: templateHashPath.Path})
	ours := workv1.FeedbackRule{Type: workv1.JSONPathsType, JsonPaths: ourPaths}
	wellKnown := workv1.FeedbackRule{Type: workv1.WellKnownStatusType}
	ssa := &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply}
	ready := []workv1.ConditionRule{{Condition: "Ready", Type: workv1.CelConditionExpressionsType, CelExpressions: []string{"true"}}}
	entry := func(namespace, name string, mutate func(*workv1.ManifestConfigOption)) workv1.ManifestConfigOption {
		o := workv1.ManifestConfigOption{ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: namespace, Name: name}}
		if mutate != nil {
			mutate(&o)
		}
		return o
	}
	withFeedback := func(o *workv1.ManifestConfigOption) { o.FeedbackRules = []workv1.FeedbackRule{wellKnown} }
	cases := map[string]struct {
		user []workv1.ManifestConfigOption
		want workv1.ManifestConfigOption
	}{
		"no user entry": {
			want: workv1.ManifestConfigOption{ResourceIdentifier: web, FeedbackRules: []workv1.FeedbackRule{ours}},
		},
		"the user's entry for the deployment": {
			user: []workv1.ManifestConfigOption{entry("default", "web", func(o *workv1.ManifestConfigOption) { withFeedback(o); o.UpdateStrategy = ssa })},
			want: workv1.ManifestConfigOption{ResourceIdentifier: web, FeedbackRules: []workv1.FeedbackRule{wellKnown, ours}, UpdateStrategy: ssa},
		},
		"a wildcard entry with feedback rules first": {
			user: []workv1.ManifestConfigOption{entry("*", "*", withFeedback), entry("default", "web", func(o *workv1.ManifestConfigOption) { o.ConditionRules = ready })},
			want: workv1.ManifestConfigOption{ResourceIdentifier: web, FeedbackRules: []workv1.FeedbackRule{wellKnown, ours}, ConditionRules: ready},
		},
		"an exact entry without feedback rules before a wildcard with some": {
			user: []workv1.ManifestConfigOption{entry("default", "web", func(o *workv1.ManifestConfigOption) { o.UpdateStrategy = ssa }), entry("default", "w*", withFeedback)},
			want: workv1.ManifestConfigOption{ResourceIdentifier: web, FeedbackRules: []workv1.FeedbackRule{wellKnown, ours}, UpdateStrategy: ssa},
		},
		"a wildcard entry that watches instead of polling": {
			user: []workv1.ManifestConfigOption{entry("*", "*", func(o *workv1.ManifestConfigOption) { o.FeedbackScrapeType = workv1.FeedbackWatchType })},
			want: workv1.ManifestConfigOption{ResourceIdentifier: web, FeedbackRules: []workv1.FeedbackRule{ours}, FeedbackScrapeType: workv1.FeedbackWatchType},
		},
		"an entry whose resource is spelled in another case is not the deployment's": {
			user: []workv1.ManifestConfigOption{{ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "Deployments", Namespace: "default", Name: "web"}, FeedbackRules: []workv1.FeedbackRule{wellKnown}}},
			want: workv1.ManifestConfigOption{ResourceIdentifier: web, FeedbackRules: []workv1.FeedbackRule{ours}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var before []workv1.ManifestConfigOption
			for i := range tc.user {
				before = append(before, *tc.user[i].DeepCopy())
			}
			got := ManifestConfigs([]template.Manifest{parse(t, deploymentJSON)}, tc.user)
			if diff := cmp.Diff(tc.want, agentView(got, web)); diff != "" {
				t.Errorf("what the agent sees (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.user); diff != "" {
				t.Errorf("ManifestConfigs modified the user's entries (-before +after):\n%s", diff)
			}
		})
	}
}
