package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

const kfakeModule = "github.com/twmb/franz-go/pkg/kfake"

// TestProductionBuildHasNoKfake: the binary built without -tags dev (binPath, built by
// TestMain like deploy/Dockerfile) links neither the kfake module nor any of its symbols, and
// has no development command. The same checks find kfake in a -tags dev build, so they can
// fail.
func TestProductionBuildHasNoKfake(t *testing.T) {
	info, err := exec.Command("go", "version", "-m", binPath).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, info)
	}
	if !strings.Contains(string(info), "dep\tgithub.com/segmentio/kafka-go") {
		t.Fatalf("go version -m lists no dependencies; cannot judge:\n%s", info)
	}
	if strings.Contains(string(info), kfakeModule) {
		t.Errorf("the production binary depends on %s:\n%s", kfakeModule, info)
	}
	if n := kfakeSymbols(t, binPath); n > 0 {
		t.Errorf("the production binary has %d kfake symbols", n)
	}
	dev := devBinary(t)
	if info, _ := exec.Command("go", "version", "-m", dev).CombinedOutput(); !strings.Contains(string(info), kfakeModule) {
		t.Errorf("go version -m does not list %s in the dev build: the module check cannot see it", kfakeModule)
	}
	if n := kfakeSymbols(t, dev); n == 0 {
		t.Errorf("no kfake symbol in the dev build: the symbol check cannot see kfake")
	}
	out, err := exec.Command(binPath, "broker").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "development command") {
		t.Errorf("production `distfeat broker`: %v, %s; want a refusal naming the dev build", err, out)
	}
}

func kfakeSymbols(t *testing.T, bin string) int {
	t.Helper()
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm %s: %v", bin, err)
	}
	return strings.Count(string(out), "kfake.")
}

// TestDockerfileBuildsProduction: the image's go build does not select the dev commands.
func TestDockerfileBuildsProduction(t *testing.T) {
	b, err := os.ReadFile("../../deploy/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	build := regexp.MustCompile(`(?s)go build\b.*?\./cmd/distfeat`).Find(b)
	if build == nil {
		t.Fatal("deploy/Dockerfile: no `go build ... ./cmd/distfeat`")
	}
	if strings.Contains(string(build), "-tags") || strings.Contains(string(b), "GOFLAGS") {
		t.Errorf("deploy/Dockerfile builds with tags or GOFLAGS; the image must be the production build:\n%s", build)
	}
}

// TestDevCommandsKnown: every development command is recognised as one, so the production
// build can say why it is missing.
func TestDevCommandsKnown(t *testing.T) {
	for _, c := range devCommands() {
		if !isDevCommand(c.name) {
			t.Errorf("%s is in devCommands but not isDevCommand", c.name)
		}
	}
}
