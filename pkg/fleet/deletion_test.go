package fleet

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestWithoutGCFinalizers(t *testing.T) {
	deleted := metav1.Now()
	cases := map[string]struct {
		deleting   bool
		finalizers []string
		owner      bool
		want       []string
		wantOK     bool
	}{
		"foreground":             {deleting: true, finalizers: []string{metav1.FinalizerDeleteDependents}, wantOK: true},
		"orphan":                 {deleting: true, finalizers: []string{metav1.FinalizerOrphanDependents}, wantOK: true},
		"someone else's kept":    {deleting: true, finalizers: []string{"example.io/a", metav1.FinalizerDeleteDependents, "example.io/b"}, want: []string{"example.io/a", "example.io/b"}, wantOK: true},
		"only someone else's":    {deleting: true, finalizers: []string{"example.io/a"}},
		"not being deleted":      {finalizers: []string{metav1.FinalizerDeleteDependents}},
		"an owner of dependents": {deleting: true, finalizers: []string{metav1.FinalizerOrphanDependents}, owner: true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			o := &metav1.ObjectMeta{UID: "u1", Finalizers: c.finalizers}
			if c.deleting {
				o.DeletionTimestamp = &deleted
			}
			owners := map[types.UID]bool{"u2": true}
			if c.owner {
				owners["u1"] = true
			}
			got, ok := WithoutGCFinalizers(o, owners)
			if ok != c.wantOK {
				t.Errorf("ok = %v, want %v", ok, c.wantOK)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.finalizers, o.Finalizers); diff != "" {
				t.Errorf("the object's own finalizers changed (-want +got):\n%s", diff)
			}
		})
	}
}
