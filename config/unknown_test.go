package config

import (
	"errors"
	"strings"
	"testing"
)

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"kitten", "sitting", 3},
		{"DISTFEAT_BROKER", "DISTFEAT_BROKERS", 1}, {"flaw", "lawn", 2}, {"same", "same", 0},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := editDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

// TestCheckEnvironment: unknown DISTFEAT_ variables are errors naming them with the closest
// known name; known, test-harness and foreign variables pass.
func TestCheckEnvironment(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want []string // substrings of the error; nil: no error
	}{
		{[]string{"DISTFEAT_BROKERS=a:1", "DISTFEAT_WINDOW=set", "PATH=/bin", "DISTFEAT_TEST_BROKERS=x:1"}, nil},
		{[]string{"DISTFEAT_BROKER=a:1"}, []string{"DISTFEAT_BROKER (did you mean DISTFEAT_BROKERS?)"}},
		{[]string{"DISTFEAT_WINDOWSIZE=10"}, []string{"DISTFEAT_WINDOWSIZE (did you mean DISTFEAT_WINDOW_SIZE?)"}},
		{[]string{"DISTFEAT_IDLE_TIMOUT=1s", "DISTFEAT_MAX_OPEN_WINDOW=3"}, []string{
			"DISTFEAT_IDLE_TIMOUT (did you mean DISTFEAT_IDLE_TIMEOUT?)",
			"DISTFEAT_MAX_OPEN_WINDOW (did you mean DISTFEAT_MAX_OPEN_WINDOWS?)"}},
		{[]string{"DISTFEAT_COMPLETELY_DIFFERENT=1"}, []string{"DISTFEAT_COMPLETELY_DIFFERENT"}},
	} {
		err := CheckEnvironment(tc.env)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%v: %v", tc.env, err)
			}
			continue
		}
		if !errors.Is(err, ErrUnknownVariable) {
			t.Fatalf("%v: %v, want ErrUnknownVariable", tc.env, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q does not contain %q", tc.env, err, w)
			}
		}
		if strings.Contains(tc.env[0], "COMPLETELY") && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("no close name, yet a suggestion: %v", err)
		}
	}
}
