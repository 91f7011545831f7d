package window

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// Reference models: straightforward re-statements of each mode's rules over whole point
// lists (no panes, heaps, LRU or offsets bookkeeping), used to check the Manager on random
// input. They have no capacity limit: compare them with Managers whose MaxOpen is never hit.

// mpt is a point as the models see it.
type mpt struct {
	id, off int64
	idx     int
	t       int64
}

func (p mpt) seq() uint64 { return uint64(p.off)<<20 | uint64(p.idx) }

func pointsOf(x Input) []mpt {
	n := len(x.Points) / 2
	out := make([]mpt, n)
	for i := range out {
		out[i] = mpt{int64(x.Points[2*i]), x.Offset, x.Index + i, x.EventTime}
	}
	return out
}

// arrivalWin builds a set/count/session window from points in arrival order.
func arrivalWin(set string, ps []mpt, reason Reason, last int64, minmax bool) win {
	w := win{Set: set, Seq: ps[0].seq(), Start: ps[0].t, End: ps[len(ps)-1].t, N: int64(len(ps)), Reason: reason, First: ps[0].off, Last: last}
	for _, p := range ps {
		w.IDs = append(w.IDs, p.id)
		if minmax {
			w.Start, w.End = min(w.Start, p.t), max(w.End, p.t)
		}
		if p.seq() < w.Seq {
			w.Seq, w.First = p.seq(), p.off
		}
	}
	slices.Sort(w.IDs)
	return w
}

func modelSet(inputs []Input) outcome {
	var o outcome
	open := map[string][]mpt{}
	var order []string
	for _, x := range inputs {
		ps := pointsOf(x)
		if len(ps) == 0 && x.End && len(open[x.Set]) == 0 {
			o.ends = append(o.ends, inputID(x))
			continue
		}
		if len(open[x.Set]) == 0 && len(ps) > 0 {
			order = append(order, x.Set)
		}
		open[x.Set] = append(open[x.Set], ps...)
		if x.End {
			o.wins = append(o.wins, arrivalWin(x.Set, open[x.Set], ReasonEnd, x.Offset, false))
			delete(open, x.Set)
		}
	}
	for _, s := range order {
		if ps := open[s]; len(ps) > 0 {
			o.wins = append(o.wins, arrivalWin(s, ps, ReasonIdle, ps[len(ps)-1].off, false))
			delete(open, s)
		}
	}
	return o
}

func modelCount(inputs []Input, size, hop int64) outcome {
	if hop == 0 {
		hop = size
	}
	type stream struct {
		ps        []mpt
		closedEnd int64
	}
	var o outcome
	streams := map[string]*stream{}
	hasOpen := func(s *stream) bool {
		l := int64(len(s.ps))
		lo := int64(0)
		if l >= size {
			lo = (l-size)/hop + 1
		}
		return l > 0 && (l-1)/hop >= lo
	}
	end := func(set string, s *stream, reason Reason, last int64) {
		l := int64(len(s.ps))
		if l > s.closedEnd {
			w0 := int64(0)
			if l >= size {
				w0 = (l-size)/hop + 1
			}
			o.wins = append(o.wins, arrivalWin(set, s.ps[w0*hop:], reason, last, false))
		}
		delete(streams, set)
	}
	for _, x := range inputs {
		s := streams[x.Set]
		ps := pointsOf(x)
		if len(ps) == 0 && x.End && (s == nil || !hasOpen(s)) {
			o.ends = append(o.ends, inputID(x))
			delete(streams, x.Set)
			continue
		}
		if s == nil {
			s = &stream{}
			streams[x.Set] = s
		}
		for _, p := range ps {
			s.ps = append(s.ps, p)
			if l := int64(len(s.ps)); l >= size && (l-size)%hop == 0 {
				w := (l - size) / hop
				o.wins = append(o.wins, arrivalWin(x.Set, s.ps[w*hop:w*hop+size], ReasonCount, x.Offset, false))
				s.closedEnd = l
			}
		}
		if x.End {
			end(x.Set, s, ReasonEnd, x.Offset)
		}
	}
	for set, s := range streams {
		if len(s.ps) > 0 {
			end(set, s, ReasonIdle, s.ps[len(s.ps)-1].off)
		}
	}
	return o
}

func modelTime(inputs []Input, size, hop, lateness int64) outcome {
	if hop == 0 {
		hop = size
	}
	type wk struct {
		set string
		k   int64
	}
	var o outcome
	open := map[wk][]mpt{}
	maxEvent, seen := int64(0), false
	closeWin := func(w wk, reason Reason) {
		ps := open[w]
		x := win{Set: w.set, Seq: uint64(w.k), Start: w.k * hop, End: w.k*hop + size, N: int64(len(ps)), Reason: reason, First: ps[0].off}
		for _, p := range ps {
			x.IDs = append(x.IDs, p.id)
			x.First, x.Last = min(x.First, p.off), max(x.Last, p.off)
		}
		slices.Sort(x.IDs)
		o.wins = append(o.wins, x)
		delete(open, w)
	}
	for _, x := range inputs {
		ps := pointsOf(x)
		if len(ps) == 0 {
			continue
		}
		t := x.EventTime
		lo, hi := floorDiv(t-size, hop)+1, floorDiv(t, hop)
		if seen && lo*hop+size <= maxEvent-lateness {
			o.late = append(o.late, inputID(x))
			continue
		}
		for k := lo; k <= hi; k++ {
			open[wk{x.Set, k}] = append(open[wk{x.Set, k}], ps...)
		}
		if !seen || t > maxEvent {
			maxEvent, seen = t, true
		}
		for w := range open {
			if w.k*hop+size <= maxEvent-lateness {
				closeWin(w, ReasonWatermark)
			}
		}
	}
	for w := range open {
		closeWin(w, ReasonIdle)
	}
	return o
}

func modelSession(inputs []Input, gap, lateness int64) outcome {
	var o outcome
	sessions := map[string][][]mpt{}
	maxEvent, seen := int64(0), false
	emit := func(set string, ps []mpt, reason Reason, last int64) {
		if last < 0 {
			for _, p := range ps {
				last = max(last, p.off)
			}
		}
		o.wins = append(o.wins, arrivalWin(set, ps, reason, last, true))
	}
	for _, x := range inputs {
		ps := pointsOf(x)
		if len(ps) == 0 {
			if x.End {
				if len(sessions[x.Set]) == 0 {
					o.ends = append(o.ends, inputID(x))
				}
				for _, s := range sessions[x.Set] {
					emit(x.Set, s, ReasonEnd, x.Offset)
				}
				delete(sessions, x.Set)
			}
			continue
		}
		t := x.EventTime
		if seen && t+gap <= maxEvent-lateness {
			o.late = append(o.late, inputID(x))
			continue
		}
		merged := ps
		var keep [][]mpt
		for _, s := range sessions[x.Set] {
			near := false
			for _, p := range s {
				if p.t-t < gap && t-p.t < gap {
					near = true
				}
			}
			if near {
				merged = append(merged, s...)
			} else {
				keep = append(keep, s)
			}
		}
		sessions[x.Set] = append(keep, merged)
		if !seen || t > maxEvent {
			maxEvent, seen = t, true
		}
		if x.End {
			for _, s := range sessions[x.Set] {
				emit(x.Set, s, ReasonEnd, x.Offset)
			}
			delete(sessions, x.Set)
		}
		for set, ss := range sessions {
			var keep [][]mpt
			for _, s := range ss {
				mx := s[0].t
				for _, p := range s {
					mx = max(mx, p.t)
				}
				if mx+gap <= maxEvent-lateness {
					emit(set, s, ReasonGap, -1)
				} else {
					keep = append(keep, s)
				}
			}
			if len(keep) == 0 {
				delete(sessions, set)
			} else {
				sessions[set] = keep
			}
		}
	}
	for set, ss := range sessions {
		for _, s := range ss {
			emit(set, s, ReasonIdle, -1)
		}
	}
	return o
}

// gen describes random partition input.
type gen struct {
	sets, records, maxBatches, maxPoints int
	endProb                              float64
	step, jitter                         int64 // event time: +[0,step] per record, −[0,jitter] per batch
}

// genInputs returns random inputs: records with 1..maxBatches batches (sets may repeat within
// a record, as in an Arrow record with non-consecutive runs), offsets with occasional gaps,
// event times advancing with disorder, random ends (some without points).
func genInputs(rng *rand.Rand, g gen) []Input {
	var out []Input
	id, t, off := int64(1), int64(1000), int64(rng.IntN(3))
	for r := 0; r < g.records; r++ {
		nb := 1 + rng.IntN(g.maxBatches)
		idx := 0
		t += rng.Int64N(g.step + 1)
		for b := 0; b < nb; b++ {
			np := rng.IntN(g.maxPoints + 1)
			end := rng.Float64() < g.endProb
			if np == 0 && !end && rng.IntN(2) == 0 {
				np = 1
			}
			x := in(off, idx, fmt.Sprintf("s%d", rng.IntN(g.sets)), t-rng.Int64N(g.jitter+1), end, ids(id, np)...)
			id += int64(np)
			idx += np
			out = append(out, x)
		}
		off += 1 + int64(rng.IntN(4)/3) // occasional gaps, as after compaction or transaction markers
	}
	return out
}

// modeConfig returns a random configuration for mode; capacity limits eviction when evict.
func modeConfig(rng *rand.Rand, mode Mode, evict bool) Config {
	cfg := Config{Mode: mode, IdleTimeout: 100 * 3600e9, MaxOpen: 1 << 20}
	switch mode {
	case ModeCount:
		cfg.Size = []int64{1, 3, 5, 6}[rng.IntN(4)]
		if h := []int64{0, 1, 2, 4}[rng.IntN(4)]; h <= cfg.Size {
			cfg.Hop = h
		}
	case ModeTime:
		cfg.Size = []int64{10, 12, 15}[rng.IntN(3)]
		cfg.Hop = []int64{0, 4, 5, 6}[rng.IntN(4)]
		cfg.AllowedLateness = []int64{0, 3, 10, 40}[rng.IntN(4)]
	case ModeSession:
		cfg.Gap = []int64{3, 6, 10}[rng.IntN(3)]
		cfg.AllowedLateness = []int64{0, 3, 10, 40}[rng.IntN(4)]
	}
	if evict {
		per := 1
		if cfg.Size > 0 {
			per = int(ceilDiv(cfg.Size, cfg.hop()))
		}
		cfg.MaxOpen = per + rng.IntN(4)
	}
	return cfg
}

// model runs the reference model of cfg's mode.
func model(cfg Config, inputs []Input) outcome {
	switch cfg.mode() {
	case ModeCount:
		return modelCount(inputs, cfg.Size, cfg.Hop)
	case ModeTime:
		return modelTime(inputs, cfg.Size, cfg.Hop, cfg.AllowedLateness)
	case ModeSession:
		return modelSession(inputs, cfg.Gap, cfg.AllowedLateness)
	}
	return modelSet(inputs)
}

// TestAgainstModel checks every mode against its reference model on random input: exactly
// which points land in which windows, bounds, Seq, offsets, reasons, late inputs and ends
// without a window.
func TestAgainstModel(t *testing.T) {
	for _, mode := range []Mode{ModeSet, ModeCount, ModeTime, ModeSession} {
		t.Run(string(mode), func(t *testing.T) {
			for seed := uint64(0); seed < 150; seed++ {
				rng := rand.New(rand.NewPCG(seed, 1))
				cfg := modeConfig(rng, mode, false)
				inputs := genInputs(rng, gen{sets: 1 + rng.IntN(5), records: 60, maxBatches: 3, maxPoints: 5, endProb: 0.08, step: 3, jitter: 15})
				m, clock := newTestManager(t, cfg)
				var got outcome
				feed(t, m, &got, inputs...)
				flush(t, m, clock, &got)
				want := model(cfg, inputs)
				if d := diffWins(got.wins, want.wins); d != "" {
					t.Fatalf("seed %d, %+v: windows differ from the model:\n%s", seed, cfg, d)
				}
				if !slices.Equal(got.late, want.late) || !slices.Equal(got.ends, want.ends) {
					t.Fatalf("seed %d, %+v: late %v, ends %v; model: late %v, ends %v", seed, cfg, got.late, got.ends, want.late, want.ends)
				}
				if len(want.wins) == 0 {
					t.Fatalf("seed %d: no windows at all: the generator is broken", seed)
				}
			}
		})
	}
}
