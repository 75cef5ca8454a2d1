package template

import (
	"slices"
	"testing"
)

func TestCompareInstallOrder(t *testing.T) {
	want := []ObjectRef{
		{Version: "v1", Kind: "Namespace", Name: "shop"},
		{Version: "v1", Kind: "ServiceAccount", Namespace: "shop", Name: "web"},
		{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "a"},
		{Version: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "b"},
		{Version: "v1", Kind: "Service", Namespace: "shop", Name: "web"},
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "shop", Name: "web"},
		{Group: "example.io", Version: "v1", Kind: "Gadget", Namespace: "shop", Name: "g"}, // not Helm's: last, by kind
		{Group: "example.io", Version: "v1", Kind: "Widget", Namespace: "shop", Name: "w"},
		{Group: "example.io", Version: "v2", Kind: "Widget", Namespace: "shop", Name: "w"},
	}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, CompareInstallOrder)
	if !slices.Equal(got, want) {
		t.Errorf("order:\n got %v\nwant %v", got, want)
	}
}
