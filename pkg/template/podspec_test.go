package template

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestPodSpecPath(t *testing.T) {
	cases := map[schema.GroupKind][]string{
		{Kind: "Pod"}:                            {"spec"},
		{Group: "example.com", Kind: "Pod"}:      {"spec", "template", "spec"},
		{Group: "batch", Kind: "CronJob"}:        {"spec", "jobTemplate", "spec", "template", "spec"},
		{Group: "apps", Kind: "Deployment"}:      {"spec", "template", "spec"},
		{Group: "batch", Kind: "Job"}:            {"spec", "template", "spec"},
		{Group: "apps.kruise.io", Kind: "Clone"}: {"spec", "template", "spec"},
	}
	for gk, want := range cases {
		if got := PodSpecPath(gk); !slices.Equal(got, want) {
			t.Errorf("PodSpecPath(%v) = %v, want %v", gk, got, want)
		}
	}
}
