package scoreagent

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Helpers for plugins to read their options with the same words in every message. A missing or empty
// option takes its default.

// CheckOptions refuses an option not in known: a misspelt option silently ignored would measure something
// other than what the generator's author asked for.
func CheckOptions(opts map[string]string, known ...string) error {
	var unknown []string
	for k := range opts {
		if !slices.Contains(known, k) {
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	noun := "option"
	if len(unknown) > 1 {
		noun = "options"
	}
	return fmt.Errorf("unknown %s %s; known options: %s", noun, strings.Join(unknown, ", "), strings.Join(sorted, ", "))
}

// IntOption reads a whole number in [lo, hi].
func IntOption(opts map[string]string, key string, def, lo, hi int64) (int64, error) {
	s, ok := opts[key]
	if !ok || s == "" {
		return def, nil
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a whole number", key, s)
	}
	if v < lo {
		return 0, fmt.Errorf("%s is %d, at least %d", key, v, lo)
	}
	if v > hi {
		return 0, fmt.Errorf("%s is %d, at most %d", key, v, hi)
	}
	return v, nil
}

// DurationOption reads a duration ("10s", "1m30s") in [lo, hi].
func DurationOption(opts map[string]string, key string, def, lo, hi time.Duration) (time.Duration, error) {
	s, ok := opts[key]
	if !ok || s == "" {
		return def, nil
	}
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a duration such as 10s", key, s)
	}
	if v < lo {
		return 0, fmt.Errorf("%s is %s, at least %s", key, v, lo)
	}
	if v > hi {
		return 0, fmt.Errorf("%s is %s, at most %s", key, v, hi)
	}
	return v, nil
}

// EnumOption reads one of allowed.
func EnumOption(opts map[string]string, key, def string, allowed ...string) (string, error) {
	s, ok := opts[key]
	if !ok || s == "" {
		return def, nil
	}
	if !slices.Contains(allowed, s) {
		return "", fmt.Errorf("%s %q is not one of %s", key, s, strings.Join(allowed, ", "))
	}
	return s, nil
}
