package planner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/override"
)

// docFleet is the sample fleet of docs/overrides.md.
var docFleet = map[string]override.Cluster{
	"eu-1": {Labels: map[string]string{"region": "eu"}, Claims: map[string]string{"platform.open-cluster-management.io": "AWS"}},
	"eu-2": {Labels: map[string]string{"region": "eu"}, Claims: map[string]string{"platform.open-cluster-management.io": "GCP"}},
	"us-1": {Labels: map[string]string{"region": "us"}, Claims: map[string]string{"platform.open-cluster-management.io": "AWS"}},
}

// TestOverridesDocRendered keeps the rendered result in docs/overrides.md true: it reads the sample
// PlacementManifestWork from the doc, plans it for the sample fleet as the manager does (split, companions,
// overrides: override.Render per cluster), and compares what each cluster gets with the doc. UPDATE_DOCS=1
// rewrites the doc's rendered block.
func TestOverridesDocRendered(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "overrides.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sample := between(t, doc, "<!-- sample:begin -->\n```yaml\n", "```\n<!-- sample:end -->")
	pmw := &workv1alpha1.PlacementManifestWork{}
	if err := yaml.UnmarshalStrict(sample, pmw); err != nil {
		t.Fatalf("the sample does not decode: %v", err)
	}
	set, err := override.Compile(pmw.Spec.Overrides)
	if err != nil {
		t.Fatalf("the sample's overrides do not compile: %v", err)
	}
	manifests, err := ParseTemplate(pmw)
	if err != nil {
		t.Fatal(err)
	}
	if problems := set.CheckTemplate(manifests, TemplateSplitFields(pmw, manifests, nil)); len(problems) > 0 {
		t.Fatalf("the sample's overrides do not fit its template: %v", problems)
	}
	in := Input{Overrides: set, ClusterFacts: docFleet}
	for c := range docFleet {
		in.Clusters = append(in.Clusters, c)
	}
	sort.Strings(in.Clusters)
	plan, err := Compute(pmw, manifests, in)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, c := range in.Clusters {
		fmt.Fprintf(&out, "# %s (labels %v, claims %v)\n", c, docFleet[c].Labels, docFleet[c].Claims)
		if ce := plan.OverrideFailures[c]; ce != nil {
			fmt.Fprintf(&out, "# keeps its work: %v\n", ce)
			continue
		}
		for _, m := range plan.Manifests[c] {
			y, err := yaml.JSONToYAML(m.Raw)
			if err != nil {
				t.Fatal(err)
			}
			out.WriteString("---\n")
			out.Write(y)
		}
	}
	st := override.Status(set, plan.OverrideOutcomes)
	y, err := yaml.Marshal(map[string]any{"overrides": st, "splits": plan.Splits})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "# status (part)\n---\n%s", y)

	begin, end := "<!-- rendered:begin -->\n```yaml\n", "```\n<!-- rendered:end -->"
	got := between(t, doc, begin, end)
	if bytes.Equal(got, out.Bytes()) {
		return
	}
	if os.Getenv("UPDATE_DOCS") == "1" {
		i := bytes.Index(doc, []byte(begin)) + len(begin)
		j := bytes.Index(doc, []byte(end))
		updated := append(append(append([]byte{}, doc[:i]...), out.Bytes()...), doc[j:]...)
		if err := os.WriteFile(path, updated, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/overrides.md's rendered result is stale; run UPDATE_DOCS=1 go test ./pkg/planner -run TestOverridesDocRendered. It should be:\n%s", out.String())
}

func between(t *testing.T, doc []byte, begin, end string) []byte {
	t.Helper()
	i := bytes.Index(doc, []byte(begin))
	j := bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("docs/overrides.md lacks %q ... %q", strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	return doc[i+len(begin) : j]
}
