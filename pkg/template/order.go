package template

import (
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ObjectRef names an object for ordering: its group, version, kind, namespace and name.
type ObjectRef struct {
	Group, Version, Kind, Namespace, Name string
}

// RefOf is o's ObjectRef.
func RefOf(o *unstructured.Unstructured) ObjectRef {
	gvk := o.GroupVersionKind()
	return ObjectRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: o.GetNamespace(), Name: o.GetName()}
}

// InstallRank is the position of a kind in Helm's install order (Namespaces, ServiceAccounts, Secrets,
// ConfigMaps, CRDs, RBAC, Services, workloads, ...); kinds Helm does not list come last.
func InstallRank(kind string) int {
	if i := slices.Index(releaseutil.InstallOrder, kind); i >= 0 {
		return i
	}
	return len(releaseutil.InstallOrder)
}

// CompareInstallOrder orders objects as Helm installs them, then by kind, group, namespace, name and version:
// the same objects get the same order whatever order they came in (kubectl pmw's bundles and the transparent
// mode's translations).
func CompareInstallOrder(a, b ObjectRef) int {
	if c := InstallRank(a.Kind) - InstallRank(b.Kind); c != 0 {
		return c
	}
	for _, p := range [][2]string{{a.Kind, b.Kind}, {a.Group, b.Group}, {a.Namespace, b.Namespace}, {a.Name, b.Name}, {a.Version, b.Version}} {
		if c := strings.Compare(p[0], p[1]); c != 0 {
			return c
		}
	}
	return 0
}
