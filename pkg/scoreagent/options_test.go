package scoreagent

import (
	"testing"
	"time"
)

func TestCheckOptions(t *testing.T) {
	cases := map[string]struct {
		opts map[string]string
		want string
	}{
		"none":            {},
		"known ones":      {opts: map[string]string{"url": "x", "runs": "2"}},
		"one unknown":     {opts: map[string]string{"url": "x", "rusn": "2"}, want: `unknown option "rusn"; known options: runs, url`},
		"several, sorted": {opts: map[string]string{"b": "", "a": ""}, want: `unknown options "a", "b"; known options: runs, url`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := errString(CheckOptions(tc.opts, "url", "runs"))
			if got != tc.want {
				t.Errorf("CheckOptions = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestIntOption(t *testing.T) {
	cases := map[string]struct {
		value   *string
		want    int64
		wantErr string
	}{
		"missing: the default": {want: 3},
		"empty: the default":   {value: ptr(""), want: 3},
		"a value":              {value: ptr("7"), want: 7},
		"spaces":               {value: ptr(" 7 "), want: 7},
		"the low bound":        {value: ptr("1"), want: 1},
		"the high bound":       {value: ptr("10"), want: 10},
		"too low":              {value: ptr("0"), wantErr: "runs is 0, at least 1"},
		"too high":             {value: ptr("11"), wantErr: "runs is 11, at most 10"},
		"not a number":         {value: ptr("two"), wantErr: `runs "two" is not a whole number`},
		"a fraction":           {value: ptr("2.5"), wantErr: `runs "2.5" is not a whole number`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := map[string]string{}
			if tc.value != nil {
				opts["runs"] = *tc.value
			}
			got, err := IntOption(opts, "runs", 3, 1, 10)
			if errString(err) != tc.wantErr {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Errorf("IntOption = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestDurationOption(t *testing.T) {
	cases := map[string]struct {
		value   *string
		want    time.Duration
		wantErr string
	}{
		"missing: the default": {want: time.Second},
		"a value":              {value: ptr("10s"), want: 10 * time.Second},
		"minutes":              {value: ptr("1m"), want: time.Minute},
		"zero":                 {value: ptr("0s"), want: 0},
		"too long":             {value: ptr("61s"), wantErr: "waitBetweenRuns is 1m1s, at most 1m0s"},
		"negative":             {value: ptr("-1s"), wantErr: "waitBetweenRuns is -1s, at least 0s"},
		"no unit":              {value: ptr("10"), wantErr: `waitBetweenRuns "10" is not a duration such as 10s`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := map[string]string{}
			if tc.value != nil {
				opts["waitBetweenRuns"] = *tc.value
			}
			got, err := DurationOption(opts, "waitBetweenRuns", time.Second, 0, time.Minute)
			if errString(err) != tc.wantErr {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Errorf("DurationOption = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestEnumOption(t *testing.T) {
	cases := map[string]struct {
		opts    map[string]string
		want    string
		wantErr string
	}{
		"missing: the default": {want: "cpu"},
		"a value":              {opts: map[string]string{"resource": "memory"}, want: "memory"},
		"case matters":         {opts: map[string]string{"resource": "CPU"}, wantErr: `resource "CPU" is not one of cpu, memory`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := EnumOption(tc.opts, "resource", "cpu", "cpu", "memory")
			if errString(err) != tc.wantErr {
				t.Fatalf("error = %v, want %q", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("EnumOption = %q, want %q", got, tc.want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func ptr[T any](v T) *T { return &v }
