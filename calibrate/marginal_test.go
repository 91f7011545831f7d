package calibrate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/spec"
)

// shiftDomains draws n domains of 1-D points (dim 2, the second coordinate noise): class "+"
// at c+1, "−" at c−1 (sd 0.7), with a per-domain shift c uniform in [−2.5, 2.5]. With
// informative true the shift moves the points along x₁, where the boundary lies (the
// marginal's mean gives the boundary); otherwise it moves them along x₂ (the boundary stays
// x₁ = 0 and the marginal says nothing about it).
func shiftDomains(n, points int, informative bool, stream string) []LabelledSet {
	var sets []LabelledSet
	for k := 0; k < n; k++ {
		rng := embedding.NewRNG(9, fmt.Sprintf("%s/%d", stream, k))
		c := 5*rng.Float64() - 2.5
		s := LabelledSet{ID: fmt.Sprintf("%s-%02d", stream, k)}
		for i := 0; i < points; i++ {
			sign, l := 1.0, "+"
			if i%2 == 1 {
				sign, l = -1, "-"
			}
			x1, x2 := sign+0.7*rng.Normal(), 0.7*rng.Normal()
			if informative {
				x1 += c
			} else {
				x2 += c
			}
			s.Points = append(s.Points, x1, x2)
			s.Labels = append(s.Labels, l)
		}
		sets = append(sets, s)
	}
	return sets
}

func shiftEmbedder(t *testing.T) *embedding.Embedder {
	t.Helper()
	sp, err := spec.ParseSpec([]byte(`{"version":1,"seed":42,"dim":2,"bounds":{"lo":[-6,-6],"hi":[6,6]},
	  "families":[{"name":"psi","kind":"mmd","features":128,"bandwidth":0.06}]}`))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embedding.New(sp)
	if err != nil {
		t.Fatal(err)
	}
	return emb
}

// TestMarginalTransferChoice: where the boundary moves with the marginal, domain CV proposes
// marginal transfer and its held-out accuracy is far above pooling's (pooled features cannot
// place a boundary that differs per domain: ≈ 0.7 here, against ≈ 0.9); where it does not,
// pooling is proposed or the proposal is within 0.02 of it; a σ_P far too small is worse
// than pooling in both.
func TestMarginalTransferChoice(t *testing.T) {
	emb := shiftEmbedder(t)
	// The spec's Ψ only: this test is about σ_P (TestMarginalTransferUnseenDomains searches Ψ).
	opts := MarginalOptions{Features: []int{128}, Lambdas: []float64{1e-3, 1e-1}, MaxPoints: 80, PsiScales: []float64{1}}
	for _, tc := range []struct {
		name        string
		informative bool
	}{{"informative", true}, {"noinfo", false}} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := MarginalTransfer(context.Background(), emb, shiftDomains(16, 80, tc.informative, tc.name), opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + res.Summary())
			if !strings.Contains(res.Summary(), "← proposed") {
				t.Errorf("the summary marks no proposed row")
			}
			var tooSmall *MarginalCandidate
			for i, c := range res.Grid {
				if !c.Pooling && c.SigmaP < res.MedianPsi/3 {
					tooSmall = &res.Grid[i]
					break
				}
			}
			if tooSmall == nil || tooSmall.Accuracy > res.BestPooling.Accuracy-0.05 {
				t.Errorf("σ_P below a third of the median set distance should be clearly worse than pooling: %+v vs %.3f", tooSmall, res.BestPooling.Accuracy)
			}
			if tc.informative {
				if res.Family.Pooling || res.Chosen.Accuracy < res.BestPooling.Accuracy+0.1 {
					t.Errorf("informative marginal: proposed %+v (CV %.3f), pooling CV %.3f; want marginal transfer, ≥ 0.1 better",
						res.Family, res.Chosen.Accuracy, res.BestPooling.Accuracy)
				}
				return
			}
			if res.Chosen.Accuracy < res.BestPooling.Accuracy-0.02 {
				t.Errorf("no-information marginal: proposal CV %.3f < pooling %.3f − 0.02", res.Chosen.Accuracy, res.BestPooling.Accuracy)
			}
		})
	}
}

func TestMarginalTransferErrors(t *testing.T) {
	emb := shiftEmbedder(t)
	one := shiftDomains(3, 10, false, "e")
	for i := range one {
		for j := range one[i].Labels {
			one[i].Labels[j] = "a"
		}
	}
	bad := shiftDomains(3, 10, false, "e")
	bad[1].Labels = bad[1].Labels[:3]
	for _, tc := range []struct {
		sets []LabelledSet
		opts MarginalOptions
		want string
	}{
		{one, MarginalOptions{}, "at least 2 classes"},
		{bad, MarginalOptions{}, "has 3 labels for 10 points"},
		{shiftDomains(1, 10, false, "e"), MarginalOptions{}, "at least 2 labelled sets"},
		{shiftDomains(3, 10, false, "e"), MarginalOptions{SetFamily: "nope"}, `"nope" is not in the spec`},
	} {
		if _, err := MarginalTransfer(context.Background(), emb, tc.sets, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error containing %q", err, tc.want)
		}
	}
}

func TestChoose(t *testing.T) {
	rng := embedding.NewRNG(1, "sub")
	got := choose(rng, 100, 10)
	if len(got) != 10 {
		t.Fatalf("%d indices, want 10", len(got))
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] || got[i] >= 100 {
			t.Fatalf("indices not increasing in range: %v", got)
		}
	}
	if all := choose(rng, 5, 10); len(all) != 5 || all[4] != 4 {
		t.Fatalf("n ≤ k: %v, want 0..4", all)
	}
}
