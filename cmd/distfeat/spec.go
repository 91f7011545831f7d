package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/distfeat/distfeat/cmd/distfeat/internal/cli"
	"github.com/distfeat/distfeat/embedding"
	"github.com/distfeat/distfeat/schema"
	"github.com/distfeat/distfeat/spec"
)

func runSpec(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("spec", "", "", stderr)
	specPath := fs.String("spec", cli.EnvOr("SPEC", ""), "feature spec JSON `file` (DISTFEAT_SPEC); empty: the built-in default")
	fields := fs.Bool("fields", false, "print the spec field reference (Markdown) and exit")
	if err := cli.ParseArgs(fs, args); err != nil {
		return err
	}
	if *fields {
		_, err := io.WriteString(stdout, spec.FieldReference())
		return err
	}
	sp, err := spec.LoadSpec(*specPath)
	if err != nil {
		return err
	}
	emb, err := embedding.New(sp)
	if err != nil {
		return err
	}
	var pretty any
	if err := json.Unmarshal(sp.CanonicalJSON(), &pretty); err != nil {
		return err
	}
	b, err := json.MarshalIndent(pretty, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "spec_id: %s\n\nresolved spec:\n%s\n\noutput schema:\n%s\n", sp.ID(), b,
		schema.NewOutput(sp, emb.Columns()).Schema())
	fmt.Fprintf(stdout, "\nsketch memory per open window: %d bytes\n", emb.NewSketch().SizeBytes())
	if maps := emb.PointMaps(); len(maps) > 0 {
		var cols []embedding.Column
		for _, m := range maps {
			cols = append(cols, embedding.Column{Name: m.Name(), Family: m.Name(), Len: m.Len()})
		}
		fmt.Fprintf(stdout, "\nper-point output schema (embed --points, DISTFEAT_POINT_FEATURES_TOPIC; docs/marginal-transfer.md):\n%s\n",
			schema.NewPointOutput(sp, cols).Schema())
	}
	return nil
}
