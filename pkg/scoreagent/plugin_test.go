package scoreagent

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakePlugin is a plugin whose answers the test chooses.
type fakePlugin struct {
	name     string
	invalid  error
	result   Result
	err      error
	measured int
}

func (f *fakePlugin) Name() string           { return f.name }
func (f *fakePlugin) Validate(Request) error { return f.invalid }
func (f *fakePlugin) Measure(context.Context, Request) (Result, error) {
	f.measured++
	return f.result, f.err
}

func TestRegister(t *testing.T) {
	cases := map[string]struct {
		names   []string
		wantErr string
		want    []string
	}{
		"none":                {want: []string{}},
		"two, listed sorted":  {names: []string{"latency", "headroom"}, want: []string{"headroom", "latency"}},
		"a duplicate":         {names: []string{"latency", "headroom", "latency"}, wantErr: `plugin "latency" is already registered`},
		"an empty name":       {names: []string{""}, wantErr: `plugin name "" is not a DNS label (lower-case letters, digits and '-', at most 63)`},
		"an upper-case name":  {names: []string{"Latency"}, wantErr: `plugin name "Latency" is not a DNS label (lower-case letters, digits and '-', at most 63)`},
		"a dash at the end":   {names: []string{"gpu-"}, wantErr: `plugin name "gpu-" is not a DNS label (lower-case letters, digits and '-', at most 63)`},
		"a dash in the midst": {names: []string{"gpu-free"}, want: []string{"gpu-free"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var plugins []Plugin
			for _, n := range tc.names {
				plugins = append(plugins, &fakePlugin{name: n})
			}
			r, err := NewRegistry(plugins...)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, r.Names()); diff != "" {
				t.Errorf("Names (-want +got):\n%s", diff)
			}
			for _, n := range tc.names {
				if p, ok := r.Lookup(n); !ok || p.Name() != n {
					t.Errorf("Lookup(%q) = %v, %v", n, p, ok)
				}
			}
			if _, ok := r.Lookup("missing"); ok {
				t.Error("Lookup(missing) found a plugin")
			}
		})
	}
}

func TestRegisterNil(t *testing.T) {
	var r Registry // the zero Registry is usable
	if err := r.Register(nil); err == nil {
		t.Error("registering nil succeeded")
	}
	if err := r.Register(&fakePlugin{name: "latency"}); err != nil {
		t.Errorf("the zero Registry refused a plugin: %v", err)
	}
}

func TestValidate(t *testing.T) {
	r, err := NewRegistry(&fakePlugin{name: "latency"}, &fakePlugin{name: "picky", invalid: errors.New("runs is 20, at most 10")})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reqs []Request
		want string
	}{
		"valid": {reqs: []Request{{Plugin: "latency", ScoreName: "a"}, {Plugin: "latency", ScoreName: "b"}}},
		"no score name": {
			reqs: []Request{{Plugin: "latency"}},
			want: "a score needs a name",
		},
		"no plugin": {
			reqs: []Request{{ScoreName: "a"}},
			want: `score "a": names no plugin`,
		},
		"an unknown plugin": {
			reqs: []Request{{Plugin: "gpu", ScoreName: "a"}},
			want: `score "a": plugin "gpu" is not known to this agent (it knows latency, picky)`,
		},
		"refused by its plugin": {
			reqs: []Request{{Plugin: "picky", ScoreName: "a"}},
			want: `score "a": runs is 20, at most 10`,
		},
		"a score asked for twice": {
			reqs: []Request{{Plugin: "latency", ScoreName: "a"}, {Plugin: "latency", ScoreName: "a"}},
			want: `score "a": is asked for twice; score names must be unique`,
		},
		"every problem at once": {
			reqs: []Request{{Plugin: "picky", ScoreName: "a"}, {Plugin: "latency", ScoreName: "b"}, {Plugin: "gpu", ScoreName: "c"}},
			want: `score "a": runs is 20, at most 10; score "c": plugin "gpu" is not known to this agent (it knows latency, picky)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := r.ValidateAll(tc.reqs)
			got := ""
			if err != nil {
				got = err.Error()
				var invalid *InvalidError
				if !errors.As(err, &invalid) {
					t.Errorf("error %v is not an *InvalidError", err)
				}
			}
			if got != tc.want {
				t.Errorf("ValidateAll = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMeasure(t *testing.T) {
	cases := map[string]struct {
		plugin    *fakePlugin
		want      Result
		wantErr   string
		wantCalls int
	}{
		"a result": {
			plugin:    &fakePlugin{name: "p", result: Result{Value: 42, Raw: "84ms"}},
			want:      Result{Value: 42, Raw: "84ms"},
			wantCalls: 1,
		},
		"the bounds": {
			plugin:    &fakePlugin{name: "p", result: Result{Value: -100}},
			want:      Result{Value: -100},
			wantCalls: 1,
		},
		"invalid: not measured": {
			plugin:  &fakePlugin{name: "p", invalid: errors.New("bad")},
			wantErr: `score "s": bad`,
		},
		"a plugin error": {
			plugin:    &fakePlugin{name: "p", err: context.Canceled},
			wantErr:   `score "s": context canceled`,
			wantCalls: 1,
		},
		"a value out of range is a bug, not clamped": {
			plugin:    &fakePlugin{name: "p", result: Result{Value: 101}},
			wantErr:   `score "s": plugin "p" returned 101, outside [-100, 100]`,
			wantCalls: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := NewRegistry(tc.plugin)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Measure(t.Context(), Request{Plugin: "p", ScoreName: "s"})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Measure (-want +got):\n%s", diff)
			}
			if tc.plugin.measured != tc.wantCalls {
				t.Errorf("measured %d times, want %d", tc.plugin.measured, tc.wantCalls)
			}
		})
	}
}
