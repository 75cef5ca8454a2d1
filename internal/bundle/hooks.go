package bundle

import (
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// hookEvents are the events of an object's helm.sh/hook annotation; nil when it is not a hook.
func hookEvents(o *unstructured.Unstructured) []string {
	v, ok := o.GetAnnotations()[release.HookAnnotation]
	if !ok {
		return nil
	}
	var events []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			events = append(events, e)
		}
	}
	return events
}

// keptHookEvents are the hook events a PlacementManifestWork can honour, in its own way: a cluster "installs"
// when it first gets the work and "upgrades" when the template changes, and the manifests are applied together.
var keptHookEvents = []string{
	string(release.HookPreInstall), string(release.HookPostInstall),
	string(release.HookPreUpgrade), string(release.HookPostUpgrade),
}

// applyHookPolicy keeps or drops Helm hooks as the package documentation says, with a warning for each.
func applyHookPolicy(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, []Warning) {
	var out []*unstructured.Unstructured
	var warnings []Warning
	for _, o := range objs {
		events := hookEvents(o)
		if events == nil {
			out = append(out, o)
			continue
		}
		list := strings.Join(events, ",")
		switch {
		case slices.Contains(events, string(release.HookTest)) || slices.Contains(events, "test-success"):
			warnings = append(warnings, Warning{Object: objectID(o),
				Message: "dropped: a Helm test (helm.sh/hook: " + list + "); the fleet has no helm test step"})
		case slices.ContainsFunc(events, func(e string) bool { return slices.Contains(keptHookEvents, e) }):
			msg := "kept as an ordinary manifest: a Helm " + list + " hook; every cluster applies it with the other " +
				"manifests, in no particular order, when it first gets them and on every change, and keeps it " +
				"(hook-delete-policy does not apply)"
			if o.GetKind() == "Job" {
				msg += "; a Job cannot be changed in place, so rename it when its spec changes"
			}
			warnings = append(warnings, Warning{Object: objectID(o), Message: msg})
			out = append(out, o)
		default:
			warnings = append(warnings, Warning{Object: objectID(o),
				Message: "dropped: a Helm " + list + " hook; a PlacementManifestWork has no delete or rollback step to run it at"})
		}
	}
	return out, warnings
}
