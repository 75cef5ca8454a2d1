package manifestwork

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestOwnerLabelValue(t *testing.T) {
	cases := map[string]struct {
		owner    types.NamespacedName
		want     string
		readable bool
	}{
		"short names stay readable": {
			owner: types.NamespacedName{Namespace: "default", Name: "web"}, want: "default.web", readable: true,
		},
		"a 253-character name is hashed into 63 characters": {
			owner: types.NamespacedName{Namespace: "default", Name: strings.Repeat("a", 253)},
		},
		"a name ending in a dot after the cut is trimmed": {
			owner: types.NamespacedName{Namespace: "ns", Name: strings.Repeat("a", 48) + "." + strings.Repeat("b", 20)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := OwnerLabelValue(tc.owner)
			if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
				t.Fatalf("OwnerLabelValue(%v) = %q is not a label value: %v", tc.owner, got, errs)
			}
			if tc.readable && got != tc.want {
				t.Errorf("OwnerLabelValue(%v) = %q, want %q", tc.owner, got, tc.want)
			}
		})
	}
}

func TestNamesAreDistinctAcrossNamespaces(t *testing.T) {
	long := strings.Repeat("x", 253)
	owners := []types.NamespacedName{
		{Namespace: "a", Name: "web"}, {Namespace: "b", Name: "web"},
		{Namespace: "a-b", Name: "c"}, {Namespace: "a", Name: "b-c"},
		{Namespace: "a", Name: long}, {Namespace: "b", Name: long},
		{Namespace: "a", Name: long[:252] + "y"},
	}
	works, labels := map[string]types.NamespacedName{}, map[string]types.NamespacedName{}
	for _, o := range owners {
		w, l := WorkName(o), OwnerLabelValue(o)
		if errs := validation.IsDNS1123Subdomain(w); len(errs) > 0 {
			t.Errorf("WorkName(%v) = %q is not a valid name: %v", o, w, errs)
		}
		if len(w) > maxWorkNameLength {
			t.Errorf("WorkName(%v) has %d characters, more than %d", o, len(w), maxWorkNameLength)
		}
		if prev, ok := works[w]; ok {
			t.Errorf("WorkName collides for %v and %v: %q", prev, o, w)
		}
		if prev, ok := labels[l]; ok {
			t.Errorf("OwnerLabelValue collides for %v and %v: %q", prev, o, l)
		}
		works[w], labels[l] = o, o
	}
}
