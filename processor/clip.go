package processor

import (
	"fmt"
	"strconv"
	"strings"
)

// Clipping is never silent. A spec's bounds map raw points into the unit cube; with
// out_of_bounds "clip" a point outside them is clamped onto the cube's faces, which is right
// for a few outliers and garbage for data in other units: the built-in default spec's bounds
// are [0, 1]^d, and examples/sets.jsonl (in its own units) came out as 36 identical mmd
// vectors with 7203 of 7219 points clipped and no word said. ClipTally counts what was
// clipped, for `distfeat embed` (a summary on stderr, an error above MaxClippedFraction) and
// the worker (a rate-limited warning, points_clipped_total against points_total).

// MaxClippedFraction is the share of points that may be clipped before `distfeat embed`
// fails and the worker warns: bounds that describe the data clip only outliers (calibrate's
// own bounds leave out at most 0.1% of each axis' values on each side before widening them
// by 5% of the range), while bounds in other units clip most points.
const MaxClippedFraction = 0.01

// ClipRemedy says how to get bounds that fit the data; the embed summary and the worker's
// warning end with it.
const ClipRemedy = "the features of clipped points describe the faces of the bounds, not the data: " +
	"give the spec bounds that fit the data (`distfeat calibrate --in SETS --out spec.json` proposes them; " +
	"or set \"bounds\" in the spec), or refuse such points with \"out_of_bounds\": \"reject\""

// clipWorst is how many of the most clipped sets a ClipTally names.
const clipWorst = 3

// SetClip is one set's clipped points out of its points.
type SetClip struct {
	Set             string
	Points, Clipped int64
}

// ClipTally counts points and the points among them clamped into the spec's bounds, and
// keeps the clipWorst sets with the most clipped points. The zero value is empty; it is
// not safe for concurrent use.
type ClipTally struct {
	Points, Clipped int64
	worst           []SetClip
}

// Add counts points of set, clipped of which were clamped into the bounds. A set added
// several times (the worker's records) accumulates while it is among the worst.
func (t *ClipTally) Add(set string, points, clipped int) {
	t.Points += int64(points)
	t.Clipped += int64(clipped)
	if clipped <= 0 {
		return
	}
	i := 0
	for i < len(t.worst) && t.worst[i].Set != set {
		i++
	}
	if i == len(t.worst) {
		if len(t.worst) == clipWorst && t.worst[clipWorst-1].Clipped >= int64(clipped) {
			return
		}
		if len(t.worst) < clipWorst {
			t.worst = append(t.worst, SetClip{Set: set})
		}
		i = len(t.worst) - 1
		t.worst[i] = SetClip{Set: set}
	}
	t.worst[i].Points += int64(points)
	t.worst[i].Clipped += int64(clipped)
	for ; i > 0 && t.worst[i].Clipped > t.worst[i-1].Clipped; i-- {
		t.worst[i], t.worst[i-1] = t.worst[i-1], t.worst[i]
	}
}

// Fraction is the share of the points that were clipped (0 without points).
func (t *ClipTally) Fraction() float64 {
	if t.Points == 0 {
		return 0
	}
	return float64(t.Clipped) / float64(t.Points)
}

// Worst returns the sets with the most clipped points, most first.
func (t *ClipTally) Worst() []SetClip { return append([]SetClip(nil), t.worst...) }

// Reset empties the tally.
func (t *ClipTally) Reset() { *t = ClipTally{worst: t.worst[:0]} }

// Summary describes the tally in one line, e.g. "7203 of 7219 points (99.8%) were outside
// the spec's bounds and clipped into them; most clipped sets: "blob-00" (200 of 200), …".
func (t *ClipTally) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d points (%s) were outside the spec's bounds and clipped into them", t.Clipped, t.Points, percent(t.Fraction()))
	for i, w := range t.worst {
		if i == 0 {
			b.WriteString("; most clipped sets: ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%d of %d)", strconv.Quote(truncateUTF8(w.Set, 64)), w.Clipped, w.Points)
	}
	return b.String()
}

// Check returns a *ClipError when more than max of the points were clipped.
func (t *ClipTally) Check(max float64) error {
	if t.Fraction() > max {
		return &ClipError{Summary: t.Summary(), Fraction: t.Fraction(), Max: max}
	}
	return nil
}

// ClipError reports that more points were clipped than a run accepts.
type ClipError struct {
	Summary       string
	Fraction, Max float64
}

func (e *ClipError) Error() string {
	return fmt.Sprintf("%s: more than the %s accepted; %s", e.Summary, percent(e.Max), ClipRemedy)
}

// percent writes a fraction as a percentage with enough digits to tell it from 0 and 100.
func percent(f float64) string {
	switch {
	case f == 0 || f == 1:
		return fmt.Sprintf("%.0f%%", 100*f)
	case f < 0.001:
		return fmt.Sprintf("%.3g%%", 100*f)
	case f > 0.999:
		return "99.9%+"
	}
	return fmt.Sprintf("%.1f%%", 100*f)
}
