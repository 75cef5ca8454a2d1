// Package gitops checks the GitOps integrations shipped in config/: the Argo CD health check runs in a Lua
// interpreter against sample PlacementManifestWork statuses, and the docs carry the same script.
package gitops

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// toLua converts decoded JSON into Lua values the way Argo CD hands objects to health scripts.
func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case map[string]any:
		t := L.NewTable()
		for k, val := range x {
			t.RawSetString(k, toLua(L, val))
		}
		return t
	case []any:
		t := L.NewTable()
		for _, val := range x {
			t.Append(toLua(L, val))
		}
		return t
	case string:
		return lua.LString(x)
	case float64:
		return lua.LNumber(x)
	case bool:
		return lua.LBool(x)
	default:
		return lua.LNil
	}
}

func runHealth(t *testing.T, script, object string) (status, message string) {
	t.Helper()
	obj := map[string]any{}
	if err := json.Unmarshal([]byte(object), &obj); err != nil {
		t.Fatal(err)
	}
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj))
	fn, err := L.LoadString(script)
	if err != nil {
		t.Fatalf("loading the health script: %v", err)
	}
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		t.Fatalf("running the health script: %v", err)
	}
	hs, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("the health script returned %v, not a table", L.Get(-1))
	}
	return hs.RawGetString("status").String(), hs.RawGetString("message").String()
}

func TestArgoCDHealthCheck(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(repoRoot(), "config", "argocd", "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		object      string
		wantStatus  string
		wantMessage string
	}{
		"no status yet": {
			object:     `{"metadata":{"generation":1}}`,
			wantStatus: "Progressing",
		},
		"status of an older generation": {
			object:     `{"metadata":{"generation":3},"status":{"observedGeneration":2,"conditions":[{"type":"Ready","status":"True","message":"All 3 clusters are available"}]}}`,
			wantStatus: "Progressing",
		},
		"ready": {
			object:      `{"metadata":{"generation":2},"status":{"observedGeneration":2,"placedManifestWorkSummary":{"total":3,"available":3,"degraded":0},"conditions":[{"type":"Ready","status":"True","message":"All 3 clusters are available"}]}}`,
			wantStatus:  "Healthy",
			wantMessage: "All 3 clusters are available",
		},
		"clusters progressing": {
			object:      `{"metadata":{"generation":2},"status":{"observedGeneration":2,"placedManifestWorkSummary":{"total":3,"available":1,"degraded":0},"conditions":[{"type":"Ready","status":"False","message":"1 of 3 clusters are available"}]}}`,
			wantStatus:  "Progressing",
			wantMessage: "1 of 3 clusters are available",
		},
		"clusters degraded": {
			object:      `{"metadata":{"generation":2},"status":{"observedGeneration":2,"placedManifestWorkSummary":{"total":3,"available":2,"degraded":1},"conditions":[{"type":"Ready","status":"False","message":"1 of 3 clusters are degraded, 2 available"}]}}`,
			wantStatus:  "Degraded",
			wantMessage: "1 of 3 clusters are degraded, 2 available",
		},
		"stalled on an invalid template": {
			object:      `{"metadata":{"generation":4},"status":{"observedGeneration":4,"conditions":[{"type":"Ready","status":"False"},{"type":"Stalled","status":"True","message":"manifest 1 is not a Kubernetes object"}]}}`,
			wantStatus:  "Degraded",
			wantMessage: "manifest 1 is not a Kubernetes object",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			status, message := runHealth(t, string(script), tc.object)
			if status != tc.wantStatus {
				t.Errorf("status = %q, want %q (message %q)", status, tc.wantStatus, message)
			}
			if tc.wantMessage != "" && message != tc.wantMessage {
				t.Errorf("message = %q, want %q", message, tc.wantMessage)
			}
		})
	}
}

func TestDocsCarryTheHealthCheck(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(repoRoot(), "config", "argocd", "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(repoRoot(), "docs", "gitops.md"))
	if err != nil {
		t.Fatal(err)
	}
	// In the doc the script is a YAML block scalar, indented by six spaces.
	lines := strings.Split(strings.TrimSpace(string(script)), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "      " + l
		}
	}
	if !strings.Contains(string(doc), strings.Join(lines, "\n")) {
		t.Error("docs/gitops.md does not carry config/argocd/health.lua: copy the script into its argocd-cm example")
	}
}
