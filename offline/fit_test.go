package offline

import (
	"reflect"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/model"
)

// TestFitColumns: the columns fit reads, per set (in the spec's order, a family's columns
// together) and per point (in the order named), and the errors naming what is missing.
func TestFitColumns(t *testing.T) {
	const withPoints = `{"version":1,"seed":7,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},
 "families":[{"name":"mmd","kind":"mmd","features":32,"bandwidth":0.2},
   {"name":"l2","kind":"l2","features":8,"sigma":1},
   {"name":"mt","kind":"marginal_transfer","set_family":"mmd","sigma_p":0.4,"sigma_x":0.3,"features":64},
   {"name":"pool","kind":"marginal_transfer","pooling":true,"sigma_x":0.3,"features":16}]}`
	const setsOnly = `{"version":1,"seed":7,"dim":2,"bounds":{"lo":[0,0],"hi":[1,1]},
 "families":[{"name":"mmd","kind":"mmd","features":32,"bandwidth":0.2}]}`
	emb, plain := mustSpec(t, withPoints), mustSpec(t, setsOnly)
	names := func(cols []model.Column) string {
		var s []string
		for _, c := range cols {
			s = append(s, c.Name)
		}
		return strings.Join(s, ",")
	}
	all := names(ModelColumns(emb.Columns()))
	for _, tc := range []struct {
		name, families string
		perPoint       bool
		want, err      string
	}{
		{"every set column", "", false, all, ""},
		{"named, in the spec's order", "l2,mmd", false, "mmd,l2", ""},
		{"unknown family", "mmd,nope", false, "", `the spec has no family "nope"`},
		{"every per-point family", "", true, "mt,pool", ""},
		{"per point, in the order named", "pool,mt", true, "pool,mt", ""},
		{"a set family per point", "mmd", true, "", `no marginal_transfer family "mmd"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols, err := FitColumns(emb, tc.families, tc.perPoint)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || names(cols) != tc.want {
				t.Fatalf("columns %q (%v), want %q", names(cols), err, tc.want)
			}
		})
	}
	if _, err := FitColumns(plain, "", true); err == nil || !strings.Contains(err.Error(), "no marginal_transfer family") {
		t.Errorf("per point on a spec without marginal_transfer: %v", err)
	}
	pc := PointColumns(emb)
	if got, _ := FitColumns(emb, "", true); !reflect.DeepEqual(got, pc) {
		t.Errorf("per-point columns %v, want PointColumns %v", got, pc)
	}
}
