package deploy

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// markerDirs are the directories `make manifests` gives controller-gen (paths=./api/... paths=./controllers/...).
var markerDirs = []string{"api", "controllers"}

var markerRE = regexp.MustCompile(`^\s*//\s*\+kubebuilder:rbac:(.+)$`)

// markerPermissions reads every +kubebuilder:rbac marker and returns the permissions they grant, one
// "group|resource|verb" entry each.
func markerPermissions(t *testing.T) []string {
	t.Helper()
	set := map[string]bool{}
	for _, dir := range markerDirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			s := bufio.NewScanner(f)
			for s.Scan() {
				m := markerRE.FindStringSubmatch(s.Text())
				if m == nil {
					continue
				}
				args := map[string][]string{}
				for _, kv := range strings.Split(m[1], ",") {
					k, v, _ := strings.Cut(kv, "=")
					for _, item := range strings.Split(v, ";") {
						args[k] = append(args[k], strings.Trim(item, `"`))
					}
				}
				for k := range args {
					if k != "groups" && k != "resources" && k != "verbs" {
						t.Fatalf("%s: marker %q uses %s=, which this test does not model yet", path, s.Text(), k)
					}
				}
				for _, g := range args["groups"] {
					for _, r := range args["resources"] {
						for _, v := range args["verbs"] {
							set[g+"|"+r+"|"+v] = true
						}
					}
				}
			}
			return s.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(set) == 0 {
		t.Fatal("no +kubebuilder:rbac markers found")
	}
	return sortedKeys(set)
}

// permissions expands rules into "group|resource|verb" entries (resourceNames and non-resource URLs, which the
// manager does not use, are kept apart so they cannot hide).
func permissions(rules []rbacv1.PolicyRule) []string {
	set := map[string]bool{}
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					key := g + "|" + res + "|" + v
					if len(r.ResourceNames) > 0 {
						key += "|names=" + strings.Join(r.ResourceNames, ";")
					}
					set[key] = true
				}
			}
		}
		for _, u := range r.NonResourceURLs {
			for _, v := range r.Verbs {
				set["url|"+u+"|"+v] = true
			}
		}
	}
	return sortedKeys(set)
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// roleFile reads a file holding one Role or ClusterRole.
func roleFile(t *testing.T, rel string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeAll(t, data)
	if len(objs) != 1 || (objs[0].GetKind() != "Role" && objs[0].GetKind() != "ClusterRole") {
		t.Fatalf("%s should hold exactly one Role or ClusterRole", rel)
	}
	return objs[0]
}

func rulesOf(t *testing.T, o *unstructured.Unstructured) []rbacv1.PolicyRule {
	t.Helper()
	if o.GetKind() == "ClusterRole" {
		cr := convert[rbacv1.ClusterRole](t, o)
		if cr.AggregationRule != nil {
			t.Errorf("%s aggregates other roles", describe(o))
		}
		return cr.Rules
	}
	return convert[rbacv1.Role](t, o).Rules
}

// TestRBACMatchesMarkers: config/rbac/role.yaml grants exactly what the +kubebuilder:rbac markers ask for
// (make verify checks that it is controller-gen's current output), and so do the chart's and config/default's
// ClusterRoles.
func TestRBACMatchesMarkers(t *testing.T) {
	want := markerPermissions(t)
	role := roleFile(t, "config/rbac/role.yaml")
	if role.GetKind() != "ClusterRole" {
		t.Fatalf("config/rbac/role.yaml holds a %s, want the ClusterRole controller-gen writes", role.GetKind())
	}
	if got := permissions(rulesOf(t, role)); !slices.Equal(got, want) {
		t.Errorf("config/rbac/role.yaml grants\n  %v\nthe markers ask for\n  %v\nrun `make manifests`", got, want)
	}

	for name, objs := range renderedRBACSources(t) {
		crs := ofKind(objs, "ClusterRole")
		if len(crs) != 1 {
			t.Errorf("%s: want one ClusterRole, got %d", name, len(crs))
			continue
		}
		if got := permissions(rulesOf(t, crs[0])); !slices.Equal(got, want) {
			t.Errorf("%s: the ClusterRole grants\n  %v\nthe markers ask for\n  %v\nrun `make chart`", name, got, want)
		}
		// The leader election Role is the one in config/rbac, verbatim.
		if roles := ofKind(objs, "Role"); len(roles) == 1 {
			wantLE := permissions(rulesOf(t, roleFile(t, "config/rbac/leader_election_role.yaml")))
			if got := permissions(rulesOf(t, roles[0])); !slices.Equal(got, wantLE) {
				t.Errorf("%s: the leader election Role grants %v, config/rbac/leader_election_role.yaml %v", name, got, wantLE)
			}
		} else {
			t.Errorf("%s: want one leader election Role, got %d", name, len(roles))
		}
	}
}

// TestRBACNoWildcards fails on any "*" in the rules of config/rbac, the chart and config/default, on verbs that
// let the manager grant itself more (escalate, bind, impersonate), and on bindings to roles that are not the
// manager's own.
func TestRBACNoWildcards(t *testing.T) {
	sources := renderedRBACSources(t)
	files, _ := filepath.Glob(filepath.Join(root, "config", "rbac", "*.yaml"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		sources[rel] = decodeAll(t, data)
	}

	for name, objs := range sources {
		roles := map[string]bool{}
		for _, o := range objs {
			if o.GetKind() != "Role" && o.GetKind() != "ClusterRole" {
				continue
			}
			roles[o.GetKind()+"/"+o.GetName()] = true
			for i, r := range rulesOf(t, o) {
				for field, values := range map[string][]string{
					"apiGroups": r.APIGroups, "resources": r.Resources, "verbs": r.Verbs,
					"resourceNames": r.ResourceNames, "nonResourceURLs": r.NonResourceURLs,
				} {
					for _, v := range values {
						if strings.Contains(v, "*") {
							t.Errorf("%s: %s rule %d has a wildcard in %s: %q", name, describe(o), i, field, v)
						}
					}
				}
				for _, v := range r.Verbs {
					if v == "escalate" || v == "bind" || v == "impersonate" {
						t.Errorf("%s: %s rule %d grants %s", name, describe(o), i, v)
					}
				}
				if len(r.NonResourceURLs) > 0 {
					t.Errorf("%s: %s rule %d grants non-resource URLs %v", name, describe(o), i, r.NonResourceURLs)
				}
			}
		}
		if strings.HasPrefix(name, "config/rbac/") {
			continue // bindings there name roles of other files
		}
		if len(roles) == 0 {
			t.Errorf("%s: no Role or ClusterRole", name)
		}
		for _, o := range objs {
			if o.GetKind() != "RoleBinding" && o.GetKind() != "ClusterRoleBinding" {
				continue
			}
			kind, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind")
			ref, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
			if !roles[kind+"/"+ref] {
				t.Errorf("%s: %s binds %s %s, which is not one of the manager's roles", name, describe(o), kind, ref)
			}
			subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			for _, s := range subjects {
				if s.(map[string]any)["kind"] != "ServiceAccount" {
					t.Errorf("%s: %s binds %v, want only the manager's ServiceAccount", name, describe(o), s)
				}
			}
		}
	}
}

// renderedRBACSources renders the chart with default and custom values (leader election on) and config/default.
func renderedRBACSources(t *testing.T) map[string][]*unstructured.Unstructured {
	t.Helper()
	out := map[string][]*unstructured.Unstructured{
		"chart with default values": render(t, "placement-manifestwork", "pmw-system"),
		"chart with custom values": render(t, "custom", "pmw-system", "--values", customValues,
			"--set", "replicas=2", "--set", "leaderElection.enabled=true", "--set", "leaderElection.namespace=leases"),
	}
	if kustomized := kustomizeOrNil(t, "config/default"); kustomized != nil {
		out["config/default"] = kustomized
	}
	return out
}

// kustomizeOrNil is kustomize without the skip: nil when kubectl is missing.
func kustomizeOrNil(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Logf("kubectl is not in PATH: %s not checked", dir)
		return nil
	}
	return kustomize(t, dir)
}
