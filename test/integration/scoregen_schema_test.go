package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	scoresv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/scores/v1alpha1"
)

// The AddOnPlacementScoreGenerator's CRD (config/crd/bases, installed with the hub's other CRDs) must admit the
// design seed's example, refuse what a score agent could not use with a message that says what is accepted,
// and, as the PlacementManifestWork's schema, admit nothing a typed client cannot decode or an agent would have
// to refuse again: every admitted value, adversarial ones included, is decoded and checked in Go against the
// bounds the API documents (scoreGenProblems).
var _ = Describe("AddOnPlacementScoreGenerator schema", func() {
	var c client.Client
	BeforeEach(func() {
		c = scoreGenClient()
	})

	It("admits the seed's example, which decodes as written, and shows it in printer columns", func() {
		ctx := context.Background()
		ns := fw.NewNamespace("scoregen")
		gen := &scoresv1alpha1.AddOnPlacementScoreGenerator{
			ObjectMeta: metav1.ObjectMeta{Name: "cluster1-generator", Namespace: ns},
			Spec: scoresv1alpha1.AddOnPlacementScoreGeneratorSpec{
				AddOnPlacementSelector: scoresv1alpha1.AddOnSelector{Name: "latency", Namespace: ns},
				Latencies: []scoresv1alpha1.LatencyProbe{
					{Name: "redhat-com-avgLatency", URL: "https://redhat.com", Runs: ptr.To[int32](2),
						WaitBetweenRuns: &metav1.Duration{Duration: 10 * time.Second}, Timeout: &metav1.Duration{Duration: 2 * time.Second},
						Scale: &scoresv1alpha1.LatencyScale{HalfMillis: 200}},
					{Name: "google-com-avgLatency", URL: "https://google.com"},
					{Name: "linux-com-avgLatency", URL: "http://linux.com:8080/path?q=1"},
				},
				OtherPlugin: []scoresv1alpha1.PluginScore{
					{Name: "cpu-headroom", Plugin: "node-headroom", Options: map[string]string{"resource": "cpu"}},
				},
				ValidFor: &metav1.Duration{Duration: 10 * time.Minute},
				Interval: &metav1.Duration{Duration: time.Minute},
			},
		}
		want := gen.Spec.DeepCopy()
		Expect(c.Create(ctx, gen)).To(Succeed())

		got := &scoresv1alpha1.AddOnPlacementScoreGenerator{}
		Expect(c.Get(ctx, client.ObjectKeyFromObject(gen), got)).To(Succeed())
		Expect(got.Spec).To(Equal(*want), "the spec reads back as written: no default is stored")
		Expect(scoreGenProblems(got)).To(BeEmpty())

		// The seed's own YAML, as written there (no timeout, scale, validFor or interval), is admitted too.
		seed := &unstructured.Unstructured{}
		Expect(json.Unmarshal([]byte(`{"apiVersion":"cluster.open-cluster-management.io/v1alpha1","kind":"AddOnPlacementScoreGenerator",
			"metadata":{"name":"seed","namespace":"`+ns+`"},
			"spec":{"addOnPlacementSelector":{"name":"latency","namespace":"cluster1"},
			  "latencies":[{"name":"redhat-com-avgLatency","url":"https://redhat.com","runs":2,"waitBetweenRuns":"10s"},
			    {"name":"google-com-avgLatency","url":"https://google.com"},{"name":"linux-com-avgLatency","url":"https://linux.com"}],
			  "otherPlugin":[{"name":"score-name","plugin":"example","options":{"optionConsumedByPlugin":"optionValue"}}]}}`), &seed.Object)).To(Succeed())
		Expect(c.Create(ctx, seed)).To(Succeed())

		// The agent's status, with the API's condition types and reasons.
		measured := metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
		got.Status = scoresv1alpha1.AddOnPlacementScoreGeneratorStatus{
			ObservedGeneration: got.Generation,
			LastMeasuredTime:   &measured,
			Scores: []scoresv1alpha1.MeasuredScore{
				{Name: "redhat-com-avgLatency", Value: 41, Raw: "84ms"},
				{Name: "google-com-avgLatency", Value: -100, Raw: "timeout", Message: "2 of 2 runs timed out"},
				{Name: "cpu-headroom", Value: 32, Raw: "3.2 cores free"},
			},
		}
		meta.SetStatusCondition(&got.Status.Conditions, metav1.Condition{Type: scoresv1alpha1.ConditionValid,
			Status: metav1.ConditionTrue, Reason: scoresv1alpha1.ReasonAccepted, Message: "every probe is allowed", ObservedGeneration: got.Generation})
		meta.SetStatusCondition(&got.Status.Conditions, metav1.Condition{Type: scoresv1alpha1.ConditionMeasured,
			Status: metav1.ConditionFalse, Reason: scoresv1alpha1.ReasonMeasureFailed, Message: "google-com-avgLatency: 2 of 2 runs timed out", ObservedGeneration: got.Generation})
		wantStatus := got.Status.DeepCopy()
		Expect(c.Status().Update(ctx, got)).To(Succeed())
		Expect(c.Get(ctx, client.ObjectKeyFromObject(gen), got)).To(Succeed())
		Expect(got.Status.Scores).To(Equal(wantStatus.Scores))
		Expect(got.Status.LastMeasuredTime.Equal(&measured)).To(BeTrue())
		Expect(meta.IsStatusConditionFalse(got.Status.Conditions, scoresv1alpha1.ConditionMeasured)).To(BeTrue())
		Expect(scoreGenProblems(got)).To(BeEmpty())

		list := &scoresv1alpha1.AddOnPlacementScoreGeneratorList{}
		Expect(c.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		Expect(list.Items).To(HaveLen(2))

		// kubectl get: AddOn, Valid, Measured, Last-Measured, Age.
		table := scoreGenTable(ctx, ns)
		var columns []string
		for _, col := range table.ColumnDefinitions {
			columns = append(columns, col.Name)
		}
		Expect(columns).To(Equal([]string{"Name", "AddOn", "Valid", "Measured", "Last-Measured", "Age"}))
		var row []any
		for _, r := range table.Rows {
			if r.Cells[0] == "cluster1-generator" {
				row = r.Cells
			}
		}
		Expect(row).To(HaveLen(6))
		Expect(row[1:4]).To(Equal([]any{"latency", "True", "False"}))
		Expect(row[4]).To(MatchRegexp(`^\d+y`), "Last-Measured is shown as an age")
	})

	DescribeTable("refuses what a score agent could not use, saying what is accepted",
		func(spec, message string) {
			expectRefused(c, "scoregen-refused", `{"apiVersion":"cluster.open-cluster-management.io/v1alpha1","kind":"AddOnPlacementScoreGenerator",`+
				`"metadata":{"name":"x"},"spec":{"addOnPlacementSelector":{"name":"latency"},`+
				`"latencies":[{"name":"redhat-com-avgLatency","url":"https://redhat.com"}]}}`, spec, message)
		},
		Entry("an ftp URL", `{"latencies":[{"name":"a","url":"ftp://example.com/file"}]}`,
			`spec.latencies[0].url: Invalid value: "ftp://example.com/file": url must be an absolute http:// or https:// URL with a host, such as https://example.com/healthz`),
		Entry("a URL without a host", `{"latencies":[{"name":"a","url":"https:///path"}]}`,
			"url must be an absolute http:// or https:// URL with a host"),
		Entry("a relative URL", `{"latencies":[{"name":"a","url":"example.com/health"}]}`,
			"url must be an absolute http:// or https:// URL with a host"),
		Entry("a URL with credentials", `{"latencies":[{"name":"a","url":"https://user:secret@example.com/"}]}`,
			`spec.latencies[0].url: Invalid value: "https://user:secret@example.com/": url must not carry credentials (user:password@host): the agent sends none`),
		Entry("a URL with a user only", `{"latencies":[{"name":"a","url":"http://example.com@internal.example/"}]}`,
			"url must not carry credentials"),
		Entry("runs 0", `{"latencies":[{"name":"a","url":"https://example.com","runs":0}]}`,
			"spec.latencies[0].runs: Invalid value: 0: spec.latencies[0].runs in body should be greater than or equal to 1"),
		Entry("runs 11", `{"latencies":[{"name":"a","url":"https://example.com","runs":11}]}`,
			"spec.latencies[0].runs: Invalid value: 11: spec.latencies[0].runs in body should be less than or equal to 10"),
		Entry("waitBetweenRuns 2m", `{"latencies":[{"name":"a","url":"https://example.com","runs":2,"waitBetweenRuns":"2m"}]}`,
			`spec.latencies[0].waitBetweenRuns: Invalid value: "2m": waitBetweenRuns must be a duration from 0 to 60s, such as 10s or 500ms (units h, m, s and ms, largest first; days are not supported)`),
		Entry("a negative waitBetweenRuns", `{"latencies":[{"name":"a","url":"https://example.com","waitBetweenRuns":"-1s"}]}`,
			"waitBetweenRuns must be a duration from 0 to 60s"),
		Entry("timeout 0", `{"latencies":[{"name":"a","url":"https://example.com","timeout":"0"}]}`,
			`spec.latencies[0].timeout: Invalid value: "0": timeout must be a duration from 100ms to 30s`),
		Entry("timeout 1m", `{"latencies":[{"name":"a","url":"https://example.com","timeout":"1m"}]}`,
			"timeout must be a duration from 100ms to 30s"),
		Entry("a timeout in days", `{"latencies":[{"name":"a","url":"https://example.com","timeout":"1d"}]}`,
			"timeout must be a duration from 100ms to 30s, such as 2s or 500ms (units h, m, s and ms, largest first; days are not supported)"),
		Entry("halfMillis 0", `{"latencies":[{"name":"a","url":"https://example.com","scale":{"halfMillis":0}}]}`,
			"spec.latencies[0].scale.halfMillis in body should be greater than or equal to 1"),
		Entry("interval equal to validFor", `{"interval":"10m","validFor":"10m"}`,
			"spec.interval: Invalid value: interval must be shorter than validFor (by default 1m and 10m), or the scores expire before they are measured again"),
		Entry("interval longer than validFor", `{"interval":"5m","validFor":"2m"}`,
			"interval must be shorter than validFor"),
		Entry("interval beyond the default validFor", `{"interval":"20m"}`,
			"interval must be shorter than validFor"),
		Entry("validFor below the default interval", `{"validFor":"45s"}`,
			"interval must be shorter than validFor"),
		Entry("validFor 10s", `{"validFor":"10s","interval":"5s"}`,
			`spec.validFor: Invalid value: "10s": validFor must be a duration from 30s to 24h`),
		Entry("interval 2h", `{"interval":"2h","validFor":"24h"}`,
			`spec.interval: Invalid value: "2h": interval must be a duration from 10s to 1h`),
		Entry("a score name with a slash", `{"latencies":[{"name":"redhat.com/latency","url":"https://redhat.com"}]}`,
			`spec.latencies[0].name: Invalid value: "redhat.com/latency": latencies[].name must be a score name: 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, such as redhat-com-avgLatency`),
		Entry("a score name that starts with a dash", `{"otherPlugin":[{"name":"-cpu","plugin":"node-headroom"}]}`,
			"otherPlugin[].name must be a score name"),
		Entry("a score name of 64 characters", `{"latencies":[{"name":"`+strings.Repeat("a", 64)+`","url":"https://redhat.com"}]}`,
			"spec.latencies[0].name: Too long: may not be more than 63 bytes"),
		Entry("two probes with the same score name", `{"latencies":[{"name":"a","url":"https://a.example"},{"name":"a","url":"https://b.example"}]}`,
			`spec.latencies[1]: Duplicate value: {"name":"a"}`),
		Entry("a score name in both lists", `{"otherPlugin":[{"name":"redhat-com-avgLatency","plugin":"node-headroom"}]}`,
			"a score name is used both in latencies and in otherPlugin: every score of the AddOnPlacementScore needs its own name"),
		Entry("33 latencies", `{"latencies":`+manyLatencies(33)+`}`,
			"spec.latencies: Too many: 33: must have at most 32 items"),
		Entry("nothing to measure", `{"latencies":[]}`,
			"a generator must measure something: set latencies or otherPlugin"),
		Entry("no addOnPlacementSelector.name", `{"addOnPlacementSelector":{"namespace":"cluster1"}}`,
			"spec.addOnPlacementSelector.name: Required value"),
		Entry("an addOnPlacementSelector.name that is not a DNS label", `{"addOnPlacementSelector":{"name":"Latency"}}`,
			`spec.addOnPlacementSelector.name: Invalid value: "Latency": addOnPlacementSelector.name must be a DNS label`),
		Entry("a plugin name that is not a DNS label", `{"otherPlugin":[{"name":"cpu","plugin":"node_headroom"}]}`,
			"otherPlugin[].plugin must be a DNS label"),
		Entry("an option key with a slash", `{"otherPlugin":[{"name":"cpu","plugin":"node-headroom","options":{"a/b":"c"}}]}`,
			"otherPlugin[].options keys must be 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"),
		Entry("an option value of 1025 characters", `{"otherPlugin":[{"name":"cpu","plugin":"node-headroom","options":{"a":"`+strings.Repeat("x", 1025)+`"}}]}`,
			"otherPlugin[].options values must be at most 1024 characters"),
	)

	It("admits nothing a typed client cannot decode or an agent would refuse, at any leaf of spec or status", func() {
		ctx := context.Background()
		ns := fw.NewNamespace("scoregen-schema")
		s := scoreGenSchema.walk()
		Expect(s.skipped).To(BeEmpty())
		// Today's schema has 13 leaves under spec and 12 under status.
		s.expectLeaves(13, 12)
		Expect(scoreGenSchema.uncovered(s)).To(BeEmpty(), "add these leaves to scoreGenBaseSpec or scoreGenBaseStatus")

		t := scoreGenSchema.exercise(ctx, ns, s)
		Expect(t.problems).To(BeEmpty(), "objects the API server admits must decode and be usable:\n%s", t.describe())
		t.expectEnough(800, 300, 25)
	})
})

// scoreGenSchema is the AddOnPlacementScoreGenerator for the schema property: decoded with a scheme that knows
// only its API, as a score agent's, and checked in Go against the bounds the API documents (scoreGenProblems).
var scoreGenSchema = schemaResource{
	gv: scoresv1alpha1.GroupVersion, kind: "AddOnPlacementScoreGenerator", resource: "addonplacementscoregenerators",
	crdFile: "cluster.open-cluster-management.io_addonplacementscoregenerators.yaml",
	scheme:  scoreGenScheme, readBy: "a score agent",
	baseSpec: scoreGenBaseSpec, baseStatus: scoreGenBaseStatus, values: scoreGenValues,
	newObject: func() client.Object { return &scoresv1alpha1.AddOnPlacementScoreGenerator{} },
	newList:   func() client.ObjectList { return &scoresv1alpha1.AddOnPlacementScoreGeneratorList{} },
	problems: func(obj client.Object) []string {
		return scoreGenProblems(obj.(*scoresv1alpha1.AddOnPlacementScoreGenerator))
	},
	problemsAre: "an agent would refuse it",
}

// manyLatencies is a JSON list of n probes with distinct names.
func manyLatencies(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"name":"p%d","url":"https://example.com/%d"}`, i, i)
	}
	return "[" + strings.Join(items, ",") + "]"
}

// scoreGenScheme knows only the AddOnPlacementScoreGenerator API, as a score agent's client would.
func scoreGenScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	Expect(scoresv1alpha1.AddToScheme(s)).To(Succeed())
	return s
}

func scoreGenClient() client.Client {
	c, err := client.New(fw.Config, client.Options{Scheme: scoreGenScheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// scoreGenTable reads the namespace's generators as kubectl get does: as a Table of the printer columns.
func scoreGenTable(ctx context.Context, ns string) *metav1.Table {
	raw, err := newSchemaWriter(scoreGenSchema, ns).rest.Get().Namespace(ns).Resource("addonplacementscoregenerators").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
	table := &metav1.Table{}
	Expect(json.Unmarshal(raw, table)).To(Succeed())
	return table
}

// scoreGenValues are adversarial values for a node: the PlacementManifestWork schema test's, and for strings
// also URLs, score names and durations at the edges of this API's rules.
func scoreGenValues(kind string) []string {
	values := adversarialValues(kind)
	if kind == "string" {
		values = append(values, `"https://example.com"`, `"HTTPS://EXAMPLE.COM/x"`, `"http://u:p@example.com"`,
			`"http://example.com@evil.example"`, `"ftp://example.com"`, `"https://"`, `"https:///path"`, `"http:example.com"`,
			`"//example.com"`, `"/path"`, `"https://example.com:99999"`, `"https://[::1]:80/"`, `"https://exa mple.com"`,
			`"https://example.com/#@x"`, `"https://example.com?x=@y"`, `"https://%zz.example"`, `"redhat-com-avgLatency"`,
			`"a/b"`, `"-a"`, `"a_"`, `"a.b"`, `"99ms"`, `"100ms"`, `"10s"`, `"29.999s"`, `"0.5m"`, `"59m59.999s"`, `"1h0m0.001s"`,
			`"24h"`, `"24h0m1s"`, `"60s"`, `"60.001s"`, `"`+strings.Repeat("a", 63)+`"`, `"`+strings.Repeat("a", 64)+`"`)
	}
	return values
}

const scoreGenBaseSpec = `{
  "addOnPlacementSelector": {"name": "latency", "namespace": "cluster1"},
  "latencies": [{"name": "redhat-com-avgLatency", "url": "https://redhat.com", "runs": 2, "waitBetweenRuns": "10s",
    "timeout": "5s", "scale": {"halfMillis": 100}}],
  "otherPlugin": [{"name": "cpu-headroom", "plugin": "node-headroom", "options": {"resource": "cpu"}}],
  "validFor": "10m",
  "interval": "1m"
}`

const scoreGenBaseStatus = `{
  "observedGeneration": 1,
  "conditions": [{"type": "Valid", "status": "True", "observedGeneration": 1, "lastTransitionTime": "2024-01-01T00:00:00Z", "reason": "Accepted", "message": "ok"}],
  "lastMeasuredTime": "2024-01-01T00:00:00Z",
  "scores": [{"name": "redhat-com-avgLatency", "value": 41, "raw": "84ms", "message": "m"}]
}`

var (
	scoreNameRE = regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	dnsLabelRE  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

// scoreGenProblems checks a decoded generator against the bounds its API documents, in Go, as an agent would
// before using it: every one the CRD admits must pass.
func scoreGenProblems(g *scoresv1alpha1.AddOnPlacementScoreGenerator) []string {
	var p []string
	bad := func(format string, args ...any) { p = append(p, fmt.Sprintf(format, args...)) }
	within := func(field string, d *metav1.Duration, lo, hi time.Duration) {
		if d != nil && (d.Duration < lo || d.Duration > hi) {
			bad("%s %s is not within [%s, %s]", field, d.Duration, lo, hi)
		}
	}
	s := g.Spec
	if !dnsLabelRE.MatchString(s.AddOnPlacementSelector.Name) || len(s.AddOnPlacementSelector.Name) > 63 {
		bad("addOnPlacementSelector.name %q", s.AddOnPlacementSelector.Name)
	}
	if n := s.AddOnPlacementSelector.Namespace; n != "" && (!dnsLabelRE.MatchString(n) || len(n) > 63) {
		bad("addOnPlacementSelector.namespace %q", n)
	}
	if len(s.Latencies)+len(s.OtherPlugin) == 0 {
		bad("nothing to measure")
	}
	if len(s.Latencies) > 32 || len(s.OtherPlugin) > 32 {
		bad("too many scores")
	}
	names := map[string]bool{}
	score := func(field, name string) {
		if !scoreNameRE.MatchString(name) || len(name) > 63 {
			bad("%s %q is not a score name", field, name)
		}
		if names[name] {
			bad("%s %q is used twice", field, name)
		}
		names[name] = true
	}
	for _, l := range s.Latencies {
		score("latencies[].name", l.Name)
		u, err := url.Parse(l.URL)
		switch {
		case err != nil:
			bad("url %q: %v", l.URL, err)
		case u.Scheme != "http" && u.Scheme != "https", u.Hostname() == "", u.User != nil, len(l.URL) > 2048:
			bad("url %q is not an http(s) URL with a host and without credentials", l.URL)
		}
		if l.Runs != nil && (*l.Runs < 1 || *l.Runs > 10) {
			bad("runs %d", *l.Runs)
		}
		within("waitBetweenRuns", l.WaitBetweenRuns, 0, time.Minute)
		within("timeout", l.Timeout, 100*time.Millisecond, 30*time.Second)
		if l.Scale != nil && (l.Scale.HalfMillis < 1 || l.Scale.HalfMillis > 600000) {
			bad("halfMillis %d", l.Scale.HalfMillis)
		}
	}
	for _, o := range s.OtherPlugin {
		score("otherPlugin[].name", o.Name)
		if !dnsLabelRE.MatchString(o.Plugin) || len(o.Plugin) > 63 {
			bad("plugin %q", o.Plugin)
		}
		if len(o.Options) > 32 {
			bad("%d options", len(o.Options))
		}
		for k, v := range o.Options {
			if !scoreNameRE.MatchString(k) || len(k) > 63 || len(v) > 1024 {
				bad("option %q", k)
			}
		}
	}
	within("validFor", s.ValidFor, 30*time.Second, 24*time.Hour)
	within("interval", s.Interval, 10*time.Second, time.Hour)
	validFor, interval := scoresv1alpha1.DefaultValidFor, scoresv1alpha1.DefaultInterval
	if s.ValidFor != nil {
		validFor = s.ValidFor.Duration
	}
	if s.Interval != nil {
		interval = s.Interval.Duration
	}
	if interval >= validFor {
		bad("interval %s is not shorter than validFor %s", interval, validFor)
	}
	st := g.Status
	if len(st.Scores) > 64 || len(st.Conditions) > 8 {
		bad("status lists too long")
	}
	for _, sc := range st.Scores {
		if !scoreNameRE.MatchString(sc.Name) || len(sc.Name) > 63 || sc.Value < -100 || sc.Value > 100 || len(sc.Raw) > 256 || len(sc.Message) > 1024 {
			bad("status score %q %d", sc.Name, sc.Value)
		}
	}
	return p
}
