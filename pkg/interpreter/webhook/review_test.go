package webhook

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"

	workv1alpha1 "github.com/open-cluster-management-io/placement-manifestwork/api/v1alpha1"
	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
)

func TestVerdict(t *testing.T) {
	cases := map[string]struct {
		resp    Response
		want    health.Verdict
		wantErr string
	}{
		"healthy true":            {resp: Response{Healthy: ptr.To(true)}, want: health.Verdict{State: health.Healthy}},
		"healthy false":           {resp: Response{Healthy: ptr.To(false), Message: "down"}, want: health.Verdict{State: health.Degraded, Reason: "WebhookDegraded", Message: "down"}},
		"state wins over healthy": {resp: Response{Healthy: ptr.To(true), State: StateProgressing, Reason: "Provisioning"}, want: health.Verdict{State: health.Progressing, Reason: "Provisioning"}},
		"completed":               {resp: Response{State: StateCompleted}, want: health.Verdict{State: health.Healthy, Finished: true}},
		"failed":                  {resp: Response{State: StateFailed, Reason: "BackupFailed"}, want: health.Verdict{State: health.Degraded, Reason: "BackupFailed", Finished: true}},
		"long message is cut": {
			resp: Response{State: StateDegraded, Reason: "X", Message: strings.Repeat("é", 600)},
			want: health.Verdict{State: health.Degraded, Reason: "X", Message: strings.Repeat("é", 512) + "…"},
		},
		"neither":        {resp: Response{}, wantErr: "neither healthy nor state"},
		"unknown state":  {resp: Response{State: "Sleepy"}, wantErr: `state "Sleepy" is none of`},
		"reason, spaces": {resp: Response{State: StateDegraded, Reason: "two words"}, wantErr: "not a CamelCase word"},
		"reason, long":   {resp: Response{State: StateDegraded, Reason: strings.Repeat("A", 65)}, wantErr: "not a CamelCase word"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := tc.resp.Verdict()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPatchJSON(t *testing.T) {
	const array = `[{"op":"add","path":"/spec/replicas","value":2}]`
	cases := map[string]struct {
		wire    string
		want    Patch
		wantErr string
	}{
		"array":      {wire: array, want: Patch(array)},
		"base64":     {wire: `"W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMvcmVwbGljYXMiLCJ2YWx1ZSI6Mn1d"`, want: Patch(array)},
		"null":       {wire: `null`},
		"not base64": {wire: `"[{]"`, wantErr: "not base64"},
		"an object":  {wire: `{"op":"add"}`, wantErr: "neither a JSON array nor a base64 string"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var r Response
			err := json.Unmarshal([]byte(`{"patch":`+tc.wire+`}`), &r)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, r.Patch); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
	out, err := json.Marshal(Response{Patch: Patch(array)})
	if err != nil || !strings.Contains(string(out), `"patch":`+array) {
		t.Errorf("Marshal = %s, %v; want the patch as a JSON array", out, err)
	}
}

func TestApplyPatch(t *testing.T) {
	const object = `{"apiVersion":"v1","kind":"Database","metadata":{"name":"db","namespace":"ns"},"spec":{"replicas":5}}`
	cases := map[string]struct {
		patch     string
		patchType PatchType
		want      string
		wantErr   string
	}{
		"replace replicas": {patch: `[{"op":"replace","path":"/spec/replicas","value":2}]`, want: strings.Replace(object, "5", "2", 1)},
		"not JSON patch":   {patch: `[{"op":"replace","path":"/spec/replicas","value":2}]`, patchType: "MergePatch", wantErr: `patchType "MergePatch"`},
		"bad patch":        {patch: `{"spec":{}}`, wantErr: "not an RFC 6902 JSON patch"},
		"missing path":     {patch: `[{"op":"replace","path":"/status/replicas","value":2}]`, wantErr: "patch does not apply"},
		"renames":          {patch: `[{"op":"replace","path":"/metadata/namespace","value":"kube-system"}]`, wantErr: "changes the object's identity from v1 Database ns/db to v1 Database kube-system/db"},
		"changes the kind": {patch: `[{"op":"replace","path":"/kind","value":"ClusterRole"}]`, wantErr: "changes the object's identity"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pt := tc.patchType
			if pt == "" {
				pt = PatchTypeJSONPatch
			}
			got, err := ApplyPatch([]byte(object), &Response{Patch: Patch(tc.patch), PatchType: pt})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("revised %s, want %s", got, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	req := func(op workv1alpha1.InterpreterOperation) Request { return Request{UID: "u", Operation: op} }
	ok := func(r Response) *Response { r.UID, r.Successful = "u", true; return &r }
	cases := map[string]struct {
		req     Request
		resp    *Response
		wantErr string
	}{
		"health":                     {req: req(workv1alpha1.OperationInterpretHealth), resp: ok(Response{State: StateHealthy})},
		"dependencies, none":         {req: req(workv1alpha1.OperationInterpretDependency), resp: ok(Response{})},
		"dependencies":               {req: req(workv1alpha1.OperationInterpretDependency), resp: ok(Response{Dependencies: []Dependency{{Kind: "ConfigMap", Name: "a.b"}}})},
		"dependency of a Pod":        {req: req(workv1alpha1.OperationInterpretDependency), resp: ok(Response{Dependencies: []Dependency{{Kind: "Pod", Name: "a"}}}), wantErr: `dependency kind "Pod"`},
		"dependency with a bad name": {req: req(workv1alpha1.OperationInterpretDependency), resp: ok(Response{Dependencies: []Dependency{{Kind: "Secret", Name: "A_B"}}}), wantErr: `dependency Secret name "A_B"`},
		"revise":                     {req: req(workv1alpha1.OperationReviseReplica), resp: ok(Response{Patch: Patch("[]"), PatchType: PatchTypeJSONPatch})},
		"revise without a patch":     {req: req(workv1alpha1.OperationReviseReplica), resp: ok(Response{PatchType: PatchTypeJSONPatch}), wantErr: "no patch"},
		"revise without patchType":   {req: req(workv1alpha1.OperationReviseReplica), resp: ok(Response{Patch: Patch("[]")}), wantErr: `patchType ""`},
		"aggregate": {req: req(workv1alpha1.OperationAggregateStatus), resp: ok(Response{Status: []workv1alpha1.AggregatedField{
			{Name: "phase", Operation: workv1alpha1.AggregationCount, Counts: []workv1alpha1.ValueCount{{Value: "Ready", Clusters: 2}}, Clusters: 2},
		}})},
		"aggregate, unknown operation":  {req: req(workv1alpha1.OperationAggregateStatus), resp: ok(Response{Status: []workv1alpha1.AggregatedField{{Name: "x", Operation: "Avg"}}}), wantErr: `operation "Avg"`},
		"aggregate, count with a value": {req: req(workv1alpha1.OperationAggregateStatus), resp: ok(Response{Status: []workv1alpha1.AggregatedField{{Name: "x", Operation: workv1alpha1.AggregationCount, Value: ptr.To[int64](1)}}}), wantErr: "Count carries a value"},
		"nil":                           {req: req(workv1alpha1.OperationInterpretHealth), wantErr: "no response"},
		"other uid":                     {req: req(workv1alpha1.OperationInterpretHealth), resp: &Response{UID: "v", Successful: true}, wantErr: "response uid is not the request's"},
		"no uid":                        {req: req(workv1alpha1.OperationInterpretHealth), resp: &Response{Successful: true}, wantErr: "response has no uid, want the request's"},
		"unsuccessful":                  {req: req(workv1alpha1.OperationInterpretHealth), resp: &Response{UID: "u", Message: "nope"}, wantErr: "not successful: nope"},
		"unknown op":                    {req: req("Explode"), resp: ok(Response{}), wantErr: `unknown operation "Explode"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := Check(tc.req, tc.resp)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	feedback := health.Feedback{
		"readyInstances": {Type: workv1.Integer, Integer: ptr.To[int64](3)},
		"phase":          {Type: workv1.String, String: ptr.To("Ready")},
		"paused":         {Type: workv1.Boolean, Boolean: ptr.To(false)},
	}
	// Through the wire, as a webhook sees it.
	raw, err := json.Marshal(StatusOf(feedback))
	if err != nil {
		t.Fatal(err)
	}
	var s Status
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	type read struct {
		Int      int64
		IntOK    bool
		Text     string
		TextOK   bool
		StringOK bool
		BoolOK   bool
	}
	got := map[string]read{}
	for _, name := range []string{"readyInstances", "phase", "paused", "absent"} {
		var r read
		r.Int, r.IntOK = s.Int(name)
		r.Text, r.TextOK = s.Text(name)
		_, r.StringOK = s.String(name)
		_, r.BoolOK = s.Bool(name)
		got[name] = r
	}
	want := map[string]read{
		"readyInstances": {Int: 3, IntOK: true, Text: "3", TextOK: true},
		"phase":          {Text: "Ready", TextOK: true, StringOK: true},
		"paused":         {Text: "false", TextOK: true, BoolOK: true},
		"absent":         {},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
	if _, ok := (Status{"x": 1.5}).Int("x"); ok {
		t.Errorf("1.5 read as an integer")
	}
}

func TestHandler(t *testing.T) {
	h := Handler(func(r Request) Response {
		return Response{UID: "ignored", Successful: true, Healthy: ptr.To(r.Cluster == "east")}
	})
	cases := map[string]struct {
		method   string
		body     string
		wantCode int
		wantBody string
	}{
		"answers with the request's uid": {
			method:   http.MethodPost,
			body:     `{"apiVersion":"interpreter.work.open-cluster-management.io/v1alpha1","kind":"InterpreterReview","request":{"uid":"u1","operation":"InterpretHealth","cluster":"east"}}`,
			wantCode: http.StatusOK,
			wantBody: `{"apiVersion":"interpreter.work.open-cluster-management.io/v1alpha1","kind":"InterpreterReview","response":{"uid":"u1","successful":true,"healthy":true}}`,
		},
		"GET":            {method: http.MethodGet, wantCode: http.StatusMethodNotAllowed, wantBody: "POST an InterpreterReview\n"},
		"not JSON":       {method: http.MethodPost, body: "hello", wantCode: http.StatusBadRequest, wantBody: "not an InterpreterReview: invalid character 'h' looking for beginning of value\n"},
		"other envelope": {method: http.MethodPost, body: `{"apiVersion":"v1","kind":"AdmissionReview"}`, wantCode: http.StatusBadRequest, wantBody: `apiVersion "v1" kind "AdmissionReview", want interpreter.work.open-cluster-management.io/v1alpha1 InterpreterReview` + "\n"},
		"no uid":         {method: http.MethodPost, body: `{"apiVersion":"interpreter.work.open-cluster-management.io/v1alpha1","kind":"InterpreterReview","request":{}}`, wantCode: http.StatusBadRequest, wantBody: "the request has no uid\n"},
		"too large":      {method: http.MethodPost, body: strings.Repeat(" ", MaxRequestBytes+1), wantCode: http.StatusRequestEntityTooLarge, wantBody: "review larger than 4194304 bytes\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, "/", strings.NewReader(tc.body)))
			if rec.Code != tc.wantCode || rec.Body.String() != tc.wantBody {
				t.Errorf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tc.wantCode, tc.wantBody)
			}
		})
	}
}
