package template

import (
	"strings"
	"testing"
)

func TestIntField(t *testing.T) {
	cases := map[string]struct {
		manifest string
		path     string
		want     int32
		wantErr  string
	}{
		"replicas":           {manifest: `{"spec":{"replicas":3}}`, path: ".spec.replicas", want: 3},
		"zero":               {manifest: `{"spec":{"replicas":0}}`, path: ".spec.replicas", want: 0},
		"deep custom field":  {manifest: `{"spec":{"workers":{"count":12}}}`, path: ".spec.workers.count", want: 12},
		"missing":            {manifest: `{"spec":{}}`, path: ".spec.replicas", wantErr: ".spec.replicas is not set"},
		"points into scalar": {manifest: `{"spec":5}`, path: ".spec.replicas", wantErr: ".spec.replicas"},
		"string value":       {manifest: `{"spec":{"replicas":"3"}}`, path: ".spec.replicas", wantErr: "not an integer"},
		"fraction":           {manifest: `{"spec":{"replicas":1.5}}`, path: ".spec.replicas", wantErr: "not an integer"},
		"negative":           {manifest: `{"spec":{"replicas":-1}}`, path: ".spec.replicas", wantErr: "negative"},
		"beyond int32":       {manifest: `{"spec":{"replicas":3000000000}}`, path: ".spec.replicas", wantErr: "more than"},
		"path without dot":   {manifest: `{"spec":{"replicas":3}}`, path: "spec.replicas", wantErr: "must start with a dot"},
		"empty key":          {manifest: `{"spec":{"replicas":3}}`, path: ".spec..replicas", wantErr: "empty key"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ms, err := Parse(raw(`{"apiVersion":"v1","kind":"X","metadata":{"name":"x"},` + strings.TrimPrefix(tc.manifest, "{")))
			if err != nil {
				t.Fatal(err)
			}
			got, err := IntField(ms[0].Object, tc.path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("IntField error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("IntField = %d, %v; want %d", got, err, tc.want)
			}
			set, err := SetIntField(ms[0].Object, tc.path, got+1)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := IntField(set, tc.path); again != got+1 {
				t.Errorf("after SetIntField(%d) the field reads %d", got+1, again)
			}
			if orig, _ := IntField(ms[0].Object, tc.path); orig != got {
				t.Errorf("SetIntField modified its input")
			}
		})
	}
}
