package latency

import (
	"os"
	"regexp"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/scoreagent"
)

// generatorCRD is the AddOnPlacementScoreGenerator's CRD as controller-gen writes it from the API's markers.
const generatorCRD = "../../../config/crd/bases/cluster.open-cluster-management.io_addonplacementscoregenerators.yaml"

// The plugin's bounds are the CRD's: a latency entry the API admits is never refused by the agent for its
// numbers, and one the plugin admits (an otherPlugin entry naming latency) is never outside what the API
// documents. The markers cannot name Go constants, so this test is what ties the two.
func TestBoundsMatchTheCRD(t *testing.T) {
	raw, err := os.ReadFile(generatorCRD)
	if err != nil {
		t.Fatal(err)
	}
	crd := map[string]any{}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	probe := dig(t, crd, "spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties",
		"latencies", "items", "properties").(map[string]any)

	number := func(path ...any) int64 {
		return int64(dig(t, probe, path...).(float64))
	}
	durations := func(field string) map[string]time.Duration {
		out := map[string]time.Duration{}
		for _, v := range dig(t, probe, field, "x-kubernetes-validations").([]any) {
			for _, m := range durationBound.FindAllStringSubmatch(v.(map[string]any)["rule"].(string), -1) {
				d, err := time.ParseDuration(m[2])
				if err != nil {
					t.Fatalf("%s: %v", field, err)
				}
				out[m[1]] = d
			}
		}
		return out
	}

	checks := map[string]struct{ crd, plugin any }{
		"runs minimum":            {number("runs", "minimum"), int64(MinRuns)},
		"runs maximum":            {number("runs", "maximum"), int64(MaxRuns)},
		"halfMillis minimum":      {number("scale", "properties", "halfMillis", "minimum"), int64(MinHalfMillis)},
		"halfMillis maximum":      {number("scale", "properties", "halfMillis", "maximum"), int64(MaxHalfMillis)},
		"url maxLength":           {number("url", "maxLength"), int64(MaxURLLength)},
		"timeout minimum":         {durations("timeout")[">="], MinTimeout},
		"timeout maximum":         {durations("timeout")["<="], MaxTimeout},
		"waitBetweenRuns maximum": {durations("waitBetweenRuns")["<="], MaxWaitBetweenRuns},
		"waitBetweenRuns minimum": {durations("waitBetweenRuns")[">="], time.Duration(0)}, // none: 0 is the least
	}
	for name, c := range checks {
		if c.crd != c.plugin {
			t.Errorf("%s: the CRD says %v, the latency plugin %v", name, c.crd, c.plugin)
		}
	}

	// The defaults are the API's constants themselves; the values documented in the CRD agree with them.
	defaults := map[string]struct{ api, plugin any }{
		"runs":            {int64(scoresv1alpha1.DefaultRuns), int64(DefaultRuns)},
		"timeout":         {scoresv1alpha1.DefaultProbeTimeout, DefaultTimeout},
		"waitBetweenRuns": {scoresv1alpha1.DefaultWaitBetweenRuns, DefaultWaitBetweenRuns},
		"halfMillis":      {int32(scoresv1alpha1.DefaultHalfMillis), DefaultHalfMillis},
		"validFor":        {scoresv1alpha1.DefaultValidFor, scoreagent.DefaultValidFor},
	}
	for name, d := range defaults {
		if d.api != d.plugin {
			t.Errorf("default %s: the API says %v, the agent %v", name, d.api, d.plugin)
		}
	}
	p, err := ParseOptions(map[string]string{OptionURL: "https://example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Probe{URL: "https://example.com", Runs: scoresv1alpha1.DefaultRuns, WaitBetweenRuns: scoresv1alpha1.DefaultWaitBetweenRuns,
		Timeout: scoresv1alpha1.DefaultProbeTimeout, HalfMillis: scoresv1alpha1.DefaultHalfMillis}); p != want {
		t.Errorf("a request with only a URL reads as %+v, want the API's defaults %+v", p, want)
	}
}

// durationBound finds "duration(self) >= duration('100ms')" in a CEL rule.
var durationBound = regexp.MustCompile(`duration\(self\) (>=|<=) duration\('([^']+)'\)`)

// dig walks a decoded YAML document by map keys and list indexes.
func dig(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok || m[k] == nil {
				t.Fatalf("the CRD has no %v", path)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || len(l) <= k {
				t.Fatalf("the CRD has no %v", path)
			}
			v = l[k]
		}
	}
	return v
}
