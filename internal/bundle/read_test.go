package bundle

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadManifests(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    []string // kind/name of each object
		wantErr string
	}{
		"several documents, empty and comment-only ones skipped": {
			in:   "---\napiVersion: v1\nkind: A\nmetadata: {name: a}\n---\n---\n# only a comment\n--- # a separator with a comment\napiVersion: v1\nkind: B\nmetadata: {name: b}\n",
			want: []string{"A/a", "B/b"},
		},
		"a JSON stream": {
			in:   `{"apiVersion":"v1","kind":"C","metadata":{"name":"c"}} {"apiVersion":"v1","kind":"D","metadata":{"name":"d"}}`,
			want: []string{"C/c", "D/d"},
		},
		"JSON in a YAML stream": {
			in:   "apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\n{\"apiVersion\":\"v1\",\"kind\":\"C\",\"metadata\":{\"name\":\"c\"}}\n",
			want: []string{"A/a", "C/c"},
		},
		"a List is flattened, nested ones too": {
			in:   "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: A, metadata: {name: a}}\n- {apiVersion: v1, kind: ConfigMapList, items: [{apiVersion: v1, kind: ConfigMap, metadata: {name: b}}]}\n",
			want: []string{"A/a", "ConfigMap/b"},
		},
		"an empty List": {in: "apiVersion: v1\nkind: List\nitems: []\n"},
		"nothing":       {in: ""},
		"only comments": {in: "# nothing here\n"},
		"YAML that does not parse names the document and the line of the stream": {
			in:      "apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\napiVersion: v1\nkind: B\nmetadata:\n  name: [b\n",
			wantErr: "in.yaml: document 2: line 8: did not find expected ',' or ']'; fix the YAML there",
		},
		"Helm's # Source comment names the template": {
			in:      "---\n# Source: web/templates/a.yaml\napiVersion: v1\nkind: A\nmetadata: {name: a}\n---\n# Source: web/templates/b.yaml\nkind: B\n  bad: indent\n",
			wantErr: "in.yaml: document 2 (web/templates/b.yaml): line 9: mapping values are not allowed in this context; fix the YAML there",
		},
		"a document without kind": {
			in:      "apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\nreplicaCount: 3\n",
			wantErr: "in.yaml: document 2: has no apiVersion or kind; every manifest needs both (is this a values file or a kustomization rather than manifests?)",
		},
		"a document that is not a mapping": {
			in:      "- a\n- b\n",
			wantErr: "in.yaml: document 1: is a list, not a Kubernetes object; every document must be a mapping with apiVersion, kind and metadata",
		},
		"a List item that is not an object": {
			in:      "apiVersion: v1\nkind: List\nitems: [3]\n",
			wantErr: "in.yaml: document 1, item 1: is a number, not a Kubernetes object; remove it or make it one",
		},
		"JSON that does not parse": {
			in:      `{"apiVersion":"v1","kind":"C","metadata":{"name":"c"}} {"kind": }`,
			wantErr: "in.yaml: document 2: invalid character '}' looking for beginning of value; fix the JSON there",
		},
		"metadata that is not a mapping": {
			in:      "apiVersion: v1\nkind: A\nmetadata: a\n",
			wantErr: "in.yaml: document 1: metadata is a string, not a mapping; fix the document",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, err := ReadManifests(strings.NewReader(tc.in), "in.yaml")
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
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

// Integers stay int64, as the API machinery and the manager's field paths expect.
func TestReadManifestsKeepsIntegers(t *testing.T) {
	objs, err := ReadManifests(strings.NewReader("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {replicas: 3}\n"), "in")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := objs[0].Object["spec"].(map[string]any)["replicas"].(int64); !ok || v != 3 {
		t.Errorf("replicas = %#v, want int64 3", objs[0].Object["spec"].(map[string]any)["replicas"])
	}
}
