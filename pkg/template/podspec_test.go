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

func TestPodSpecPaths(t *testing.T) {
	template := []string{"spec", "template", "spec"}
	jobTemplate := []string{"spec", "jobTemplate", "spec", "template", "spec"}
	cases := map[schema.GroupKind][][]string{
		{Kind: "Pod"}:                                 {{"spec"}},
		{Group: "example.com", Kind: "Pod"}:           {template, jobTemplate},
		{Group: "batch", Kind: "CronJob"}:             {jobTemplate, template},
		{Group: "apps", Kind: "Deployment"}:           {template, jobTemplate},
		{Group: "argoproj.io", Kind: "Rollout"}:       {template, jobTemplate},
		{Group: "apps.kruise.io", Kind: "CloneSet"}:   {template, jobTemplate},
		{Group: "example.com", Kind: "NightlyReport"}: {template, jobTemplate},
	}
	for gk, want := range cases {
		got := PodSpecPaths(gk)
		if !slices.EqualFunc(got, want, slices.Equal[[]string]) {
			t.Errorf("PodSpecPaths(%v) = %v, want %v", gk, got, want)
		}
		if !slices.Equal(got[0], PodSpecPath(gk)) {
			t.Errorf("PodSpecPaths(%v) does not start with PodSpecPath's %v", gk, PodSpecPath(gk))
		}
	}
}
