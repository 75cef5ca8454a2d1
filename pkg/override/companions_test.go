package override

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	hpaWeb = `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"web","namespace":"default"},
"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":4,"maxReplicas":20}}`
	hpaOther = `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"other","namespace":"default"},
"spec":{"scaleTargetRef":{"kind":"Deployment","name":"other"},"maxReplicas":5}}`
	pdbWeb = `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web","namespace":"default"},
"spec":{"minAvailable":4,"selector":{"matchLabels":{"app":"web"}}}}`
	pdbAll       = `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"all","namespace":"default"},"spec":{"maxUnavailable":1,"selector":{}}}`
	pdbElsewhere = `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web","namespace":"prod"},
"spec":{"minAvailable":4,"selector":{"matchLabels":{"app":"web"}}}}`
	pdbBeta = `{"apiVersion":"policy/v1beta1","kind":"PodDisruptionBudget","metadata":{"name":"beta","namespace":"default"},"spec":{"minAvailable":1,"selector":{}}}`
	other   = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"other","namespace":"default"},
"spec":{"replicas":2,"template":{"metadata":{"labels":{"app":"other"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
)

func TestCompanions(t *testing.T) {
	splitWeb := map[int][]string{0: {".spec.replicas"}}
	cases := map[string]struct {
		docs     []string
		split    map[int][]string
		want     []Companion
		problems []string
	}{
		"an HPA and a PDB of a split Deployment": {
			docs:  []string{web, hpaWeb, pdbWeb, hpaOther, other, pdbElsewhere},
			split: splitWeb,
			want:  []Companion{{Index: 1, Workload: 0, Kind: KindHorizontalPodAutoscaler}, {Index: 2, Workload: 0, Kind: KindPodDisruptionBudget}},
		},
		"a replicated Deployment has none": {
			docs: []string{web, hpaWeb, pdbWeb},
		},
		"another split field has none": {
			docs:  []string{web, hpaWeb, pdbWeb},
			split: map[int][]string{0: {".spec.minReadySeconds"}},
		},
		"an HPA of another group": {
			docs:  []string{web, strings.Replace(hpaWeb, `"apiVersion":"apps/v1","kind"`, `"apiVersion":"example.io/v1","kind"`, 1)},
			split: splitWeb,
		},
		"a PDB over the pods of two workloads": {
			docs:     []string{web, other, pdbAll},
			split:    splitWeb,
			problems: []string{"PodDisruptionBudget.policy default/all: its selector matches the pods of 2 workloads"},
		},
		"an empty selector alone in policy/v1 covers the one workload": {
			docs:  []string{web, pdbAll},
			split: splitWeb,
			want:  []Companion{{Index: 1, Workload: 0, Kind: KindPodDisruptionBudget}},
		},
		"an empty selector in policy/v1beta1 covers nothing": {
			docs:  []string{web, pdbBeta},
			split: splitWeb,
		},
		"a PDB over replicated workloads only": {
			docs:  []string{web, other, pdbAll},
			split: map[int][]string{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, problems := Companions(manifests(t, tc.docs...), tc.split)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("companions (-want +got):\n%s", diff)
			}
			if len(problems) != len(tc.problems) {
				t.Fatalf("problems %+v, want %q", problems, tc.problems)
			}
			for i, p := range problems {
				if !strings.HasPrefix(p.Message, tc.problems[i]) {
					t.Errorf("problem %q, want %q", p.Message, tc.problems[i])
				}
			}
		})
	}
}

func TestApportion(t *testing.T) {
	hpa := func(spec string) string {
		return `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{` + spec + `}}`
	}
	pdb := func(spec string) string {
		return `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"p"},"spec":{` + spec + `}}`
	}
	cases := map[string]struct {
		doc          string
		share, total int32
		want         string // the spec after, as JSON
		err          string
	}{
		// HPA min 4, max 20 of 10 replicas: share 2 → min ceil(0.8)=1, max ceil(4)=4.
		"HPA, a small share":         {doc: hpa(`"minReplicas":4,"maxReplicas":20`), share: 2, total: 10, want: `{"maxReplicas":4,"minReplicas":1}`},
		"HPA, share 5 of 10":         {doc: hpa(`"minReplicas":4,"maxReplicas":20`), share: 5, total: 10, want: `{"maxReplicas":10,"minReplicas":2}`},
		"HPA, share 3 of 10: ceil":   {doc: hpa(`"minReplicas":4,"maxReplicas":20`), share: 3, total: 10, want: `{"maxReplicas":6,"minReplicas":2}`},
		"HPA, min never above share": {doc: hpa(`"minReplicas":10,"maxReplicas":10`), share: 1, total: 10, want: `{"maxReplicas":1,"minReplicas":1}`},
		"HPA, the whole total":       {doc: hpa(`"minReplicas":4,"maxReplicas":20`), share: 10, total: 10, want: `{"maxReplicas":20,"minReplicas":4}`},
		"HPA, share 0 keeps valid":   {doc: hpa(`"minReplicas":4,"maxReplicas":20`), share: 0, total: 10, want: `{"maxReplicas":1,"minReplicas":1}`},
		"HPA, default min":           {doc: hpa(`"maxReplicas":9`), share: 1, total: 3, want: `{"maxReplicas":3}`},
		"HPA, max below min":         {doc: hpa(`"minReplicas":3,"maxReplicas":3`), share: 1, total: 9, want: `{"maxReplicas":1,"minReplicas":1}`},
		"HPA, large numbers":         {doc: hpa(`"minReplicas":2147483647,"maxReplicas":2147483647`), share: 2147483646, total: 2147483647, want: `{"maxReplicas":2147483646,"minReplicas":2147483646}`},
		// PDB minAvailable 4 of 10: share 2 → ceil(0.8)=1; share 5 → 2; a share that would allow no disruption
		// allows one, as the template does.
		"PDB min, a small share":          {doc: pdb(`"minAvailable":4`), share: 2, total: 10, want: `{"minAvailable":1}`},
		"PDB min, half":                   {doc: pdb(`"minAvailable":4`), share: 5, total: 10, want: `{"minAvailable":2}`},
		"PDB min, a drain can go on":      {doc: pdb(`"minAvailable":4`), share: 2, total: 6, want: `{"minAvailable":1}`},
		"PDB min, one replica":            {doc: pdb(`"minAvailable":9`), share: 1, total: 10, want: `{"minAvailable":0}`},
		"PDB min, all of them stays all":  {doc: pdb(`"minAvailable":10`), share: 3, total: 10, want: `{"minAvailable":3}`},
		"PDB min 0 stays 0":               {doc: pdb(`"minAvailable":0`), share: 5, total: 10, want: `{"minAvailable":0}`},
		"PDB min, share 0":                {doc: pdb(`"minAvailable":4`), share: 0, total: 10, want: `{"minAvailable":0}`},
		"PDB max unavailable, floor":      {doc: pdb(`"maxUnavailable":3`), share: 5, total: 10, want: `{"maxUnavailable":1}`},
		"PDB max unavailable, at least 1": {doc: pdb(`"maxUnavailable":3`), share: 2, total: 10, want: `{"maxUnavailable":1}`},
		"PDB max unavailable, all":        {doc: pdb(`"maxUnavailable":10`), share: 4, total: 10, want: `{"maxUnavailable":4}`},
		"PDB percentages kept":            {doc: pdb(`"minAvailable":"50%"`), share: 2, total: 10, want: `{"minAvailable":"50%"}`},
		"total 0: unchanged":              {doc: pdb(`"minAvailable":4`), share: 0, total: 0, want: `{"minAvailable":4}`},
		"a negative count":                {doc: pdb(`"minAvailable":-1`), share: 1, total: 2, err: "negative"},
		"another kind":                    {doc: cfg, share: 1, total: 2, err: "is not a HorizontalPodAutoscaler or a PodDisruptionBudget"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := manifest(t, tc.doc).Object
			before := in.DeepCopy()
			got, err := Apportion(in, tc.share, tc.total)
			if diff := cmp.Diff(before.Object, in.Object); diff != "" {
				t.Errorf("Apportion modified its input:\n%s", diff)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Apportion = %v; want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if spec := field(t, got.Object, "spec"); spec != tc.want {
				t.Errorf("spec = %s, want %s", spec, tc.want)
			}
		})
	}
}

// TestApportionBounds checks the promises of Apportion over many shares: a min is never 0 for a share > 0
// and never above the share, maxUnavailable likewise, and HPA max is at least its min.
func TestApportionBounds(t *testing.T) {
	for total := int32(1); total <= 30; total++ {
		for share := int32(0); share <= total; share++ {
			for n := int64(0); n <= int64(total)+2; n++ {
				p := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
					"metadata": map[string]any{"name": "p"}, "spec": map[string]any{"minAvailable": n, "maxUnavailable": n}}}
				got, err := Apportion(p, share, total)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range []string{"minAvailable", "maxUnavailable"} {
					v := got.Object["spec"].(map[string]any)[f].(int64)
					// A cluster lets a pod go when the template does (minAvailable below the total), down to 0 of 1.
					lets := f == "minAvailable" && share > 0 && n < int64(total)
					zeroAllowed := lets && share == 1
					if v > int64(share) || (lets && v >= int64(share)) || (share > 0 && n > 0 && v == 0 && !zeroAllowed) || (n == 0 && v != 0) {
						t.Fatalf("%s %d, share %d of %d: %d", f, n, share, total, v)
					}
				}
				if n == 0 {
					continue
				}
				h := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
					"metadata": map[string]any{"name": "h"}, "spec": map[string]any{"minReplicas": n, "maxReplicas": n + 1}}}
				got, err = Apportion(h, share, total)
				if err != nil {
					t.Fatal(err)
				}
				spec := got.Object["spec"].(map[string]any)
				lo, hi := spec["minReplicas"].(int64), spec["maxReplicas"].(int64)
				if lo < 1 || (share > 0 && lo > int64(share)) || hi < lo {
					t.Fatalf("HPA %d-%d, share %d of %d: %d-%d", n, n+1, share, total, lo, hi)
				}
			}
		}
	}
}

// TestApportionedFields: the status names the counts a companion has apportioned: an HPA's replicas (its
// minReplicas always, defaulted to 1), a PDB's integer minAvailable or maxUnavailable, never a percentage.
func TestApportionedFields(t *testing.T) {
	cases := map[string]struct {
		manifest string
		want     []string
	}{
		"HPA with both":              {manifest: `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"minReplicas":4,"maxReplicas":10}}`, want: []string{"spec.minReplicas", "spec.maxReplicas"}},
		"HPA without minReplicas":    {manifest: `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"h"},"spec":{"maxReplicas":10}}`, want: []string{"spec.minReplicas", "spec.maxReplicas"}},
		"PDB minAvailable":           {manifest: `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"p"},"spec":{"minAvailable":4}}`, want: []string{"spec.minAvailable"}},
		"PDB maxUnavailable":         {manifest: `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"p"},"spec":{"maxUnavailable":1}}`, want: []string{"spec.maxUnavailable"}},
		"PDB percentage is kept":     {manifest: `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"p"},"spec":{"minAvailable":"50%"}}`},
		"PDB integer and percentage": {manifest: `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"p"},"spec":{"minAvailable":2,"maxUnavailable":"10%"}}`, want: []string{"spec.minAvailable"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON([]byte(tc.manifest)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ApportionedFields(u)); diff != "" {
				t.Errorf("ApportionedFields (-want +got):\n%s", diff)
			}
		})
	}
}
