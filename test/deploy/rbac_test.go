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

// markerDirs are the directories `make manifests` gives controller-gen (paths=./api/... paths=./controllers/...
// paths=./internal/fleet/...).
var markerDirs = []string{"api", "controllers", filepath.Join("internal", "fleet")}

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
// and the leader election Role) with the code that needs it. Keep it in step with the code:
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
	"|namespaces|get":                                                          {unreached, fleetMode + ": whether the hub namespace of a fleet namespace exists (the manager's cache)"},
	"|namespaces|list":                                                         {unreached, fleetMode + ": the cache's informer of hub namespaces"},
	"|namespaces|watch":                                                        {unreached, fleetMode + ": the cache's informer of hub namespaces"},
	"work.open-cluster-management.io|placementmanifestworks|create":            {unreached, fleetMode + ": server-side applying a fleet namespace's generated PMW creates it"},
	"work.open-cluster-management.io|placementmanifestworks|delete":            {unreached, fleetMode + ": a fleet namespace that opts out has its generated PMW deleted"},
	"cluster.open-cluster-management.io|placements|get":                        {unreached, fleetMode + ": reading the generated Placement"},
	"cluster.open-cluster-management.io|placements|patch":                      {unreached, fleetMode + ": server-side applying the generated Placement"},
	"cluster.open-cluster-management.io|placements|delete":                     {unreached, fleetMode + ": a fleet namespace that opts out has its generated Placement deleted"},
	"cluster.open-cluster-management.io|placementdecisions|get":                {unreached, fleetMode + ": reading the generated Placement's decisions"},
	"|configmaps|watch":                                                        {requested, dependencyWatch},
	"|secrets|watch":                                                           {requested, dependencyWatch},
	"|serviceaccounts|watch":                                                   {requested, dependencyWatch},
}

// listFallback is why the run makes no list request: client-go's informers stream their initial list over the
// watch (WatchListClient) from API servers that support it, such as envtest's; against older ones, or with
// the feature off, they list.
const listFallback = "the cache's informer, when the API server cannot stream the initial list over the watch"

// fleetMode is why the run makes no request of the transparent mode's controller (internal/fleet): it runs only
// when the manager has --fleet-kubeconfig, which TestManagerRunsWithChartRBAC does not set (test/integration's
// fleet envtest runs it).
const fleetMode = "the transparent mode's controller (internal/fleet, only with --fleet-kubeconfig; the run does not set it)"

// dependencyGet and dependencyWatch are why the manager reads ConfigMaps, Secrets and ServiceAccounts: the
// dependencies a PMW with spec.propagateDependencies carries along are read from the API server (APIReader, never
// cached), and watched as metadata only so a change wakes the PMWs of their namespace.
const (
	dependencyGet   = "reading the dependencies of a PMW with propagateDependencies (APIReader); the run has no such PMW (test/integration has)"
	dependencyWatch = "the metadata-only informer that wakes the PMWs carrying dependencies when one changes"
)

// TestRBACGrantsOnlyWhatIsListed fails when the manager's RBAC (markers and leader election Role) and
// managerGrants differ: a new or widened marker needs a line there saying what uses it.
func TestRBACGrantsOnlyWhatIsListed(t *testing.T) {
	set := map[string]bool{}
	for _, p := range markerPermissions(t) {
		set[p] = true
	}
	for _, p := range permissions(rulesOf(t, roleFile(t, "config/rbac/leader_election_role.yaml"))) {
		set[p] = true
	}
	for _, p := range sortedKeys(set) {
		if _, ok := managerGrants[p]; !ok {
			t.Errorf("the manager's RBAC grants %s, which managerGrants does not list: name the code that uses it there, or drop it from the +kubebuilder:rbac markers (config/rbac/leader_election_role.yaml for leader election)", p)
		}
	}
	for p := range managerGrants {
		if !set[p] {
			t.Errorf("managerGrants lists %s, which the manager's RBAC does not grant", p)
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
