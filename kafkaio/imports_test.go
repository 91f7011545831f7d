package kafkaio

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyTheEdgeImportsKafkaGo: outside its tests, kafka-go is imported by kafkaio and
// consumer only — and by the test brokers (internal/testbroker, internal/realkafka) and the
// development commands built on them (cmd/distfeat/internal/devcmd, -tags dev). cmd/distfeat imports none.
func TestOnlyTheEdgeImportsKafkaGo(t *testing.T) {
	allowed := []string{"kafkaio", "consumer", "internal/testbroker", "internal/realkafka", "cmd/distfeat/internal/devcmd"}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "python" || strings.HasPrefix(d.Name(), ".") && path != "..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel("..", filepath.Dir(path))
		dir = filepath.ToSlash(dir)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p != "github.com/segmentio/kafka-go" && !strings.HasPrefix(p, "github.com/segmentio/kafka-go/") {
				continue
			}
			seen[dir] = true
			ok := false
			for _, a := range allowed {
				ok = ok || dir == a || strings.HasPrefix(dir, a+"/")
			}
			if !ok {
				t.Errorf("%s imports %s: only the Kafka edge (%s) may", path, p, strings.Join(allowed, ", "))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"kafkaio", "consumer"} {
		if !seen[must] {
			t.Errorf("no kafka-go import found in %s: is the walk reading the module?", must)
		}
	}
}
