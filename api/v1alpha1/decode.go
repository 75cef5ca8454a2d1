package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// A PlacementManifestWork the manager cannot decode must not stop it from decoding the others: the manager's
// informer lists them all in one response, and one item that fails to decode fails the whole list, so no
// PlacementManifestWork on the hub would be reconciled. The CRD refuses what cannot be decoded, but objects
// stored before it did (an upgrade) and holes the schema cannot close (the RFC 3339 times of status
// conditions, a type of apimachinery's) remain. So the spec and the status decode field by field when the
// whole does not: what cannot be decoded is left zero, and the spec remembers it (DecodeProblems).
//
// The CRD's rules that keep undecodable values out, checked by test/integration/schema_test.go:
//   - durations (failover, moveStrategy, rolloutStrategy's minSuccessTime and progressDeadline) must match a
//     pattern that time.ParseDuration accepts and that cannot overflow; OCM's rollout fields are checked by
//     rules on spec.rolloutStrategy, as OCM's type does not check them all;
//   - every int32 has a minimum and a maximum, as the API server does not enforce format: int32, and
//     rolloutStrategy's int-or-strings and groupIndex are bounded by rules;
//   - every time (status conditions, failedOver) has a rule that compares it, because only a rule makes the
//     API server parse it: its date-time format alone admits [] and 2024-01-01t00:00:00z, which metav1.Time
//     cannot decode.

// UnmarshalJSON decodes a spec as encoding/json would when it can. When it cannot, it decodes every other
// field, leaves the fields it cannot decode zero (a list drops the items it cannot decode) and records them
// for DecodeProblems, instead of failing.
func (s *PlacementManifestWorkSpec) UnmarshalJSON(data []byte) error {
	type plain PlacementManifestWorkSpec // the same fields without this method
	var p plain
	problems, err := decodeTolerant(data, &p, "spec")
	if err != nil {
		return err
	}
	*s = PlacementManifestWorkSpec(p)
	s.decodeProblems = problems
	return nil
}

// DecodeProblems lists the fields of the stored spec that could not be decoded, each as "path: error", for
// example `spec.moveStrategy.timeout: time: unknown unit "d" in duration "1d"`. It is empty for every spec the
// current CRD admits; a non-empty list means the spec was stored before the CRD refused such values, and the
// decoded spec is not the user's (those fields are zero), so it must not be acted on: report it and wait for
// the user to fix the spec. The list is shared with copies of the spec; do not modify it.
func (s *PlacementManifestWorkSpec) DecodeProblems() []string {
	return s.decodeProblems
}

// UnmarshalJSON decodes a status as encoding/json would when it can. When it cannot, it decodes every other
// field and leaves the fields it cannot decode zero (a list drops the items it cannot decode); nothing is
// recorded, as the manager writes the status afresh from what it observes.
func (s *PlacementManifestWorkStatus) UnmarshalJSON(data []byte) error {
	type plain PlacementManifestWorkStatus
	var p plain
	if _, err := decodeTolerant(data, &p, "status"); err != nil {
		return err
	}
	*s = PlacementManifestWorkStatus(p)
	return nil
}

// decodeTolerant decodes data into v, a pointer to a struct. When the struct as a whole does not decode, it
// decodes it field by field and returns what could not be decoded. It fails only when data is not a JSON
// object, as encoding/json would for any struct.
func decodeTolerant(data []byte, v any, path string) ([]string, error) {
	if err := utiljson.Unmarshal(data, v); err == nil {
		return nil, nil
	}
	rv := reflect.ValueOf(v).Elem()
	rv.Set(reflect.Zero(rv.Type()))
	var fields map[string]json.RawMessage
	if err := utiljson.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	var problems []string
	decodeFields(fields, rv, path, &problems)
	return problems, nil
}

// decodeFields decodes the fields of the struct v from the keys of a JSON object, as encoding/json names them
// (the json tag's name, or the field's; the fields of an embedded struct without a name are promoted).
func decodeFields(fields map[string]json.RawMessage, v reflect.Value, path string, problems *[]string) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
			continue
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			decodeFields(fields, v.Field(i), path, problems)
			continue
		case name == "":
			name = f.Name
		}
		raw, ok := fields[name]
		if !ok {
			continue
		}
		decodeValue(raw, v.Field(i), path+"."+name, problems)
	}
}

// decodeValue decodes one JSON value into v. A value that does not decode is taken apart where that can say
// more precisely what is wrong: a struct field by field, a list item by item (dropping the items that do not
// decode). Anything else is left zero and recorded.
func decodeValue(raw json.RawMessage, v reflect.Value, path string, problems *[]string) {
	err := utiljson.Unmarshal(raw, v.Addr().Interface())
	if err == nil {
		return
	}
	v.Set(reflect.Zero(v.Type()))
	t := v.Type()
	switch {
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && !decodesItself(t.Elem()):
		var fields map[string]json.RawMessage
		if utiljson.Unmarshal(raw, &fields) != nil || fields == nil {
			break
		}
		elem := reflect.New(t.Elem())
		decodeFields(fields, elem.Elem(), path, problems)
		v.Set(elem)
		return
	case t.Kind() == reflect.Struct && !decodesItself(t):
		var fields map[string]json.RawMessage
		if utiljson.Unmarshal(raw, &fields) != nil {
			break
		}
		decodeFields(fields, v, path, problems)
		return
	case t.Kind() == reflect.Slice && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`)):
		var items []json.RawMessage
		if utiljson.Unmarshal(raw, &items) != nil {
			break
		}
		out := reflect.MakeSlice(t, 0, len(items))
		for i, item := range items {
			elem := reflect.New(t.Elem())
			if err := utiljson.Unmarshal(item, elem.Interface()); err != nil {
				*problems = append(*problems, fmt.Sprintf("%s[%d]: %v", path, i, err))
				continue
			}
			out = reflect.Append(out, elem.Elem())
		}
		v.Set(out)
		return
	}
	*problems = append(*problems, fmt.Sprintf("%s: %v", path, err))
}

// decodesItself says whether a type has its own UnmarshalJSON (metav1.Duration, intstr.IntOrString,
// runtime.RawExtension, ...): its value is decoded whole, never field by field.
func decodesItself(t reflect.Type) bool {
	u := reflect.TypeFor[json.Unmarshaler]()
	return t.Implements(u) || reflect.PointerTo(t).Implements(u)
}
