package webhook

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/open-cluster-management-io/placement-manifestwork/pkg/health"
)

// Status is reported status feedback by name. Its values are JSON scalars: integers, strings and booleans
// as the work agent reports them, or any JSON for a JsonRaw value. Decoded from the wire, integers are
// float64 or json.Number: read them with Int.
type Status map[string]any

// StatusOf turns the agent's feedback into the wire form.
func StatusOf(feedback health.Feedback) Status {
	if len(feedback) == 0 {
		return nil
	}
	out := make(Status, len(feedback))
	for name, v := range feedback {
		switch {
		case v.Integer != nil:
			out[name] = *v.Integer
		case v.String != nil:
			out[name] = *v.String
		case v.Boolean != nil:
			out[name] = *v.Boolean
		case v.JsonRaw != nil && json.Valid([]byte(*v.JsonRaw)):
			out[name] = json.RawMessage(*v.JsonRaw)
		}
	}
	return out
}

// Int is an integer value; false when absent or not an integer.
func (s Status) Int(name string) (int64, bool) {
	switch n := s[name].(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case string:
		return 0, false
	}
	return 0, false
}

// String is a string value; false when absent or not a string.
func (s Status) String(name string) (string, bool) {
	v, ok := s[name].(string)
	return v, ok
}

// Bool is a boolean value; false when absent or not a boolean.
func (s Status) Bool(name string) (value, ok bool) {
	v, ok := s[name].(bool)
	return v, ok
}

// Text is any scalar value as text (true, 3, Ready), as AggregatedField counts show it; false when absent.
func (s Status) Text(name string) (string, bool) {
	v, ok := s[name]
	if !ok || v == nil {
		return "", false
	}
	if i, ok := s.Int(name); ok {
		return strconv.FormatInt(i, 10), true
	}
	switch t := v.(type) {
	case string:
		return t, true
	case bool:
		return strconv.FormatBool(t), true
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(raw), true
}
