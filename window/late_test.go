package window

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestCheckLateAgreesWithAdd: for random multi-set records with disordered event times, in
// time (tumbling and hopping) and session modes, CheckLate reports a record late exactly when
// adding its batches one by one would hit ErrLate. The checked manager is kept in step with
// the one that adds everything, so any state CheckLate changed would show up as a later
// disagreement.
func TestCheckLateAgreesWithAdd(t *testing.T) {
	cfgs := []Config{
		{Mode: ModeTime, Size: 100, MaxOpen: 1 << 20},
		{Mode: ModeTime, Size: 100, Hop: 25, AllowedLateness: 30, MaxOpen: 1 << 20},
		{Mode: ModeSession, Gap: 50, AllowedLateness: 10, MaxOpen: 1 << 20},
	}
	for ci, cfg := range cfgs {
		t.Run(fmt.Sprintf("%s-%d", cfg.Mode, ci), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 7))
			checked, _ := newTestManager(t, cfg) // sees CheckLate, then the record only if on time
			applied, _ := newTestManager(t, cfg) // adds every batch, as if there were no check
			var id int64
			lateRecords, mixed := 0, 0
			for off := int64(0); off < 400; off++ {
				var batches []Input
				base := off*10 + int64(rng.IntN(120)) - 60
				for b := 0; b < 1+rng.IntN(3); b++ {
					set := fmt.Sprintf("s%d", rng.IntN(4))
					t := base + int64(rng.IntN(80)) - 40
					batches = append(batches, in(off, b, set, t, false, id))
					id++
				}
				err := checked.CheckLate(batches)
				if err != nil && !errors.Is(err, ErrLate) {
					t.Fatalf("record %d: CheckLate error %v does not wrap ErrLate", off, err)
				}
				anyLate, anyOK := false, false
				for _, x := range batches {
					_, aerr := applied.Add(x)
					switch {
					case errors.Is(aerr, ErrLate):
						anyLate = true
					case aerr != nil:
						t.Fatalf("record %d: Add: %v", off, aerr)
					default:
						anyOK = true
					}
				}
				if (err != nil) != anyLate {
					t.Fatalf("record %d %v: CheckLate says late=%v, the batch-by-batch Adds say late=%v", off, batches, err != nil, anyLate)
				}
				if anyLate {
					lateRecords++
					if anyOK {
						mixed++
					}
					// Keep the managers in step: `applied` took this record's on-time batches
					// (batch by batch, each judged after the previous advanced the watermark),
					// so `checked` takes the same ones the same way.
					for _, x := range batches {
						if lerr := checked.CheckLate([]Input{x}); lerr == nil {
							if _, aerr := checked.Add(x); aerr != nil && !errors.Is(aerr, ErrLate) {
								t.Fatal(aerr)
							}
						}
					}
					continue
				}
				for _, x := range batches {
					if _, aerr := checked.Add(x); aerr != nil {
						t.Fatalf("record %d: CheckLate passed but Add failed: %v", off, aerr)
					}
				}
			}
			if lateRecords == 0 || mixed == 0 {
				t.Fatalf("the random stream produced %d late records, %d partly late: the test exercised nothing", lateRecords, mixed)
			}
			t.Logf("%d late records, %d of them partly late", lateRecords, mixed)
		})
	}
}
