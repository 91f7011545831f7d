// Package realkafka runs Apache Kafka itself — the server jars of a pinned release, fetched
// with Maven into a cache outside the repository — on loopback for distfeat's tests: one
// combined broker+controller with PLAINTEXT, SASL_PLAINTEXT, SSL and SASL_SSL listeners and
// ACLs, or a KRaft cluster of several nodes. Each Kafka process is started, killed and
// restarted by its own PID; readiness waits on the cluster's answers (metadata, a topic
// created, a group coordinator found), never on a fixed sleep.
//
// `go run ./internal/realkafka/kafkarun -- CMD…` starts a single node, runs CMD with the
// environment that points the tests at it (Env), and stops the node (Makefile: test-kafka).
package realkafka

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed" // the pinned pom
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// Version is the Apache Kafka release the harness runs (pom.xml pins the same artifact).
const Version = "4.1.2"

// EnvCache overrides the cache directory of the fetched jars (default: the user cache
// directory's distfeat/kafka-<Version>).
const EnvCache = "DISTFEAT_KAFKA_CACHE"

//go:embed pom.xml
var pom []byte

// ErrUnavailable wraps every reason Kafka cannot run here: no Java, no Maven, a failed
// fetch. Callers outside CI skip on it with the reason; under CI=true it is a failure.
var ErrUnavailable = errors.New("real Kafka unavailable")

// CacheDir is where Fetch keeps the jars.
func CacheDir() (string, error) {
	if d := os.Getenv(EnvCache); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("%w: no cache directory (set %s): %v", ErrUnavailable, EnvCache, err)
	}
	return filepath.Join(d, "distfeat", "kafka-"+Version), nil
}

// Fetch returns the directory holding the Kafka server's jars and their dependencies
// (a class path of dir/*). The first call runs Maven (the pinned pom's
// dependency:copy-dependencies, the artifacts cached in ~/.m2); later calls find the
// directory stamped with the pom's hash and run nothing. Concurrent callers (parallel test
// binaries) take turns on a lock file.
func Fetch(ctx context.Context) (string, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return "", fmt.Errorf("%w: java not found (Java 17 or later: apt-get install openjdk-17-jre-headless)", ErrUnavailable)
	}
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	sum := sha256.Sum256(pom)
	want := hex.EncodeToString(sum[:])
	lib, stamp := filepath.Join(dir, "lib"), filepath.Join(dir, "lib.stamp")
	if b, err := os.ReadFile(stamp); err == nil && strings.TrimSpace(string(b)) == want {
		return lib, nil
	}
	lock, err := os.OpenFile(filepath.Join(dir, "fetch.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("%w: lock %s: %v", ErrUnavailable, lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // released on close anyway
	if b, err := os.ReadFile(stamp); err == nil && strings.TrimSpace(string(b)) == want {
		return lib, nil // another process fetched it while this one waited
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("%w: Kafka %s is not in %s and Maven (mvn) is not installed to fetch it (apt-get install maven)", ErrUnavailable, Version, dir)
	}
	tmp, err := os.MkdirTemp(dir, "fetch-")
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "pom.xml"), pom, 0o644); err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, mvn, "-q", "-B", "-f", filepath.Join(tmp, "pom.xml"),
		"dependency:copy-dependencies", "-DincludeScope=runtime", "-DoutputDirectory="+filepath.Join(tmp, "lib"))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: fetching Kafka %s with Maven: %v\n%s", ErrUnavailable, Version, err, lastLines(out.String(), 20))
	}
	if err := os.RemoveAll(lib); err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if err := os.Rename(filepath.Join(tmp, "lib"), lib); err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if err := os.WriteFile(stamp, []byte(want+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return lib, nil
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
