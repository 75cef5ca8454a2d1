// Package yamlobjects decodes multi-document YAML or JSON streams into objects: the sandbox's samples, the
// rendered chart and kustomizations the deploy tests check, the shipped policies.
package yamlobjects

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Decode decodes every document of r; empty documents are skipped. name is for errors.
func Decode(r io.Reader, name string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", name, err)
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

// DecodeBytes is Decode of data.
func DecodeBytes(data []byte, name string) ([]*unstructured.Unstructured, error) {
	return Decode(bytes.NewReader(data), name)
}

// ReadFile is Decode of the file at path.
func ReadFile(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return Decode(f, path)
}
