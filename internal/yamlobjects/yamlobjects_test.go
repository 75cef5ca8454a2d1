package yamlobjects

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeBytes(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    []string // kind/name of each object
		wantErr bool
	}{
		"several documents, empty ones skipped": {in: "---\nkind: A\nmetadata: {name: a}\n---\n---\n# only a comment\n---\nkind: B\nmetadata: {name: b}\n", want: []string{"A/a", "B/b"}},
		"JSON":                                  {in: `{"kind":"C","metadata":{"name":"c"}}`, want: []string{"C/c"}},
		"nothing":                               {in: ""},
		"not YAML":                              {in: "kind: [unclosed\n", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, err := DecodeBytes([]byte(tc.in), "test")
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}
