package v1alpha1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
)

// validSpec sets every field of the spec, so a round trip that lost one would show.
const validSpec = `{"manifestWorkTemplate":{"workload":{"manifests":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":"default"}}]},` +
	`"deleteOption":{"propagationPolicy":"Orphan","ttlSecondsAfterFinished":60}},` +
	`"placementRef":{"name":"p"},` +
	`"distributionStrategy":[{"name":"web","namespace":"default","kind":"ConfigMap","type":"Split","split":{"type":"Weighted","fieldPath":".data.n","limitRange":{"min":1,"max":4},"weights":[{"clusterName":"c1","weight":2}]}}],` +
	`"rolloutStrategy":{"type":"Progressive","progressive":{"minSuccessTime":"1m0s","progressDeadline":"10m","maxFailures":"10%","mandatoryDecisionGroups":[{"groupName":"g","groupIndex":1}],"maxConcurrency":2}},` +
	`"failover":{"gracePeriod":"5m0s","recoveryPeriod":"2m0s"},` +
	`"moveStrategy":{"type":"MakeBeforeBreak","timeout":"10m0s"},` +
	`"overrides":[{"name":"region","clusters":{"names":["c1"],"labelSelector":{"matchLabels":{"region":"eu"}},"claimSelector":{"matchLabels":{"platform.open-cluster-management.io":"AWS"}}},` +
	`"manifests":[{"name":"web","namespace":"default","kind":"ConfigMap"}],"image":{"registry":{"value":"mirror.example.com"},"tag":{"expression":"cluster.name"}},` +
	`"patches":[{"op":"add","path":"/data/a","value":{"b":[1,2.5,"c",null,true]}},{"op":"replace","path":"/data/n","expression":"cluster.name"},{"op":"remove","path":"/data/x"}]}],` +
	`"splitCompanions":"Copy"}`

// A spec that decodes as a whole decodes exactly as without the tolerant UnmarshalJSON, and encodes back to
// the same JSON.
func TestDecodeValidSpecUnchanged(t *testing.T) {
	cases := map[string]string{
		"every field": validSpec,
		"the least":   `{"manifestWorkTemplate":{}}`,
		"empty":       `{}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			type plain PlacementManifestWorkSpec
			var want plain
			if err := json.Unmarshal([]byte(in), &want); err != nil {
				t.Fatal(err)
			}
			var got PlacementManifestWorkSpec
			if err := json.Unmarshal([]byte(in), &got); err != nil {
				t.Fatal(err)
			}
			if p := got.DecodeProblems(); len(p) > 0 {
				t.Errorf("problems %v, want none", p)
			}
			if diff := cmp.Diff(PlacementManifestWorkSpec(want), got, cmp.AllowUnexported(PlacementManifestWorkSpec{})); diff != "" {
				t.Errorf("decoded spec differs from the plain decoding (-want +got):\n%s", diff)
			}
			out, err := json.Marshal(&got)
			if err != nil {
				t.Fatal(err)
			}
			plainOut, _ := json.Marshal(&want)
			if string(out) != string(plainOut) {
				t.Errorf("encodes to\n%s\nwant\n%s", out, plainOut)
			}
			if name == "every field" {
				var a, b any
				_ = json.Unmarshal([]byte(in), &a)
				_ = json.Unmarshal(out, &b)
				if diff := cmp.Diff(a, b); diff != "" {
					t.Errorf("round trip changed the JSON (-in +out):\n%s", diff)
				}
			}
		})
	}
}

// A spec that does not decode as a whole keeps every field it can decode and names the others.
func TestDecodeTolerant(t *testing.T) {
	replace := func(old, new string) string {
		if !strings.Contains(validSpec, old) {
			t.Fatalf("validSpec has no %s", old)
		}
		return strings.Replace(validSpec, old, new, 1)
	}
	cases := map[string]struct {
		in    string
		check func(t *testing.T, s *PlacementManifestWorkSpec)
		want  []string
	}{
		"a day in moveStrategy.timeout": {
			in:   replace(`"timeout":"10m0s"`, `"timeout":"1d"`),
			want: []string{`spec.moveStrategy.timeout: time: unknown unit "d" in duration "1d"`},
			check: func(t *testing.T, s *PlacementManifestWorkSpec) {
				if s.MoveStrategy == nil || s.MoveStrategy.Type != MoveMakeBeforeBreak || s.MoveStrategy.Timeout != nil {
					t.Errorf("moveStrategy = %+v, want the type kept and the timeout unset", s.MoveStrategy)
				}
				if s.Failover == nil || s.Failover.GracePeriod.Duration != 5*time.Minute || s.PlacementRef.Name != "p" {
					t.Errorf("the other fields are not kept: %+v", s)
				}
			},
		},
		"an empty failover.gracePeriod and a negative recoveryPeriod (which decodes)": {
			in:   replace(`"gracePeriod":"5m0s","recoveryPeriod":"2m0s"`, `"gracePeriod":"","recoveryPeriod":"-1s"`),
			want: []string{`spec.failover.gracePeriod: time: invalid duration ""`},
			check: func(t *testing.T, s *PlacementManifestWorkSpec) {
				if s.Failover.GracePeriod != nil || s.Failover.RecoveryPeriod.Duration != -time.Second {
					t.Errorf("failover = %+v", s.Failover)
				}
			},
		},
		"the embedded RolloutStrategy: minSuccessTime, maxConcurrency and groupIndex": {
			in: replace(`"minSuccessTime":"1m0s","progressDeadline":"10m","maxFailures":"10%","mandatoryDecisionGroups":[{"groupName":"g","groupIndex":1}],"maxConcurrency":2`,
				`"minSuccessTime":"2d","progressDeadline":"10m","maxFailures":"10%","mandatoryDecisionGroups":[{"groupName":"g","groupIndex":4294967296},{"groupName":"h"}],"maxConcurrency":2147483648`),
			want: []string{
				`spec.rolloutStrategy.progressive.minSuccessTime: time: unknown unit "d" in duration "2d"`,
				`spec.rolloutStrategy.progressive.mandatoryDecisionGroups[0]: json: cannot unmarshal number 4294967296 into Go struct field MandatoryDecisionGroup.groupIndex of type int32`,
				`spec.rolloutStrategy.progressive.maxConcurrency: json: cannot unmarshal number 2147483648 into Go value of type int32`,
			},
			check: func(t *testing.T, s *PlacementManifestWorkSpec) {
				p := s.RolloutStrategy.Progressive
				want := clusterv1alpha1.RolloutProgressive{
					RolloutConfig:           clusterv1alpha1.RolloutConfig{ProgressDeadline: "10m", MaxFailures: intstr.FromString("10%")},
					MandatoryDecisionGroups: clusterv1alpha1.MandatoryDecisionGroups{MandatoryDecisionGroups: []clusterv1alpha1.MandatoryDecisionGroup{{GroupName: "h"}}},
				}
				if diff := cmp.Diff(&want, p); diff != "" || s.RolloutStrategy.Type != clusterv1alpha1.Progressive {
					t.Errorf("rolloutStrategy (-want +got):\n%s", diff)
				}
			},
		},
		"an override that does not decode is dropped, the others and their JSON values are kept": {
			in: replace(`"overrides":[{"name":"region",`,
				`"overrides":[{"name":"bad","patches":[{"op":"add","path":"/data/a","value":1,"expression":7}]},{"name":"region",`),
			want: []string{`spec.overrides[0]: json: cannot unmarshal number into Go struct field OverridePatch.patches.expression of type string`},
			check: func(t *testing.T, s *PlacementManifestWorkSpec) {
				if len(s.Overrides) != 1 || s.Overrides[0].Name != "region" || len(s.Overrides[0].Patches) != 3 {
					t.Fatalf("overrides = %+v, want only region with its 3 patches", s.Overrides)
				}
				if got := string(s.Overrides[0].Patches[0].Value.Raw); got != `{"b":[1,2.5,"c",null,true]}` {
					t.Errorf("value = %s, want the JSON as written", got)
				}
				if s.SplitCompanions != SplitCompanionsCopy || s.MoveStrategy == nil {
					t.Errorf("the other fields are not kept: %+v", s)
				}
			},
		},
		"an int32 overflow in a distributionStrategy entry drops the entry": {
			in:   replace(`"max":4`, `"max":2147483648`),
			want: []string{`spec.distributionStrategy[0]: json: cannot unmarshal number 2147483648 into Go struct field LimitRange.split.limitRange.max of type int32`},
			check: func(t *testing.T, s *PlacementManifestWorkSpec) {
				if len(s.DistributionStrategy) != 0 {
					t.Errorf("distributionStrategy = %+v, want the entry dropped", s.DistributionStrategy)
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var s PlacementManifestWorkSpec
			if err := json.Unmarshal([]byte(tc.in), &s); err != nil {
				t.Fatalf("decoding failed: %v", err)
			}
			if diff := cmp.Diff(tc.want, s.DecodeProblems()); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			tc.check(t, &s)
			if diff := cmp.Diff(tc.want, s.DeepCopy().DecodeProblems()); diff != "" {
				t.Errorf("DeepCopy lost the problems (-want +got):\n%s", diff)
			}
		})
	}
}

// What is not a JSON object still fails, as for any struct.
func TestDecodeNotAnObject(t *testing.T) {
	var s PlacementManifestWorkSpec
	if err := json.Unmarshal([]byte(`"x"`), &s); err == nil {
		t.Error("decoding a string into a spec succeeded")
	}
	var st PlacementManifestWorkStatus
	if err := json.Unmarshal([]byte(`[]`), &st); err == nil {
		t.Error("decoding an array into a status succeeded")
	}
}

// The manager decodes a list with its scheme's codec (sigs.k8s.io/json), which must call the tolerant
// UnmarshalJSON: one bad item no longer fails the list.
func TestSchemeDecodesListWithBadItem(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	list := `{"apiVersion":"work.open-cluster-management.io/v1alpha1","kind":"PlacementManifestWorkList","metadata":{},"items":[` +
		`{"metadata":{"name":"bad"},"spec":{"manifestWorkTemplate":{},"moveStrategy":{"timeout":"1d"}},` +
		`"status":{"placedManifestWorkSummary":{"total":2147483648,"applied":1,"available":0,"progressing":0,"degraded":0},` +
		`"conditions":[{"type":"Ready","status":"True","reason":"Ready","message":"","lastTransitionTime":"2024-01-01t00:00:00z"},` +
		`{"type":"Stalled","status":"False","reason":"NotStalled","message":"","lastTransitionTime":"2024-01-01T00:00:00Z"}]}},` +
		`{"metadata":{"name":"good"},"spec":{"manifestWorkTemplate":{},"moveStrategy":{"timeout":"1h"}}}]}`
	obj, _, err := serializer.NewCodecFactory(s).UniversalDeserializer().Decode([]byte(list), nil, nil)
	if err != nil {
		t.Fatalf("the list does not decode: %v", err)
	}
	items := obj.(*PlacementManifestWorkList).Items
	if len(items) != 2 {
		t.Fatalf("%d items, want 2", len(items))
	}
	bad, good := items[0], items[1]
	if diff := cmp.Diff([]string{`spec.moveStrategy.timeout: time: unknown unit "d" in duration "1d"`}, bad.Spec.DecodeProblems()); diff != "" {
		t.Errorf("problems of the bad item (-want +got):\n%s", diff)
	}
	if bad.Status.PlacedManifestWorkSummary.Applied != 1 || len(bad.Status.Conditions) != 1 || bad.Status.Conditions[0].Type != "Stalled" {
		t.Errorf("the bad item's status keeps what decodes and drops the condition that does not: %+v", bad.Status)
	}
	if len(good.Spec.DecodeProblems()) > 0 || good.Spec.MoveStrategy.Timeout.Duration != time.Hour {
		t.Errorf("good item = %+v", good.Spec)
	}
	// DeepCopyObject is what the informer's cache hands out.
	if got := bad.DeepCopyObject().(*PlacementManifestWork).Spec.DecodeProblems(); len(got) != 1 {
		t.Errorf("a deep copy has problems %v", got)
	}
	if got := (&metav1.Duration{}).UnmarshalJSON([]byte(`"1d"`)); got == nil {
		t.Error("metav1.Duration accepts 1d: this test no longer shows anything")
	}
}

// The CRD's duration rules (api/v1alpha1 markers) admit only what time.ParseDuration parses, never
// negative, and never an overflow; progressDeadline's also only what sdk-go's rollout handler parses.
const (
	durationPattern         = `^(0|([0-9]{1,6}([.][0-9]+)?h)?([0-9]{1,7}([.][0-9]+)?m)?([0-9]{1,9}([.][0-9]+)?s)?([0-9]{1,12}ms)?)$`
	progressDeadlinePattern = `^(None|([0-9]{1,6}h)?([0-9]{1,7}m)?([0-9]{1,9}s)?)$`
	// sdkTimeoutPattern is the check of open-cluster-management.io/sdk-go's parseTimeout before ParseDuration.
	sdkTimeoutPattern = `^(([0-9])+[h|m|s])|None$`
)

func TestDurationPatterns(t *testing.T) {
	crd, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "work.open-cluster-management.io_placementmanifestworks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(crd), durationPattern); n != 6 {
		t.Errorf("the CRD has the duration pattern %d times, want 6 (gracePeriod, recoveryPeriod, timeout, 3 minSuccessTime)", n)
	}
	if n := strings.Count(string(crd), progressDeadlinePattern); n != 3 {
		t.Errorf("the CRD has the progressDeadline pattern %d times, want 3", n)
	}

	duration, deadline, sdk := regexp.MustCompile(durationPattern), regexp.MustCompile(progressDeadlinePattern), regexp.MustCompile(sdkTimeoutPattern)
	admitted := []string{"0", "0s", "30s", "5m", "1h30m", "1.5h", "500ms", "1h0m0s", "2m30.5s", "999999.999999999h9999999.9m999999999.9s999999999999ms"}
	refused := []string{"", "1d", "-1s", "+1s", "1", "abc", " 1s", "1h1h", "30s1m", "1us", "1µs", "5ns", ".5h", "5.h", "1H", "9999999h", "None"}
	for _, s := range admitted {
		if !duration.MatchString(s) {
			t.Errorf("%q is refused, want admitted", s)
			continue
		}
		if d, err := time.ParseDuration(s); err != nil || d < 0 {
			t.Errorf("%q is admitted, but ParseDuration gives %v, %v", s, d, err)
		}
	}
	for _, s := range refused {
		if duration.MatchString(s) && s != "" {
			t.Errorf("%q is admitted, want refused", s)
		}
	}
	// The largest of every component at once: any admitted string is at most this long a duration.
	if _, err := time.ParseDuration("999999.999999999h9999999.999999999m999999999.999999999s999999999999ms"); err != nil {
		t.Errorf("the largest admitted duration does not parse: %v", err)
	}

	for _, s := range []string{"None", "10m", "1h30m", "90s", "999999h9999999m999999999s"} {
		if !deadline.MatchString(s) {
			t.Errorf("progressDeadline %q is refused, want admitted", s)
			continue
		}
		if _, err := time.ParseDuration(s); s != "None" && err != nil {
			t.Errorf("progressDeadline %q does not parse: %v", s, err)
		}
		if !sdk.MatchString(s) {
			t.Errorf("progressDeadline %q is admitted, but sdk-go refuses it", s)
		}
	}
	for _, s := range []string{"1.5h", "500ms", "0", "5sx", "xNone", "1d", "-1s"} {
		if deadline.MatchString(s) {
			t.Errorf("progressDeadline %q is admitted, want refused", s)
		}
	}
}
