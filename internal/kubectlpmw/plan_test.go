package kubectlpmw

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

// TestKeepFromLive: plan -f plans the file as kubectl apply and helm upgrade would leave the live object, which
// keep what the file never set and other commands wrote (kubectl pmw rollout pause, approve, retry).
func TestKeepFromLive(t *testing.T) {
	pmw := func(paused any, annotations map[string]any) *unstructured.Unstructured {
		spec := map[string]any{"placementRef": map[string]any{"name": "p"}}
		if paused != nil {
			spec["paused"] = paused
		}
		md := map[string]any{"name": "web", "namespace": "apps"}
		if annotations != nil {
			md["annotations"] = annotations
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": workv1alpha1.GroupVersion.String(),
			"kind": "PlacementManifestWork", "metadata": md, "spec": spec}}
	}
	approve, retry := workv1alpha1.AnnotationApprove, workv1alpha1.AnnotationRetryRevision
	managers := map[string]any{approve: "canary@3", retry: "4", "owner": "team-a"}
	cases := map[string]struct {
		file, live, want *unstructured.Unstructured
	}{
		"kept: paused and the approve and retry annotations, nothing else of the live one": {
			file: pmw(nil, nil),
			live: pmw(true, managers),
			want: pmw(true, map[string]any{approve: "canary@3", retry: "4"}),
		},
		"what the file sets wins": {
			file: pmw(false, map[string]any{approve: "canary@4"}),
			live: pmw(true, managers),
			want: pmw(false, map[string]any{approve: "canary@4", retry: "4"}),
		},
		"the file's other annotations stay": {
			file: pmw(nil, map[string]any{"owner": "team-b"}),
			live: pmw(nil, map[string]any{retry: "4"}),
			want: pmw(nil, map[string]any{"owner": "team-b", retry: "4"}),
		},
		"nothing to keep": {
			file: pmw(nil, nil),
			live: pmw(nil, map[string]any{"owner": "team-a"}),
			want: pmw(nil, nil),
		},
		"what the last kubectl apply set, the file no longer sets: kubectl apply removes it": {
			file: pmw(nil, nil),
			live: pmw(true, map[string]any{approve: "canary@3", retry: "4",
				corev1.LastAppliedConfigAnnotation: `{"spec":{"paused":true},"metadata":{"annotations":{"` + approve + `":"canary@3"}}}`}),
			want: pmw(nil, map[string]any{retry: "4"}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.file.DeepCopy()
			keepFromLive(got, tc.live)
			if diff := cmp.Diff(tc.want.Object, got.Object); diff != "" {
				t.Errorf("planned (-want +got):\n%s", diff)
			}
		})
	}
}
