package template

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FieldPathKeys splits a dotted field path such as ".spec.replicas" into its keys.
func FieldPathKeys(path string) ([]string, error) {
	if !strings.HasPrefix(path, ".") || len(path) < 2 {
		return nil, fmt.Errorf("field path %q must start with a dot, as in .spec.replicas", path)
	}
	keys := strings.Split(path[1:], ".")
	for _, k := range keys {
		if k == "" {
			return nil, fmt.Errorf("field path %q has an empty key", path)
		}
	}
	return keys, nil
}

// IntField reads the non-negative integer at path. A missing field, a value that is not an integer, a
// negative value or one beyond int32 is an error that names the path.
func IntField(obj *unstructured.Unstructured, path string) (int32, error) {
	keys, err := FieldPathKeys(path)
	if err != nil {
		return 0, err
	}
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, keys...)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if !found {
		return 0, fmt.Errorf("%s is not set", path)
	}
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case int32:
		n = int64(x)
	case int:
		n = int64(x)
	case float64:
		// Range first: converting a float beyond int64 to int64 is implementation-defined.
		switch {
		case x != math.Trunc(x):
			return 0, fmt.Errorf("%s is %v, not an integer", path, x)
		case x < 0:
			return 0, fmt.Errorf("%s is %v, a negative number", path, x)
		case x > math.MaxInt32:
			return 0, fmt.Errorf("%s is %v, more than %d", path, x, math.MaxInt32)
		}
		n = int64(x)
	default:
		return 0, fmt.Errorf("%s is a %T, not an integer", path, v)
	}
	if n < 0 {
		return 0, fmt.Errorf("%s is %d, a negative number", path, n)
	}
	if n > math.MaxInt32 {
		return 0, fmt.Errorf("%s is %d, more than %d", path, n, math.MaxInt32)
	}
	return int32(n), nil
}

// SetIntField returns a copy of obj with path set to value. The field must exist (IntField checked it).
func SetIntField(obj *unstructured.Unstructured, path string, value int32) (*unstructured.Unstructured, error) {
	keys, err := FieldPathKeys(path)
	if err != nil {
		return nil, err
	}
	out := obj.DeepCopy()
	if err := unstructured.SetNestedField(out.Object, int64(value), keys...); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
