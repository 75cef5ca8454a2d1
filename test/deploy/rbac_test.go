package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// managerMarkerDirs are the directories whose markers `make manifests` makes the manager's ClusterRole of
// (config/rbac/role.yaml: paths=./api/... paths=./controllers/...), fleetMarkerDirs those of transparent mode's
// ClusterRole (config/rbac/fleet/role.yaml: paths=./internal/fleet/...), which is granted only with transparent
// mode: without --fleet-kubeconfig the manager uses none of it.
var (
	managerMarkerDirs = []string{"api", "controllers"}
	fleetMarkerDirs   = []string{filepath.Join("internal", "fleet")}
)

var markerRE = regexp.MustCompile(`^\s*//\s*\+kubebuilder:rbac:(.+)$`)

// markerPermissions reads every +kubebuilder:rbac marker of the Go files under dirs and returns the permissions
// they grant, one "group|resource|verb" entry each.
func markerPermissions(t *testing.T, dirs []string) []string {
	t.Helper()
	set := map[string]bool{}
	for _, dir := range dirs {
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
		t.Fatalf("no +kubebuilder:rbac markers found in %v", dirs)
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

// isFleetRole tells transparent mode's ClusterRole (the chart's <fullname>-manager-fleet, config/rbac/fleet's
// placement-manifestwork-fleet-role) from the manager's.
func isFleetRole(o *unstructured.Unstructured) bool {
	return strings.HasSuffix(o.GetName(), "-manager-fleet") || strings.HasSuffix(o.GetName(), "-fleet-role")
}

// managerServiceAccount is the ServiceAccount the manager's Deployment among objs runs as, as a binding's
// subject names it: "namespace/name".
func managerServiceAccount(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	d := managerDeployment(t, objs)
	return d.Namespace + "/" + d.Spec.Template.Spec.ServiceAccountName
}

// boundTo tells whether a ClusterRoleBinding among objs binds the ClusterRole role to the ServiceAccount sa
// ("namespace/name").
func boundTo(t *testing.T, objs []*unstructured.Unstructured, role *unstructured.Unstructured, sa string) bool {
	t.Helper()
	for _, o := range ofKind(objs, "ClusterRoleBinding") {
		b := convert[rbacv1.ClusterRoleBinding](t, o)
		if b.RoleRef.Kind != "ClusterRole" || b.RoleRef.Name != role.GetName() {
			continue
		}
		for _, s := range b.Subjects {
			if s.Kind == "ServiceAccount" && s.Namespace+"/"+s.Name == sa {
				return true
			}
		}
	}
	return false
}

// TestRBACMatchesMarkers: config/rbac/role.yaml grants exactly what the +kubebuilder:rbac markers of
// controllers/ ask for, and config/rbac/fleet/role.yaml what those of internal/fleet/ ask for (make verify
// checks that both are controller-gen's current output). The chart and config/default hold the manager's
// ClusterRole, and transparent mode's beside it only in transparent mode, each bound to the manager's
// ServiceAccount: without transparent mode, no role of theirs grants a permission only transparent mode uses.
func TestRBACMatchesMarkers(t *testing.T) {
	wantManager, wantFleet := markerPermissions(t, managerMarkerDirs), markerPermissions(t, fleetMarkerDirs)
	for _, f := range []struct {
		file, name string
		want       []string
	}{
		{"config/rbac/role.yaml", "manager-role", wantManager},
		{"config/rbac/fleet/role.yaml", "fleet-role", wantFleet},
	} {
		role := roleFile(t, f.file)
		if role.GetKind() != "ClusterRole" || role.GetName() != f.name {
			t.Errorf("%s holds the %s %s, want the ClusterRole %s controller-gen writes", f.file, role.GetKind(), role.GetName(), f.name)
			continue
		}
		if got := permissions(rulesOf(t, role)); !slices.Equal(got, f.want) {
			t.Errorf("%s grants\n  %v\nthe markers ask for\n  %v\nrun `make manifests`", f.file, got, f.want)
		}
	}
	// What only transparent mode uses: a role granting any of it without transparent mode grants too much.
	fleetOnly := map[string]bool{}
	for _, p := range wantFleet {
		if !slices.Contains(wantManager, p) {
			fleetOnly[p] = true
		}
	}
	if len(fleetOnly) == 0 {
		t.Error("internal/fleet's markers ask for nothing beyond the manager's: the check of the installs without transparent mode below proves nothing")
	}

	for name, src := range renderedRBACSources(t) {
		sa := managerServiceAccount(t, src.objs)
		crs := ofKind(src.objs, "ClusterRole")
		var fleetRoles, managerRoles int
		for _, cr := range crs {
			want, what := wantManager, "the markers of controllers/"
			if isFleetRole(cr) {
				want, what = wantFleet, "the markers of internal/fleet/"
				fleetRoles++
			} else {
				managerRoles++
			}
			if got := permissions(rulesOf(t, cr)); !slices.Equal(got, want) {
				t.Errorf("%s: %s grants\n  %v\n%s ask for\n  %v\nrun `make chart`", name, describe(cr), got, what, want)
			}
			if !boundTo(t, src.objs, cr, sa) {
				t.Errorf("%s: no ClusterRoleBinding binds %s to the manager's ServiceAccount %s", name, describe(cr), sa)
			}
		}
		if managerRoles != 1 {
			t.Errorf("%s: want the manager's ClusterRole once, got %d ClusterRoles %v", name, managerRoles, names(crs))
		}
		if want := map[bool]int{false: 0, true: 1}[src.fleet]; fleetRoles != want {
			t.Errorf("%s (transparent mode %v): want %d of transparent mode's ClusterRole, got %d (ClusterRoles %v)", name, src.fleet, want, fleetRoles, names(crs))
		}
		if !src.fleet {
			for _, o := range append(ofKind(src.objs, "Role"), crs...) {
				for _, p := range permissions(rulesOf(t, o)) {
					if fleetOnly[p] {
						t.Errorf("%s: %s grants %s, which only transparent mode uses (--fleet-kubeconfig, off here)", name, describe(o), p)
					}
				}
			}
		}
		// The leader election Role is the one in config/rbac, verbatim.
		if roles := ofKind(src.objs, "Role"); len(roles) == 1 {
			wantLE := permissions(rulesOf(t, roleFile(t, "config/rbac/leader_election_role.yaml")))
			if got := permissions(rulesOf(t, roles[0])); !slices.Equal(got, wantLE) {
				t.Errorf("%s: the leader election Role grants %v, config/rbac/leader_election_role.yaml %v", name, got, wantLE)
			}
		} else {
			t.Errorf("%s: want one leader election Role, got %d", name, len(roles))
		}
	}
}

// TestRBACFleetKustomization: config/rbac/fleet, which config/default leaves out, holds transparent mode's
// ClusterRole (the markers of internal/fleet/) and binds it to config/default's ServiceAccount, and the hub
// accepts it.
func TestRBACFleetKustomization(t *testing.T) {
	objs := kustomize(t, "config/rbac/fleet")
	if got, want := kinds(objs), []string{"ClusterRole", "ClusterRoleBinding"}; !slices.Equal(got, want) {
		t.Fatalf("config/rbac/fleet renders %v, want %v", got, want)
	}
	role := one(t, objs, "ClusterRole")
	if !isFleetRole(role) || !strings.HasPrefix(role.GetName(), "placement-manifestwork-") {
		t.Errorf("config/rbac/fleet's ClusterRole is named %s, want placement-manifestwork-fleet-role", role.GetName())
	}
	if got, want := permissions(rulesOf(t, role)), markerPermissions(t, fleetMarkerDirs); !slices.Equal(got, want) {
		t.Errorf("config/rbac/fleet's ClusterRole grants\n  %v\nthe markers of internal/fleet/ ask for\n  %v", got, want)
	}
	if deployed := kustomizeOrNil(t, "config/default"); deployed != nil {
		if sa := managerServiceAccount(t, deployed); !boundTo(t, objs, role, sa) {
			t.Errorf("config/rbac/fleet does not bind %s to config/default's ServiceAccount %s", role.GetName(), sa)
		}
	}
	c, w := hubClient(t)
	dryRunApply(t, c, w, objs)
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

// TestRBACNoWildcards fails on any "*" in the rules of config/rbac, the chart and config/default, on verbs that
// let the manager grant itself more (escalate, bind, impersonate), and on bindings to roles that are not the
// manager's own.
func TestRBACNoWildcards(t *testing.T) {
	sources := map[string][]*unstructured.Unstructured{}
	for name, src := range renderedRBACSources(t) {
		sources[name] = src.objs
	}
	files, _ := filepath.Glob(filepath.Join(root, "config", "rbac", "*.yaml"))
	fleetFiles, _ := filepath.Glob(filepath.Join(root, "config", "rbac", "fleet", "*.yaml"))
	for _, f := range append(files, fleetFiles...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		sources[rel] = decodeAll(t, data)
	}
	if fleet := kustomizeOrNil(t, "config/rbac/fleet"); fleet != nil {
		sources["config/rbac/fleet (kustomized)"] = fleet
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
		if strings.HasPrefix(name, "config/rbac/") && !strings.HasSuffix(name, "(kustomized)") {
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

// rbacSource is an install's RBAC objects and its manager's Deployment; fleet says whether it runs transparent
// mode (the manager gets --fleet-kubeconfig), so that transparent mode's ClusterRole belongs there.
type rbacSource struct {
	objs  []*unstructured.Unstructured
	fleet bool
}

// renderedRBACSources renders the chart with default and custom values (leader election on), in both of
// transparent mode's settings (a fleet API server the chart installs, an external one), and config/default.
func renderedRBACSources(t *testing.T) map[string]rbacSource {
	t.Helper()
	out := map[string]rbacSource{
		"chart with default values": {objs: render(t, "placement-manifestwork", "pmw-system")},
		"chart with custom values": {objs: render(t, "custom", "pmw-system", "--values", customValues,
			"--set", "replicas=2", "--set", "leaderElection.enabled=true", "--set", "leaderElection.namespace=leases")},
		"chart with fleetAPIServer.enabled": {fleet: true,
			objs: render(t, "placement-manifestwork", "pmw-system", "--set", "fleetAPIServer.enabled=true")},
		"chart with fleetAPIServer.kubeconfigSecret": {fleet: true,
			objs: render(t, "custom", "pmw-system", "--values", customValues, "--set", "leaderElection.enabled=true",
				"--set", "fleetAPIServer.kubeconfigSecret=fleet")},
	}
	if kustomized := kustomizeOrNil(t, "config/default"); kustomized != nil {
		out["config/default"] = rbacSource{objs: kustomized}
	}
	for name, src := range out {
		args := managerContainer(t, managerDeployment(t, src.objs)).Args
		if got := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--fleet-kubeconfig") }); got != src.fleet {
			t.Fatalf("%s: the manager runs with --fleet-kubeconfig: %v, want %v (args %q)", name, got, src.fleet, args)
		}
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

// proof is how TestManagerRunsWithChartRBAC shows that the manager needs a permission.
type proof int

const (
	// requested: its run makes the request; the API server's audit log must show it.
	requested proof = iota
	// admitted: not a request of its own; an admission plugin of the test hub checks it on another request of
	// the run, which would be refused without it.
	admitted
	// unreached: the run does not reach the code that makes the request; the use says why.
	unreached
)

// grant is one permission the manager's RBAC grants and the code that uses it.
type grant struct {
	proof proof
	use   string
}

// managerGrants lists every permission of the manager's RBAC (the ClusterRole of the +kubebuilder:rbac markers
// of controllers/ and the leader election Role) with the code that needs it. Keep it in step with the code:
// TestRBACGrantsOnlyWhatIsListed fails when the RBAC grants anything not listed here, and
// TestManagerRunsWithChartRBAC when the manager makes a request not listed here or does not make a listed
// request it should have made (proof requested), so a verb the code no longer uses cannot stay granted
// unnoticed.
var managerGrants = map[string]grant{
	"work.open-cluster-management.io|placementmanifestworks|list":              {unreached, listFallback},
	"work.open-cluster-management.io|placementmanifestworks|watch":             {requested, "the cache's informer"},
	"work.open-cluster-management.io|placementmanifestworks|patch":             {requested, "adding and removing the finalizer (a merge patch)"},
	"work.open-cluster-management.io|placementmanifestworks|get":               {unreached, "retryStatus reads the PMW from the API server (APIReader) when a status update conflicts; the run has no conflict (test/faults forces one)"},
	"work.open-cluster-management.io|placementmanifestworks/status|update":     {requested, "the status write (Status().Update, guarded by the resourceVersion)"},
	"work.open-cluster-management.io|placementmanifestworks/finalizers|update": {admitted, "createPlacement makes the PMW the default Placement's controller with blockOwnerDeletion, which OwnerReferencesPermissionEnforcement allows only with this"},
	"work.open-cluster-management.io|resourceinterpreters|list":                {unreached, listFallback},
	"work.open-cluster-management.io|resourceinterpreters|watch":               {requested, "the cache's informer: each reconcile resolves the kinds' interpreters, and their status controller"},
	"work.open-cluster-management.io|resourceinterpreters/status|update":       {unreached, "the interpreters' status controller writes Ready; the run has no ResourceInterpreter (test/integration has)"},
	"work.open-cluster-management.io|manifestworks|list":                       {unreached, listFallback},
	"work.open-cluster-management.io|manifestworks|watch":                      {requested, "the cache's informer (works with the owner label)"},
	"work.open-cluster-management.io|manifestworks|create":                     {requested, "a decided cluster's new work"},
	"work.open-cluster-management.io|manifestworks|update":                     {requested, "a template change (manifestwork.Merge, guarded by the resourceVersion)"},
	"work.open-cluster-management.io|manifestworks|delete":                     {requested, "a cluster that leaves, or the PMW's deletion (with a UID precondition)"},
	"work.open-cluster-management.io|manifestworks|get":                        {requested, "adopt: a create found the name taken, so the work is read from the API server (APIReader) to tell its own from a foreign one"},
	"apps|controllerrevisions|list":                                            {unreached, listFallback},
	"apps|controllerrevisions|watch":                                           {requested, "the cache's informer (the PMWs' revisions, by their label)"},
	"apps|controllerrevisions|create":                                          {requested, "a PMW's first template, and each template change, is a new revision"},
	"apps|controllerrevisions|patch":                                           {unreached, "a template that comes back renumbers its revision (a merge patch: the data is immutable); the run does not revert one (test/integration does)"},
	"apps|controllerrevisions|delete":                                          {unreached, "revisions beyond revisionHistoryLimit are pruned; the run keeps fewer than 10 (test/integration prunes)"},
	"apps|controllerrevisions|get":                                             {unreached, "a create found the name taken (a cache that lags behind this manager's create), so the revision is read from the API server (APIReader)"},
	"cluster.open-cluster-management.io|placements|list":                       {unreached, listFallback},
	"cluster.open-cluster-management.io|placements|watch":                      {requested, "the cache's informer"},
	"cluster.open-cluster-management.io|placements|create":                     {requested, "createPlacement: the Placement of a PMW without placementRef"},
	"cluster.open-cluster-management.io|placementdecisions|list":               {unreached, listFallback},
	"cluster.open-cluster-management.io|placementdecisions|watch":              {requested, "the cache's informer"},
	"cluster.open-cluster-management.io|managedclusters|list":                  {unreached, listFallback},
	"cluster.open-cluster-management.io|managedclusters|watch":                 {requested, "the cache's informer"},
	"cluster.open-cluster-management.io|addonplacementscores|list":             {unreached, listFallback},
	"cluster.open-cluster-management.io|addonplacementscores|watch":            {requested, "the cache's informer"},
	"events.k8s.io|events|create":                                              {requested, "the manager's events on PMWs (client-go tools/events)"},
	"events.k8s.io|events|patch":                                               {unreached, "the same event again within its series window is patched (client-go tools/events); the run records each event once"},
	"coordination.k8s.io|leases|get":                                           {requested, "leader election (client-go LeaseLock)"},
	"coordination.k8s.io|leases|create":                                        {requested, "leader election (client-go LeaseLock)"},
	"coordination.k8s.io|leases|update":                                        {requested, "leader election: renewing and, on SIGTERM, releasing the Lease"},
	"|events|create":                                                           {requested, "leader election's event on the Lease (\"... became leader\", client-go tools/record)"},
	"|events|patch":                                                            {unreached, "leader election's event repeated is patched (client-go tools/record); the run is elected once"},
	"|configmaps|get":                                                          {unreached, dependencyGet},
	"|secrets|get":                                                             {unreached, dependencyGet},
	"|serviceaccounts|get":                                                     {unreached, dependencyGet},
	"|configmaps|list":                                                         {unreached, listFallback},
	"|secrets|list":                                                            {unreached, listFallback},
	"|serviceaccounts|list":                                                    {unreached, listFallback},
	"|configmaps|watch":                                                        {requested, dependencyWatch},
	"|secrets|watch":                                                           {requested, dependencyWatch},
	"|serviceaccounts|watch":                                                   {requested, dependencyWatch},
}

// listFallback is why the run makes no list request: client-go's informers stream their initial list over the
// watch (WatchListClient) from API servers that support it, such as envtest's; against older ones, or with
// the feature off, they list.
const listFallback = "the cache's informer, when the API server cannot stream the initial list over the watch"

// fleetGrants lists every permission of transparent mode's ClusterRole (the +kubebuilder:rbac markers of
// internal/fleet/, config/rbac/fleet/role.yaml) with the code of the transparent mode's controller that needs
// it. That controller runs only when the manager has --fleet-kubeconfig, and only then does the chart grant the
// role; TestManagerRunsWithChartRBAC runs without it, on the manager's ClusterRole alone, so none of these is
// proven by an audit log (test/integration's fleet envtest and test/e2e run the controller, with other
// credentials). TestRBACGrantsOnlyWhatIsListed fails when the role and this list differ. A read "through the
// cache" is served by the cache's informer (list, watch) and makes no get request of its own.
var fleetGrants = map[string]string{
	"|namespaces|get":   "gather: whether the hub namespace of a fleet namespace exists (through the cache)",
	"|namespaces|list":  "the cache's informer of hub namespaces",
	"|namespaces|watch": "the cache's informer of hub namespaces",
	"work.open-cluster-management.io|placementmanifestworks|get":           "gather reads the generated PMW (through the cache)",
	"work.open-cluster-management.io|placementmanifestworks|list":          "the cache's informer; deletePlacement lists a namespace's PMWs, to keep a generated Placement that a handed-over PMW uses",
	"work.open-cluster-management.io|placementmanifestworks|watch":         "the cache's informer (the controller watches PMWs)",
	"work.open-cluster-management.io|placementmanifestworks|create":        "server-side applying a fleet namespace's generated PMW creates it",
	"work.open-cluster-management.io|placementmanifestworks|patch":         "server-side applying the generated PMW",
	"work.open-cluster-management.io|placementmanifestworks|delete":        "a fleet namespace that opts out has its generated PMW deleted",
	"work.open-cluster-management.io|placementmanifestworks/status|update": "setDelivered: the generated PMW's FleetObjectsDelivered condition",
	"work.open-cluster-management.io|manifestworks|get":                    "with list and watch in the marker; readHub reads the works through the cache (list), so the controller makes no get request",
	"work.open-cluster-management.io|manifestworks|list":                   "the cache's informer: readHub lists the generated PMW's works by their label",
	"work.open-cluster-management.io|manifestworks|watch":                  "the cache's informer (the controller watches works)",
	"work.open-cluster-management.io|resourceinterpreters|list":            "the cache's informer: interpretersOf lists the ResourceInterpreters",
	"work.open-cluster-management.io|resourceinterpreters|watch":           "the cache's informer (the controller watches ResourceInterpreters)",
	"cluster.open-cluster-management.io|placements|get":                    "gather reads the generated Placement (through the cache)",
	"cluster.open-cluster-management.io|placements|list":                   "the cache's informer",
	"cluster.open-cluster-management.io|placements|watch":                  "the cache's informer (the controller watches Placements)",
	"cluster.open-cluster-management.io|placements|create":                 "server-side applying a namespace's generated Placement creates it",
	"cluster.open-cluster-management.io|placements|patch":                  "server-side applying the generated Placement",
	"cluster.open-cluster-management.io|placements|delete":                 "a namespace that opts out, or no longer selects clusters, has its generated Placement deleted",
	"cluster.open-cluster-management.io|placementdecisions|get":            "with list and watch in the marker; readHub reads the decisions through the cache (list), so the controller makes no get request",
	"cluster.open-cluster-management.io|placementdecisions|list":           "the cache's informer: readHub lists the generated Placement's decisions by their label",
	"cluster.open-cluster-management.io|placementdecisions|watch":          "the cache's informer (the controller watches decisions)",
	"cluster.open-cluster-management.io|managedclusters|list":              "the cache's informer: readHub tells the clusters that are away",
	"cluster.open-cluster-management.io|managedclusters|watch":             "the cache's informer (the controller watches availability changes)",
	"apps|controllerrevisions|get":                                         "revisionGenerations reads a revision's data from the API server (HubReader): the cache leaves it out",
	"apps|controllerrevisions|list":                                        "the cache's informer: revisionGenerations lists the generated PMW's revisions by their label",
	"apps|controllerrevisions|watch":                                       "the cache's informer",
	"events.k8s.io|events|create":                                          "the events on the generated PMW (HubRecorder, client-go tools/events)",
	"events.k8s.io|events|patch":                                           "the same event again within its series window is patched (client-go tools/events)",
}

// dependencyGet and dependencyWatch are why the manager reads ConfigMaps, Secrets and ServiceAccounts: the
// dependencies a PMW with spec.propagateDependencies carries along are read from the API server (APIReader, never
// cached), and watched as metadata only so a change wakes the PMWs of their namespace.
const (
	dependencyGet   = "reading the dependencies of a PMW with propagateDependencies (APIReader); the run has no such PMW (test/integration has)"
	dependencyWatch = "the metadata-only informer that wakes the PMWs carrying dependencies when one changes"
)

// TestRBACGrantsOnlyWhatIsListed fails when the manager's RBAC (the markers of controllers/ and the leader
// election Role) and managerGrants differ, or transparent mode's (the markers of internal/fleet/) and
// fleetGrants: a new or widened marker needs a line there saying what uses it.
func TestRBACGrantsOnlyWhatIsListed(t *testing.T) {
	manager := map[string]bool{}
	for _, p := range markerPermissions(t, managerMarkerDirs) {
		manager[p] = true
	}
	for _, p := range permissions(rulesOf(t, roleFile(t, "config/rbac/leader_election_role.yaml"))) {
		manager[p] = true
	}
	for _, p := range sortedKeys(manager) {
		if _, ok := managerGrants[p]; !ok {
			t.Errorf("the manager's RBAC grants %s, which managerGrants does not list: name the code that uses it there, or drop it from the +kubebuilder:rbac markers of controllers/ (config/rbac/leader_election_role.yaml for leader election)", p)
		}
	}
	for p := range managerGrants {
		if !manager[p] {
			t.Errorf("managerGrants lists %s, which the manager's RBAC does not grant", p)
		}
	}

	fleet := map[string]bool{}
	for _, p := range markerPermissions(t, fleetMarkerDirs) {
		fleet[p] = true
		if _, ok := fleetGrants[p]; !ok {
			t.Errorf("transparent mode's ClusterRole grants %s, which fleetGrants does not list: name the code of internal/fleet that uses it there, or drop it from its +kubebuilder:rbac markers", p)
		}
	}
	for p := range fleetGrants {
		if !fleet[p] {
			t.Errorf("fleetGrants lists %s, which transparent mode's ClusterRole does not grant", p)
		}
	}
}

// auditEvent is what test/deploy reads of an audit.k8s.io/v1 Event.
type auditEvent struct {
	Verb             string `json:"verb"`
	RequestURI       string `json:"requestURI"`
	ImpersonatedUser *struct {
		Username string `json:"username"`
	} `json:"impersonatedUser"`
	ObjectRef *struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// auditedRequests reads the hub's audit log and returns the requests user made while impersonated (the
// manager of TestManagerRunsWithChartRBAC), as "group|resource[/subresource]|verb" with the HTTP codes of the
// answers; requests without an object (discovery) are left out.
func auditedRequests(t *testing.T, user string) map[string][]int {
	t.Helper()
	data, err := os.ReadFile(auditLogPath())
	if err != nil {
		t.Fatalf("reading the hub's audit log: %v", err)
	}
	out := map[string][]int{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e auditEvent
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("decoding the audit log: %v\n%s", err, line)
		}
		if e.ImpersonatedUser == nil || e.ImpersonatedUser.Username != user || e.ObjectRef == nil {
			continue
		}
		resource := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			resource += "/" + e.ObjectRef.Subresource
		}
		code := 0
		if e.ResponseStatus != nil {
			code = e.ResponseStatus.Code
		}
		key := e.ObjectRef.APIGroup + "|" + resource + "|" + e.Verb
		out[key] = append(out[key], code)
	}
	return out
}

// mayExecuteAs asks the hub whether the ServiceAccount ns/name may execute-as an executor, as OCM's ManifestWork
// webhook asks of whoever writes a ManifestWork with one.
func mayExecuteAs(t *testing.T, c client.Client, ns, name string) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:" + ns + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: "cluster1", Verb: "execute-as", Group: "work.open-cluster-management.io",
			Resource: "manifestworks", Name: "system:serviceaccount:team-a:deployer",
		},
	}}
	if err := c.Create(context.Background(), sar); err != nil {
		t.Fatal(err)
	}
	return sar.Status.Allowed
}

// TestExecuteAsRBAC checks the grant of execute-as to the manager for both installs: the chart's
// rbac.executeAs gives the release's own ServiceAccount the rule of config/policies/manager_execute_as.yaml,
// which in turn names config/default's ServiceAccount; without them the manager may not execute as anyone.
func TestExecuteAsRBAC(t *testing.T) {
	c, _ := hubClient(t)
	ns := restrictedNamespace(t, c, "pmw-exec")
	data, err := os.ReadFile(filepath.Join(root, "config", "policies", "manager_execute_as.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	policyObjs := decodeAll(t, data)
	want := permissions(rulesOf(t, one(t, policyObjs, "ClusterRole")))

	for name, tc := range map[string]struct {
		set     []string
		allowed bool
	}{
		"rbac.executeAs":    {[]string{"rbac.executeAs=true"}, true},
		"default values":    {nil, false},
		"a named account":   {[]string{"rbac.executeAs=true", "serviceAccount.name=pmw-named"}, true},
		"rbac.create false": {[]string{"rbac.executeAs=true", "rbac.create=false", "serviceAccount.create=false", "serviceAccount.name=elsewhere"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			var args []string
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			release := "exec-" + rand.String(5)
			objs := render(t, release, ns, args...)
			for _, o := range objs {
				switch o.GetKind() {
				case "ServiceAccount", "ClusterRole", "ClusterRoleBinding":
					apply(t, c, o)
				}
			}
			for _, cr := range ofKind(objs, "ClusterRole") {
				if strings.HasSuffix(cr.GetName(), "-execute-as") {
					if got := permissions(rulesOf(t, cr)); !slices.Equal(got, want) {
						t.Errorf("the chart's %s grants %v, config/policies/manager_execute_as.yaml %v", cr.GetName(), got, want)
					}
				}
			}
			sa := convert[appsv1.Deployment](t, one(t, objs, "Deployment")).Spec.Template.Spec.ServiceAccountName
			eventually(t, 10*time.Second, "the RBAC to take effect", func() error {
				if got := mayExecuteAs(t, c, ns, sa); got != tc.allowed {
					return fmt.Errorf("the release's ServiceAccount %s may execute-as: %v, want %v", sa, got, tc.allowed)
				}
				return nil
			})
		})
	}

	// config/policies binds config/default's ServiceAccount.
	deployed := kustomizeOrNil(t, "config/default")
	if deployed == nil {
		return
	}
	d := convert[appsv1.Deployment](t, one(t, deployed, "Deployment"))
	if mayExecuteAs(t, c, d.Namespace, d.Spec.Template.Spec.ServiceAccountName) {
		t.Fatalf("config/default's ServiceAccount may execute-as before config/policies is applied")
	}
	for _, o := range policyObjs {
		apply(t, c, o)
	}
	eventually(t, 10*time.Second, "config/policies' execute-as to take effect", func() error {
		if !mayExecuteAs(t, c, d.Namespace, d.Spec.Template.Spec.ServiceAccountName) {
			return fmt.Errorf("config/default's ServiceAccount %s/%s may not execute-as: manager_execute_as.yaml binds another", d.Namespace, d.Spec.Template.Spec.ServiceAccountName)
		}
		return nil
	})
}
