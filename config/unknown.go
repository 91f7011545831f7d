package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// TestPrefix marks variables reserved for the test harness (DISTFEAT_TEST_BROKERS); the
// worker ignores them and CheckEnvironment accepts them.
const TestPrefix = EnvPrefix + "TEST_"

// ErrUnknownVariable is wrapped by CheckEnvironment's error.
var ErrUnknownVariable = errors.New("unknown variable")

// CheckEnvironment returns an error naming every DISTFEAT_ variable in environ ("NAME=value"
// pairs, os.Environ) that no Variable describes, each with the closest known name, so a
// misspelt DISTFEAT_BROKER fails at start-up instead of silently using the default.
func CheckEnvironment(environ []string) error {
	known := map[string]bool{}
	var names []string
	for _, v := range Variables() {
		known[v.Env()] = true
		names = append(names, v.Env())
	}
	var msgs []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || known[name] || strings.HasPrefix(name, TestPrefix) {
			continue
		}
		msg := name
		if s := closest(name, names); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) == 0 {
		return nil
	}
	sort.Strings(msgs)
	return fmt.Errorf("configuration: %w: %s (known: see distfeat worker -h)", ErrUnknownVariable, strings.Join(msgs, ", "))
}

// closest returns the candidate nearest to name by edit distance, or "" when even the nearest
// differs in more than a third of name's characters after the prefix (no useful suggestion).
func closest(name string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		if d := editDistance(name, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > max(2, (len(name)-len(EnvPrefix))/3) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance (insertions, deletions, substitutions) in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
