package bundle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// ReadManifests reads a stream of Kubernetes objects: YAML documents separated by "---" lines, or JSON objects
// one after another. An object whose items is a list (kind List, or any *List) is replaced by its items. Empty
// documents and documents holding only comments are skipped. source names the input in errors ("stdin", a file
// name); every error is one line that names the source and the document (counted from 1 by the separators, so
// empty documents count) and says what to do.
func ReadManifests(r io.Reader, source string) ([]*unstructured.Unstructured, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: reading: %v", source, err)
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		return readJSONStream(data, source)
	}
	var out []*unstructured.Unstructured
	for n, doc := range splitYAML(data) {
		where := fmt.Sprintf("%s: document %d", source, n+1)
		if src := helmSource(doc.text); src != "" {
			where += " (" + src + ")"
		}
		j, err := yaml.YAMLToJSON(doc.text)
		if err != nil {
			return nil, fmt.Errorf("%s: %s; fix the YAML there", where, yamlError(err, doc.line))
		}
		objs, err := decodeObject(j, where)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// readJSONStream reads JSON values one after another (kubectl's -o json of several objects, or one List).
func readJSONStream(data []byte, source string) ([]*unstructured.Unstructured, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []*unstructured.Unstructured
	for n := 1; ; n++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		where := fmt.Sprintf("%s: document %d", source, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %s; fix the JSON there", where, oneLine(err.Error()))
		}
		objs, err := decodeObject(raw, where)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
}

// decodeObject turns one document, as JSON, into its objects: none for an empty document, the items of a list.
func decodeObject(j []byte, where string) ([]*unstructured.Unstructured, error) {
	if t := bytes.TrimSpace(j); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	var v any
	// apimachinery's decoder keeps integers as int64, as the API machinery and the manager expect.
	if err := utiljson.Unmarshal(j, &v); err != nil {
		return nil, fmt.Errorf("%s: %s; fix the document", where, oneLine(err.Error()))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: is a %s, not a Kubernetes object; every document must be a mapping with apiVersion, kind and metadata", where, jsonType(v))
	}
	if len(m) == 0 {
		return nil, nil
	}
	return flatten(m, where)
}

// flatten checks one object and replaces a list by its items (lists of lists too).
func flatten(m map[string]any, where string) ([]*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{Object: m}
	if items, isList := m["items"].([]any); isList && strings.HasSuffix(obj.GetKind(), "List") {
		var out []*unstructured.Unstructured
		for i, it := range items {
			itemWhere := fmt.Sprintf("%s, item %d", where, i+1)
			im, ok := it.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: is a %s, not a Kubernetes object; remove it or make it one", itemWhere, jsonType(it))
			}
			objs, err := flatten(im, itemWhere)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
		return out, nil
	}
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
		return nil, fmt.Errorf("%s: has no apiVersion or kind; every manifest needs both (is this a values file or a kustomization rather than manifests?)", where)
	}
	if _, ok := m["metadata"]; ok {
		if _, ok := m["metadata"].(map[string]any); !ok {
			return nil, fmt.Errorf("%s: metadata is a %s, not a mapping; fix the document", where, jsonType(m["metadata"]))
		}
	}
	return []*unstructured.Unstructured{obj}, nil
}

// helmSource is the template a document of Helm's output came from, as its "# Source:" comment says.
func helmSource(text []byte) string {
	for _, l := range bytes.Split(text, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if src, ok := bytes.CutPrefix(l, []byte("# Source: ")); ok {
			return string(bytes.TrimSpace(src))
		}
		if len(l) > 0 && l[0] != '#' {
			return ""
		}
	}
	return ""
}

// yamlDoc is one document of a YAML stream and the line of the stream it starts on (from 1).
type yamlDoc struct {
	text []byte
	line int
}

// splitYAML splits a YAML stream at its "---" separator lines, as apimachinery's YAMLReader does: a line that
// starts with "---" followed by nothing or a comment.
func splitYAML(data []byte) []yamlDoc {
	var docs []yamlDoc
	cur := yamlDoc{line: 1}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	line := 0
	for sc.Scan() {
		line++
		l := sc.Bytes()
		if isSeparator(l) {
			docs = append(docs, cur)
			cur = yamlDoc{line: line + 1}
			continue
		}
		cur.text = append(cur.text, l...)
		cur.text = append(cur.text, '\n')
	}
	docs = append(docs, cur)
	// A stream that starts with "---" (after comments, perhaps) has an empty first document; do not count it, so
	// the first object is document 1 either way.
	if len(docs) > 1 && onlyComments(docs[0].text) {
		docs = docs[1:]
	}
	return docs
}

func onlyComments(text []byte) bool {
	for _, l := range bytes.Split(text, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 && l[0] != '#' {
			return false
		}
	}
	return true
}

func isSeparator(l []byte) bool {
	if !bytes.HasPrefix(l, []byte("---")) {
		return false
	}
	rest := bytes.TrimSpace(l[3:])
	return len(rest) == 0 || rest[0] == '#'
}

var yamlLine = regexp.MustCompile(`^(?:error converting YAML to JSON: )?yaml: line (\d+): (.*)$`)

// yamlError rewrites a YAML error's line, counted in its document, as a line of the whole stream.
func yamlError(err error, start int) string {
	msg := oneLine(err.Error())
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			return fmt.Sprintf("line %d: %s", start+n-1, m[2])
		}
	}
	return strings.TrimPrefix(msg, "error converting YAML to JSON: ")
}

// oneLine joins a multi-line message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "list"
	case string:
		return "string"
	case bool:
		return "boolean"
	case map[string]any:
		return "mapping"
	default:
		return "number"
	}
}
