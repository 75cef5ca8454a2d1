package fleet

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
)

func TestOptIn(t *testing.T) {
	selected := func(sel metav1.LabelSelector, n *int32) *clusterv1beta1.PlacementSpec {
		return &clusterv1beta1.PlacementSpec{NumberOfClusters: n, Predicates: []clusterv1beta1.ClusterPredicate{
			{RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: sel}},
		}}
	}
	cases := map[string]struct {
		labels, annotations map[string]string
		want                OptInSpec
		wantErr             string
	}{
		"neither: not opted in": {
			labels: map[string]string{"team": "shop"},
		},
		"a Placement named by the label": {
			labels: map[string]string{workv1alpha1.LabelFleetPlacement: "eu-prod"},
			want:   OptInSpec{Placement: "eu-prod"},
		},
		"a cluster selector generates a Placement": {
			annotations: map[string]string{workv1alpha1.AnnotationFleetClusterSelector: "env=prod,region in (eu-1,eu-2),!canary"},
			want: OptInSpec{Placement: workv1alpha1.FleetGeneratedName, Generated: selected(metav1.LabelSelector{
				MatchLabels: map[string]string{"env": "prod"},
				MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "canary", Operator: metav1.LabelSelectorOpDoesNotExist},
					{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"eu-1", "eu-2"}},
				},
			}, nil)},
		},
		"with a number of clusters": {
			annotations: map[string]string{workv1alpha1.AnnotationFleetClusterSelector: "env=prod", workv1alpha1.AnnotationFleetNumberOfClusters: "2"},
			want: OptInSpec{Placement: workv1alpha1.FleetGeneratedName, Generated: selected(metav1.LabelSelector{
				MatchLabels: map[string]string{"env": "prod"}}, ptr.To[int32](2))},
		},
		"an empty selector selects every cluster of the bound sets": {
			annotations: map[string]string{workv1alpha1.AnnotationFleetClusterSelector: ""},
			want:        OptInSpec{Placement: workv1alpha1.FleetGeneratedName, Generated: selected(metav1.LabelSelector{}, nil)},
		},
		"both: an error": {
			labels:      map[string]string{workv1alpha1.LabelFleetPlacement: "eu-prod"},
			annotations: map[string]string{workv1alpha1.AnnotationFleetClusterSelector: "env=prod"},
			wantErr:     `namespace "shop" has both the fleet.open-cluster-management.io/placement label and the fleet.open-cluster-management.io/cluster-selector annotation`,
		},
		"a selector that does not parse": {
			annotations: map[string]string{workv1alpha1.AnnotationFleetClusterSelector: "env in prod"},
			wantErr:     `the fleet.open-cluster-management.io/cluster-selector annotation "env in prod" is not a label selector`,
		},
		"an empty Placement name": {
			labels:  map[string]string{workv1alpha1.LabelFleetPlacement: ""},
			wantErr: `the fleet.open-cluster-management.io/placement label is "", not the name of a Placement`,
		},
		"a Placement name no API server takes": {
			labels:  map[string]string{workv1alpha1.LabelFleetPlacement: "EU_prod"},
			wantErr: `the fleet.open-cluster-management.io/placement label is "EU_prod", not the name of a Placement`,
		},
		"a number of clusters without a selector": {
			labels:      map[string]string{workv1alpha1.LabelFleetPlacement: "eu-prod"},
			annotations: map[string]string{workv1alpha1.AnnotationFleetNumberOfClusters: "2"},
			wantErr:     "the fleet.open-cluster-management.io/number-of-clusters annotation only applies with",
		},
		"a number of clusters that is not one": {
			annotations: map[string]string{workv1alpha1.AnnotationFleetClusterSelector: "env=prod", workv1alpha1.AnnotationFleetNumberOfClusters: "-1"},
			wantErr:     `the fleet.open-cluster-management.io/number-of-clusters annotation "-1" is not a number of clusters`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: tc.labels, Annotations: tc.annotations}}
			got, err := OptIn(ns)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.OptedIn() != (tc.want.Placement != "") {
				t.Errorf("OptedIn() = %v", got.OptedIn())
			}
		})
	}
	if got, err := OptIn(nil); err != nil || got.OptedIn() {
		t.Errorf("OptIn(nil) = %+v, %v", got, err)
	}
}
