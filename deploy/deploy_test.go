package deploy_test

// Checks the deployment files against each other and against the code (codefacts_test.go):
// every DISTFEAT_ variable a manifest sets exists in the worker configuration, every metric the
// alerts and the dashboard use exists in internal/metrics, ports, probe paths, image names,
// topics, grace periods and the autoscaling bound agree.
//
// Tests named *Code* need the project's Go source (cmd/distfeat, internal/metrics,
// internal/buildinfo) and fail with a message naming what is missing until it exists.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

const (
	composeFile    = "compose.yaml"
	dockerfile     = "Dockerfile"
	readme         = "README.md"
	k8sBase        = "k8s"
	overlaysDir    = "overlays"
	promConfig     = "prometheus/prometheus.yml"
	alertsFile     = "prometheus/alerts.yml"
	alertsTestFile = "prometheus/alerts_test.yml"
	dashboardFile  = "grafana/distfeat.json"
	grafanaProv    = "grafana/provisioning"

	// The probe paths the orchestrators use (docs/configuration.md: METRICS_ADDR serves them).
	livenessPath  = "/healthz"
	readinessPath = "/readyz"
	metricsPath   = "/metrics"

	// Margin the orchestrator's kill deadline must leave beyond DISTFEAT_SHUTDOWN_TIMEOUT.
	graceMargin = 5 * time.Second
)

// ---- loading -------------------------------------------------------------------------------------

// yamlDocs decodes every document of a YAML file.
func yamlDocs(t *testing.T, file string) []any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []any
	for {
		var d any
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
	return docs
}

func yamlDoc(t *testing.T, file string) map[string]any {
	t.Helper()
	docs := yamlDocs(t, file)
	if len(docs) != 1 {
		t.Fatalf("%s: want one YAML document, got %d", file, len(docs))
	}
	m, ok := docs[0].(map[string]any)
	if !ok {
		t.Fatalf("%s: top level is %T, want a mapping", file, docs[0])
	}
	return m
}

// get walks a path of map keys and list indexes ("spec", "template", 0, ...).
func get(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func mapping(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// allYAMLFiles lists the YAML files under dir.
func allYAMLFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// walkScalars calls fn for every mapping key and scalar value in v.
func walkScalars(v any, fn func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			fn(k)
			walkScalars(x, fn)
		}
	case []any:
		for _, x := range v {
			walkScalars(x, fn)
		}
	case nil:
	default:
		fn(str(v))
	}
}

var reEnvScalar = regexp.MustCompile(`^(DISTFEAT_[A-Z0-9][A-Z0-9_]*)(=.*)?$`)

// distfeatVars returns the DISTFEAT_ variables named in YAML: environment keys, `NAME=value`
// literals, `- name: NAME` entries and values such as KEDA's *FromEnv references.
func distfeatVars(docs ...any) map[string]bool {
	out := map[string]bool{}
	for _, d := range docs {
		walkScalars(d, func(s string) {
			if m := reEnvScalar.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
				out[m[1]] = true
			}
		})
	}
	return out
}

// ---- compose -------------------------------------------------------------------------------------

type compose struct {
	Services map[string]map[string]any
}

func loadCompose(t *testing.T) compose {
	t.Helper()
	doc := yamlDoc(t, composeFile)
	c := compose{Services: map[string]map[string]any{}}
	for name, svc := range mapping(doc["services"]) {
		c.Services[name] = mapping(svc)
	}
	if len(c.Services) == 0 {
		t.Fatalf("%s: no services", composeFile)
	}
	return c
}

// env returns a service's environment as a map (compose allows a mapping or KEY=VALUE list).
func (c compose) env(service string) map[string]string {
	out := map[string]string{}
	switch e := c.Services[service]["environment"].(type) {
	case map[string]any:
		for k, v := range e {
			out[k] = str(v)
		}
	case []any:
		for _, kv := range e {
			k, v, _ := strings.Cut(str(kv), "=")
			out[k] = v
		}
	}
	return out
}

func (c compose) command(service string) []string {
	var out []string
	switch cmd := c.Services[service]["command"].(type) {
	case string:
		out = strings.Fields(cmd)
	case []any:
		for _, a := range cmd {
			out = append(out, str(a))
		}
	}
	return out
}

// distfeatServices are the services that run the distfeat image (they have a build section).
func (c compose) distfeatServices() []string {
	var out []string
	for name, svc := range c.Services {
		if svc["build"] != nil {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// imageRepo strips the tag and digest from an image reference.
func imageRepo(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// composeDuration parses a compose duration ("45s", "1m30s").
func composeDuration(t *testing.T, where, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("%s: %q is not a duration: %v", where, s, err)
	}
	return d
}

func TestComposeStructure(t *testing.T) {
	c := loadCompose(t)
	for _, want := range []string{"kafka", "topics", "worker", "producer", "prometheus", "grafana"} {
		if c.Services[want] == nil {
			t.Errorf("%s: no service %q", composeFile, want)
		}
	}

	// Apache Kafka in KRaft mode from the official image, no ZooKeeper.
	kafka := c.Services["kafka"]
	if img := str(kafka["image"]); !strings.HasPrefix(img, "apache/kafka:") || strings.HasSuffix(img, ":latest") {
		t.Errorf("kafka image %q: want the official apache/kafka image with a pinned version", img)
	}
	kenv := c.env("kafka")
	if roles := kenv["KAFKA_PROCESS_ROLES"]; !strings.Contains(roles, "controller") || !strings.Contains(roles, "broker") {
		t.Errorf("kafka: KAFKA_PROCESS_ROLES=%q, want broker,controller (KRaft combined mode)", roles)
	}
	for k := range kenv {
		if strings.Contains(k, "ZOOKEEPER") {
			t.Errorf("kafka: %s set; KRaft mode has no ZooKeeper", k)
		}
	}
	if kafka["healthcheck"] == nil {
		t.Error("kafka: no healthcheck; dependants cannot wait for service_healthy")
	}

	// depends_on conditions must be satisfiable.
	for name, svc := range c.Services {
		for dep, cond := range mapping(svc["depends_on"]) {
			target := c.Services[dep]
			if target == nil {
				t.Errorf("%s depends on unknown service %q", name, dep)
				continue
			}
			switch condition := str(get(cond, "condition")); condition {
			case "service_healthy":
				if target["healthcheck"] == nil {
					t.Errorf("%s waits for %s to be healthy, but %s has no healthcheck", name, dep, dep)
				}
			case "service_completed_successfully":
				if r := str(target["restart"]); r != "no" && r != "" {
					t.Errorf("%s waits for %s to complete, but %s has restart: %s", name, dep, dep, r)
				}
			case "service_started", "":
			default:
				t.Errorf("%s: unknown depends_on condition %q", name, condition)
			}
		}
	}

	// The workers scale with --scale: no fixed container name, no host port (would collide).
	worker := c.Services["worker"]
	if worker["container_name"] != nil {
		t.Error("worker: container_name prevents docker compose --scale")
	}
	if worker["ports"] != nil {
		t.Error("worker: published host ports collide under --scale; Prometheus reaches workers on the compose network")
	}
	if n, _ := get(worker, "deploy", "replicas").(int); n < 2 {
		t.Errorf("worker: deploy.replicas = %v, want 2 (two workers by default)", get(worker, "deploy", "replicas"))
	}
	if cmd := c.command("worker"); len(cmd) == 0 || cmd[0] != "worker" {
		t.Errorf("worker: command %q, want the worker subcommand", cmd)
	}
	if cmd := c.command("producer"); len(cmd) == 0 || cmd[0] != "produce" {
		t.Errorf("producer: command %q, want the produce subcommand", cmd)
	}

	// Topics: the topics job creates the topics the workers read and write, with an explicit
	// partition count.
	script := strings.Join(c.command("topics"), " ")
	if e := get(c.Services["topics"], "entrypoint"); e != nil {
		script = fmt.Sprint(e) + " " + script
	}
	created := map[string]bool{}
	for _, m := range regexp.MustCompile(`--topic\s+"?([A-Za-z0-9._-]+)"?`).FindAllStringSubmatch(script, -1) {
		if strings.Contains(script, "--create") {
			created[m[1]] = true
		}
	}
	if !strings.Contains(script, "--partitions") {
		t.Error("topics: no --partitions; the partition count bounds the useful number of workers")
	}
	wenv := c.env("worker")
	for _, v := range []string{"DISTFEAT_INPUT_TOPIC", "DISTFEAT_OUTPUT_TOPIC", "DISTFEAT_DLQ_TOPIC"} {
		topic := wenv[v]
		if topic == "" {
			t.Errorf("worker: %s not set; set it explicitly so the topics job and the workers visibly agree", v)
			continue
		}
		if !created[topic] {
			t.Errorf("worker reads/writes topic %q (%s) but the topics job creates only %v", topic, v, keys(created))
		}
	}

	// Every distfeat container uses the same image, built from this repository's Dockerfile.
	for _, name := range c.distfeatServices() {
		svc := c.Services[name]
		if df := str(get(svc, "build", "dockerfile")); df != "deploy/Dockerfile" {
			t.Errorf("%s: build.dockerfile %q, want deploy/Dockerfile", name, df)
		}
		if ctx := str(get(svc, "build", "context")); ctx != ".." {
			t.Errorf("%s: build.context %q, want .. (the repository root)", name, ctx)
		}
		if str(svc["image"]) == "" {
			t.Errorf("%s: no image name", name)
		}
	}

	// Prometheus and Grafana wiring.
	mounts := composeMounts(c)
	if mounts["/etc/prometheus/prometheus.yml"] == "" && mounts["/etc/prometheus"] == "" {
		t.Errorf("prometheus: %s is not mounted", promConfig)
	}
	if src := mounts["/etc/prometheus"]; src != "" && path.Clean(src) != "prometheus" {
		t.Errorf("prometheus: /etc/prometheus comes from %q, want ./prometheus", src)
	}
}

// composeMounts maps container paths to host paths (relative to deploy/) for bind mounts of
// all services.
func composeMounts(c compose) map[string]string {
	out := map[string]string{}
	for _, svc := range c.Services {
		for _, v := range list(svc["volumes"]) {
			parts := strings.Split(str(v), ":")
			if len(parts) >= 2 && (strings.HasPrefix(parts[0], ".") || strings.HasPrefix(parts[0], "/")) {
				out[parts[1]] = path.Clean(parts[0])
			}
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ---- kustomize -----------------------------------------------------------------------------------

type kustomization struct {
	Dir       string
	Doc       map[string]any
	Resources []map[string]any // documents of the listed resource files
	// Generated maps configMapGenerator names to their literal keys and values.
	Generated map[string]map[string]string
}

func loadKustomization(t *testing.T, dir string) kustomization {
	t.Helper()
	k := kustomization{Dir: dir, Doc: yamlDoc(t, filepath.Join(dir, "kustomization.yaml")), Generated: map[string]map[string]string{}}
	for _, r := range list(k.Doc["resources"]) {
		p := filepath.Join(dir, str(r))
		if fi, err := os.Stat(p); err != nil {
			t.Errorf("%s: resource %s: %v", dir, r, err)
			continue
		} else if fi.IsDir() {
			continue // another kustomization (overlay → base)
		}
		for _, d := range yamlDocs(t, p) {
			k.Resources = append(k.Resources, mapping(d))
		}
	}
	for _, g := range list(k.Doc["configMapGenerator"]) {
		name := str(get(g, "name"))
		data := map[string]string{}
		for _, l := range list(get(g, "literals")) {
			key, val, ok := strings.Cut(str(l), "=")
			if !ok {
				t.Errorf("%s: configMapGenerator %s: literal %q is not KEY=VALUE", dir, name, l)
			}
			data[key] = val
		}
		for _, f := range list(get(g, "files")) {
			key, file, ok := strings.Cut(str(f), "=")
			if !ok {
				key, file = path.Base(str(f)), str(f)
			}
			b, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Errorf("%s: configMapGenerator %s: %v", dir, name, err)
			}
			data[key] = string(b)
		}
		k.Generated[name] = data
	}
	return k
}

func (k kustomization) find(kind string) []map[string]any {
	var out []map[string]any
	for _, r := range k.Resources {
		if str(r["kind"]) == kind {
			out = append(out, r)
		}
	}
	return out
}

func (k kustomization) one(t *testing.T, kind string) map[string]any {
	t.Helper()
	rs := k.find(kind)
	if len(rs) != 1 {
		t.Fatalf("%s: want exactly one %s, found %d", k.Dir, kind, len(rs))
	}
	return rs[0]
}

// workerContainer returns the Deployment's worker container.
func workerContainer(t *testing.T, dep map[string]any) map[string]any {
	t.Helper()
	cs := list(get(dep, "spec", "template", "spec", "containers"))
	if len(cs) != 1 {
		t.Fatalf("Deployment: want one container, got %d", len(cs))
	}
	return mapping(cs[0])
}

// deploymentEnv is the worker's effective environment in the base: envFrom ConfigMaps from
// the generator plus env entries with literal values.
func deploymentEnv(t *testing.T, k kustomization) map[string]string {
	t.Helper()
	c := workerContainer(t, k.one(t, "Deployment"))
	out := map[string]string{}
	for _, ef := range list(c["envFrom"]) {
		name := str(get(ef, "configMapRef", "name"))
		data, ok := k.Generated[name]
		if !ok {
			t.Errorf("Deployment envFrom ConfigMap %q is not generated by the kustomization (generators: %v)", name, keys(k.Generated))
		}
		for key, v := range data {
			out[key] = v
		}
	}
	for _, e := range list(c["env"]) {
		if v, ok := mapping(e)["value"]; ok {
			out[str(get(e, "name"))] = str(v)
		} else {
			out[str(get(e, "name"))] = "" // valueFrom
		}
	}
	return out
}

func labelsMatch(selector, labels map[string]any) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if str(labels[k]) != str(v) {
			return false
		}
	}
	return true
}

// containerPort resolves a probe or Service port (number or name) to the container port.
func containerPort(c map[string]any, port any) (int, bool) {
	if n, ok := port.(int); ok {
		return n, true
	}
	for _, p := range list(c["ports"]) {
		if str(get(p, "name")) == str(port) {
			n, ok := get(p, "containerPort").(int)
			return n, ok
		}
	}
	return 0, false
}

var reQuantity = regexp.MustCompile(`^([0-9.]+)([A-Za-z]*)$`)

// bytesOf parses a Kubernetes quantity ("1Gi", "512M") or a GOMEMLIMIT value ("920MiB").
func bytesOf(s string) (float64, error) {
	m := reQuantity.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("bad quantity %q", s)
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, err
	}
	unit := strings.TrimSuffix(m[2], "B")
	mult := map[string]float64{"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
		"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("bad unit in %q", s)
	}
	return n * mult, nil
}

func TestKustomizeBase(t *testing.T) {
	k := loadKustomization(t, k8sBase)
	for _, kind := range []string{"Deployment", "Service", "PodDisruptionBudget", "ScaledObject", "ServiceAccount"} {
		if len(k.find(kind)) != 1 {
			t.Errorf("%s: want one %s in the base resources, found %d", k8sBase, kind, len(k.find(kind)))
		}
	}
	dep := k.one(t, "Deployment")
	tmplLabels := mapping(get(dep, "spec", "template", "metadata", "labels"))
	if !labelsMatch(mapping(get(dep, "spec", "selector", "matchLabels")), tmplLabels) {
		t.Error("Deployment selector does not match its pod template labels")
	}
	if !labelsMatch(mapping(get(k.one(t, "Service"), "spec", "selector")), tmplLabels) {
		t.Error("Service selector does not select the worker pods")
	}
	if !labelsMatch(mapping(get(k.one(t, "PodDisruptionBudget"), "spec", "selector", "matchLabels")), tmplLabels) {
		t.Error("PodDisruptionBudget selector does not select the worker pods")
	}
	if get(dep, "spec", "replicas") != nil {
		t.Error("Deployment sets spec.replicas; the ScaledObject owns the replica count (apply would reset it)")
	}
	if sa := str(get(dep, "spec", "template", "spec", "serviceAccountName")); sa != str(get(k.one(t, "ServiceAccount"), "metadata", "name")) {
		t.Errorf("Deployment uses service account %q, which the base does not define", sa)
	}

	c := workerContainer(t, dep)
	if args := list(c["args"]); len(args) == 0 || str(args[0]) != "worker" {
		t.Errorf("worker container args %v, want [worker]", args)
	}

	// Probes.
	for probe, want := range map[string]string{"livenessProbe": livenessPath, "readinessProbe": readinessPath, "startupProbe": livenessPath} {
		if p := str(get(c, probe, "httpGet", "path")); p != want {
			t.Errorf("%s path %q, want %q", probe, p, want)
		}
		if _, ok := containerPort(c, get(c, probe, "httpGet", "port")); !ok {
			t.Errorf("%s port %v is not a container port", probe, get(c, probe, "httpGet", "port"))
		}
	}

	// Resources: requests and limits, and GOMEMLIMIT below the memory limit.
	for _, r := range []string{"requests", "limits"} {
		if get(c, "resources", r, "memory") == nil {
			t.Errorf("worker container has no resources.%s.memory", r)
		}
	}
	if get(c, "resources", "requests", "cpu") == nil {
		t.Error("worker container has no resources.requests.cpu")
	}
	env := deploymentEnv(t, k)
	if gml, ok := env["GOMEMLIMIT"]; ok {
		lim, err1 := bytesOf(str(get(c, "resources", "limits", "memory")))
		soft, err2 := bytesOf(gml)
		switch {
		case err1 != nil || err2 != nil:
			t.Errorf("GOMEMLIMIT/limits.memory: %v %v", err1, err2)
		case soft >= lim || soft < 0.75*lim:
			t.Errorf("GOMEMLIMIT %s should be ~90%% of limits.memory %v", gml, get(c, "resources", "limits", "memory"))
		}
	}

	// Non-root, read-only.
	psc := mapping(get(dep, "spec", "template", "spec", "securityContext"))
	if psc["runAsNonRoot"] != true {
		t.Error("pod securityContext.runAsNonRoot is not true")
	}
	if uid, _ := psc["runAsUser"].(int); uid == 0 {
		t.Error("pod securityContext.runAsUser must be a non-zero UID (the image's 65532)")
	}
	if get(c, "securityContext", "readOnlyRootFilesystem") != true || get(c, "securityContext", "allowPrivilegeEscalation") != false {
		t.Error("worker container should have readOnlyRootFilesystem: true and allowPrivilegeEscalation: false")
	}

	// The spec: DISTFEAT_SPEC points at the generated ConfigMap's file through a mounted volume.
	specPath := env["DISTFEAT_SPEC"]
	if specPath == "" {
		t.Error("DISTFEAT_SPEC is not set in the base: the spec must come from the ConfigMap")
	} else {
		found := false
		for _, m := range list(c["volumeMounts"]) {
			dir := str(get(m, "mountPath"))
			if path.Dir(specPath) != path.Clean(dir) {
				continue
			}
			for _, v := range list(get(dep, "spec", "template", "spec", "volumes")) {
				if str(get(v, "name")) != str(get(m, "name")) {
					continue
				}
				data, ok := k.Generated[str(get(v, "configMap", "name"))]
				if _, has := data[path.Base(specPath)]; ok && has {
					found = true
					var spec map[string]any
					if err := json.Unmarshal([]byte(data[path.Base(specPath)]), &spec); err != nil {
						t.Errorf("spec ConfigMap %s: %v", path.Base(specPath), err)
					}
				}
			}
		}
		if !found {
			t.Errorf("DISTFEAT_SPEC=%s is not a key of a generated ConfigMap mounted at %s", specPath, path.Dir(specPath))
		}
	}

	// Metrics Service and annotations agree with the container port.
	mport, ok := containerPort(c, "metrics")
	if !ok {
		t.Fatal("worker container has no port named metrics")
	}
	for _, p := range list(get(k.one(t, "Service"), "spec", "ports")) {
		if n, ok := containerPort(c, get(p, "targetPort")); !ok || n != mport {
			t.Errorf("Service targetPort %v does not resolve to the metrics port %d", get(p, "targetPort"), mport)
		}
	}
	ann := mapping(get(dep, "spec", "template", "metadata", "annotations"))
	if a := str(ann["prometheus.io/port"]); a != "" && a != strconv.Itoa(mport) {
		t.Errorf("prometheus.io/port annotation %s != container port %d", a, mport)
	}
	if a := str(ann["prometheus.io/path"]); a != "" && a != metricsPath {
		t.Errorf("prometheus.io/path annotation %s != %s", a, metricsPath)
	}

	// Autoscaling: KEDA Kafka scaler on the workers' own group and topic, never above the
	// partition count.
	so := k.one(t, "ScaledObject")
	if str(get(so, "spec", "scaleTargetRef", "name")) != str(get(dep, "metadata", "name")) {
		t.Errorf("ScaledObject targets %v, not the Deployment %v", get(so, "spec", "scaleTargetRef", "name"), get(dep, "metadata", "name"))
	}
	parts, err := strconv.Atoi(str(get(so, "metadata", "annotations", "distfeat.io/input-partitions")))
	if err != nil {
		t.Errorf("ScaledObject: annotation distfeat.io/input-partitions (the input topic's partition count) missing or not a number: %v", err)
	}
	minR, _ := get(so, "spec", "minReplicaCount").(int)
	maxR, _ := get(so, "spec", "maxReplicaCount").(int)
	if minR < 1 {
		t.Errorf("ScaledObject minReplicaCount %d: scaling to zero leaves idle windows unclosed", minR)
	}
	if maxR < minR || (parts > 0 && maxR > parts) {
		t.Errorf("ScaledObject maxReplicaCount %d: must be within [minReplicaCount %d, partitions %d]", maxR, minR, parts)
	}
	triggers := list(get(so, "spec", "triggers"))
	if len(triggers) != 1 || str(get(triggers[0], "type")) != "kafka" {
		t.Fatalf("ScaledObject: want one kafka trigger, got %v", triggers)
	}
	md := mapping(get(triggers[0], "metadata"))
	if strings.EqualFold(str(md["allowIdleConsumers"]), "true") {
		t.Error("ScaledObject: allowIdleConsumers=true lets replicas exceed the partition count")
	}
	if _, err := strconv.Atoi(str(md["lagThreshold"])); err != nil {
		t.Errorf("ScaledObject: lagThreshold %q is not an integer", md["lagThreshold"])
	}
	for param, envName := range map[string]string{"bootstrapServers": "DISTFEAT_BROKERS", "consumerGroup": "DISTFEAT_GROUP", "topic": "DISTFEAT_INPUT_TOPIC"} {
		if md[param] != nil {
			t.Errorf("ScaledObject: %s is hard-coded; use %sFromEnv: %s so it cannot drift from the workers", param, param, envName)
		}
		if got := str(md[param+"FromEnv"]); got != envName {
			t.Errorf("ScaledObject: %sFromEnv = %q, want %s", param, got, envName)
		} else if env[envName] == "" {
			t.Errorf("ScaledObject reads %s from the worker environment, but the base does not set it (KEDA cannot see code defaults)", envName)
		}
	}

	// Graceful termination.
	grace, ok := get(dep, "spec", "template", "spec", "terminationGracePeriodSeconds").(int)
	if !ok {
		t.Fatal("Deployment: terminationGracePeriodSeconds not set")
	}
	if st := env["DISTFEAT_SHUTDOWN_TIMEOUT"]; st != "" {
		d := composeDuration(t, "DISTFEAT_SHUTDOWN_TIMEOUT", st)
		if time.Duration(grace)*time.Second < d+graceMargin {
			t.Errorf("terminationGracePeriodSeconds %d must exceed DISTFEAT_SHUTDOWN_TIMEOUT %s by at least %s", grace, d, graceMargin)
		}
	}
}

// TestKustomizeOverlays checks the example overlays' references (the full build is
// `kubectl kustomize deploy/overlays/<name>`, which needs kubectl).
func TestKustomizeOverlays(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(overlaysDir, "*", "kustomization.yaml"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no overlays under %s: %v", overlaysDir, err)
	}
	base := loadKustomization(t, k8sBase)
	for _, kf := range dirs {
		dir := filepath.Dir(kf)
		k := loadKustomization(t, dir)
		if !slices.ContainsFunc(list(k.Doc["resources"]), func(r any) bool {
			p := filepath.Clean(filepath.Join(dir, str(r)))
			return p == filepath.Clean(k8sBase)
		}) {
			t.Errorf("%s does not build on the base %s", dir, k8sBase)
		}
		for _, p := range list(k.Doc["patches"]) {
			if _, err := os.Stat(filepath.Join(dir, str(get(p, "path")))); err != nil {
				t.Errorf("%s: patch: %v", dir, err)
			}
		}
		for _, g := range list(k.Doc["configMapGenerator"]) {
			name := str(get(g, "name"))
			if str(get(g, "behavior")) == "merge" && base.Generated[name] == nil {
				t.Errorf("%s merges into ConfigMap %s, which the base does not generate", dir, name)
			}
		}
		// Every Secret key the overlay reads is one the README tells users to create.
		doc, err := os.ReadFile(readme)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range allYAMLFiles(t, dir) {
			for _, d := range yamlDocs(t, f) {
				walkSecretRefs(d, func(secret, key string) {
					if !bytes.Contains(doc, []byte(key)) {
						t.Errorf("%s reads key %q of Secret %s, which %s does not mention", f, key, secret, readme)
					}
				})
			}
		}
	}
}

// walkSecretRefs finds secretKeyRef and KEDA secretTargetRef references.
func walkSecretRefs(v any, fn func(secret, key string)) {
	switch v := v.(type) {
	case map[string]any:
		if ref := mapping(v["secretKeyRef"]); ref != nil {
			fn(str(ref["name"]), str(ref["key"]))
		}
		for _, r := range list(v["secretTargetRef"]) {
			fn(str(get(r, "name")), str(get(r, "key")))
		}
		for _, x := range v {
			walkSecretRefs(x, fn)
		}
	case []any:
		for _, x := range v {
			walkSecretRefs(x, fn)
		}
	}
}

// ---- Prometheus, Grafana -------------------------------------------------------------------------

type alertRule struct {
	Alert, Expr string
	Labels      map[string]any
	Annotations map[string]any
}

func loadAlerts(t *testing.T) []alertRule {
	t.Helper()
	var out []alertRule
	for _, g := range list(yamlDoc(t, alertsFile)["groups"]) {
		for _, r := range list(get(g, "rules")) {
			out = append(out, alertRule{
				Alert: str(get(r, "alert")), Expr: str(get(r, "expr")),
				Labels: mapping(get(r, "labels")), Annotations: mapping(get(r, "annotations")),
			})
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no rules", alertsFile)
	}
	return out
}

func TestAlertRules(t *testing.T) {
	rules := loadAlerts(t)
	names := map[string]bool{}
	for _, r := range rules {
		if r.Alert == "" {
			t.Errorf("recording rule or unnamed rule in %s: %q", alertsFile, r.Expr)
			continue
		}
		if names[r.Alert] {
			t.Errorf("duplicate alert %s", r.Alert)
		}
		names[r.Alert] = true
		if s := str(r.Labels["severity"]); s != "warning" && s != "critical" {
			t.Errorf("%s: severity %q, want warning or critical", r.Alert, s)
		}
		for _, a := range []string{"summary", "description"} {
			if str(r.Annotations[a]) == "" {
				t.Errorf("%s: no %s annotation", r.Alert, a)
			}
		}
	}
	// The issues' required alerts, by the metric each must watch: issue 5's, and issue 32's
	// for every way a worker can stop making progress (output stalled or failing, not ready,
	// group lag, a full buffer, idle-close markers that cannot be written) and for clipping.
	for _, metric := range []string{"distfeat_consumer_lag", "distfeat_records_invalid_total",
		"distfeat_windows_emitted_total", "distfeat_rebalances_total", "distfeat_produce_errors_total",
		`distfeat_output_stalled{reason!="markers"}`, `distfeat_output_stalled{reason="markers"}`,
		"distfeat_output_errors_total", "distfeat_ready", "distfeat_group_lag", "distfeat_buffered_bytes",
		"distfeat_buffer_limit_bytes", "distfeat_points_clipped_total"} {
		if !slices.ContainsFunc(rules, func(r alertRule) bool { return strings.Contains(r.Expr, metric) }) {
			t.Errorf("no alert watches %s", metric)
		}
	}

	// Every alert has a promtool unit test that fires it and one that keeps it quiet.
	tests := yamlDoc(t, alertsTestFile)
	if !slices.ContainsFunc(list(tests["rule_files"]), func(f any) bool { return path.Clean(str(f)) == path.Base(alertsFile) }) {
		t.Errorf("%s does not load %s", alertsTestFile, path.Base(alertsFile))
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range list(tests["tests"]) {
		for _, a := range list(get(tc, "alert_rule_test")) {
			name := str(get(a, "alertname"))
			if !names[name] {
				t.Errorf("%s tests unknown alert %q", alertsTestFile, name)
			}
			if len(list(get(a, "exp_alerts"))) > 0 {
				fires[name] = true
			} else {
				quiet[name] = true
			}
		}
	}
	for n := range names {
		if !fires[n] {
			t.Errorf("%s: no unit test where %s fires", alertsTestFile, n)
		}
		if !quiet[n] {
			t.Errorf("%s: no unit test where %s stays quiet", alertsTestFile, n)
		}
	}
}

type dashboard struct {
	Raw    map[string]any
	Panels []map[string]any // flattened, rows included
	Exprs  []string
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d.Raw); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var flatten func(ps []any)
	flatten = func(ps []any) {
		for _, p := range ps {
			pm := mapping(p)
			d.Panels = append(d.Panels, pm)
			flatten(list(pm["panels"]))
		}
	}
	flatten(list(d.Raw["panels"]))
	for _, p := range d.Panels {
		for _, tg := range list(p["targets"]) {
			d.Exprs = append(d.Exprs, str(get(tg, "expr")))
		}
	}
	for _, v := range list(get(d.Raw, "templating", "list")) {
		if q := get(v, "query", "query"); q != nil {
			d.Exprs = append(d.Exprs, str(q))
		}
		if q := get(v, "definition"); q != nil {
			d.Exprs = append(d.Exprs, str(q))
		}
	}
	return d
}

func TestDashboard(t *testing.T) {
	d := loadDashboard(t)
	if str(d.Raw["uid"]) == "" || str(d.Raw["title"]) == "" {
		t.Error("dashboard needs a stable uid and a title")
	}
	ids := map[float64]bool{}
	type cell struct{ x, y int }
	used := map[cell]string{}
	for _, p := range d.Panels {
		id, _ := p["id"].(float64)
		if ids[id] {
			t.Errorf("duplicate panel id %v", id)
		}
		ids[id] = true
		title := str(p["title"])
		gp := mapping(p["gridPos"])
		x, y, w, h := int(gp["x"].(float64)), int(gp["y"].(float64)), int(gp["w"].(float64)), int(gp["h"].(float64))
		if x < 0 || w <= 0 || x+w > 24 || h <= 0 {
			t.Errorf("panel %q: gridPos %v outside the 24-column grid", title, gp)
		}
	cells:
		for i := x; i < x+w; i++ {
			for j := y; j < y+h; j++ {
				if other, ok := used[cell{i, j}]; ok {
					t.Errorf("panels %q and %q overlap", other, title)
					break cells
				}
				used[cell{i, j}] = title
			}
		}
		if str(p["type"]) == "row" {
			continue
		}
		if len(list(p["targets"])) == 0 {
			t.Errorf("panel %q has no queries", title)
		}
		for _, tg := range list(p["targets"]) {
			if str(get(tg, "expr")) == "" {
				t.Errorf("panel %q: a target without expr", title)
			}
			if ds := str(get(tg, "datasource", "uid")); ds != "${datasource}" {
				t.Errorf("panel %q: target data source %q, want ${datasource} (importable anywhere)", title, ds)
			}
		}
	}
	// What the dashboard must show (issue #5): throughput, lag per partition, dead letters by
	// reason, emit latency, open windows, sketch memory, finalisation time by family, rebalances.
	joined := strings.Join(d.Exprs, "\n")
	for _, want := range []string{"distfeat_points_total", "distfeat_windows_emitted_total",
		"max by (partition) (distfeat_consumer_lag", "sum by (reason) (rate(distfeat_records_invalid_total",
		"distfeat_emit_latency_seconds_bucket", "distfeat_windows_open", "distfeat_sketch_bytes",
		"by (le, family) (rate(distfeat_finalize_seconds_bucket", "distfeat_rebalances_total",
		// Issue 32: what shows a worker not making progress, and the clipped share.
		"distfeat_ready", "max by (partition, reason) (distfeat_output_stalled", "sum by (topic, error) (rate(distfeat_output_errors_total",
		"max by (partition) (distfeat_group_lag", "sum by (instance, stage) (distfeat_buffered_bytes", "distfeat_buffer_limit_bytes",
		"sum by (result) (rate(distfeat_close_markers_total", "sum(rate(distfeat_points_clipped_total"} {
		if !strings.Contains(joined, want) {
			t.Errorf("dashboard has no query with %q", want)
		}
	}
}

func TestGrafanaProvisioning(t *testing.T) {
	c := loadCompose(t)
	mounts := composeMounts(c)
	if mounts["/etc/grafana/provisioning"] != path.Clean(grafanaProv) {
		t.Errorf("grafana: /etc/grafana/provisioning should be mounted from ./%s, got %q", grafanaProv, mounts["/etc/grafana/provisioning"])
	}
	// The data source points at the compose Prometheus.
	dss := list(yamlDoc(t, filepath.Join(grafanaProv, "datasources", "prometheus.yaml"))["datasources"])
	if len(dss) == 0 {
		t.Fatal("no provisioned data source")
	}
	u, err := url.Parse(str(get(dss[0], "url")))
	if err != nil {
		t.Fatal(err)
	}
	if str(get(dss[0], "type")) != "prometheus" || c.Services[u.Hostname()] == nil {
		t.Errorf("data source %v: want type prometheus at a compose service", dss[0])
	}
	if !slices.ContainsFunc(list(c.Services[u.Hostname()]["ports"]), func(p any) bool { return strings.HasSuffix(str(p), ":"+u.Port()) }) {
		t.Errorf("data source port %s is not a port of service %s", u.Port(), u.Hostname())
	}
	// The dashboard provider reads the directory the dashboard JSON is mounted into.
	provs := list(yamlDoc(t, filepath.Join(grafanaProv, "dashboards", "distfeat.yaml"))["providers"])
	if len(provs) == 0 {
		t.Fatal("no dashboard provider")
	}
	dir := str(get(provs[0], "options", "path"))
	found := false
	for target, src := range mounts {
		if src == path.Clean(dashboardFile) && path.Dir(target) == path.Clean(dir) {
			found = true
		}
	}
	if !found {
		t.Errorf("dashboard provider reads %s, but %s is not mounted there", dir, dashboardFile)
	}
	// Anything else under the provisioning tree must at least parse.
	for _, f := range allYAMLFiles(t, grafanaProv) {
		yamlDocs(t, f)
	}
}

// ---- Dockerfile ----------------------------------------------------------------------------------

type dockerStage struct {
	From  string
	Lines []string // instructions, continuation lines joined
}

func loadDockerfile(t *testing.T) (stages []dockerStage, comments string, args map[string]string) {
	t.Helper()
	b, err := os.ReadFile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	args = map[string]string{}
	var cur *dockerStage
	var pending string
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") {
			comments += trimmed + "\n"
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			pending += strings.TrimSuffix(trimmed, "\\") + " "
			continue
		}
		instr := strings.TrimSpace(pending + trimmed)
		pending = ""
		if instr == "" {
			continue
		}
		word, rest, _ := strings.Cut(instr, " ")
		switch strings.ToUpper(word) {
		case "FROM":
			stages = append(stages, dockerStage{From: rest})
			cur = &stages[len(stages)-1]
			continue
		case "ARG":
			if k, v, ok := strings.Cut(rest, "="); ok && cur == nil {
				args[k] = v
			}
		}
		if cur != nil {
			cur.Lines = append(cur.Lines, instr)
		}
	}
	return stages, comments, args
}

func TestDockerfile(t *testing.T) {
	stages, _, args := loadDockerfile(t)
	if len(stages) < 2 {
		t.Fatalf("Dockerfile: want a multi-stage build, got %d stage(s)", len(stages))
	}
	build, final := stages[0], stages[len(stages)-1]
	if !strings.Contains(build.From, "golang:") {
		t.Errorf("build stage FROM %q, want the golang image", build.From)
	}
	buildText := strings.Join(build.Lines, "\n")
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "internal/buildinfo.Version=", "./cmd/distfeat"} {
		if !strings.Contains(buildText, want) {
			t.Errorf("build stage does not contain %q", want)
		}
	}
	base := strings.Fields(final.From)[0]
	if !strings.HasPrefix(base, "gcr.io/distroless/static") && base != "scratch" {
		t.Errorf("runtime base %q: want distroless static or scratch", base)
	}
	finalText := strings.Join(final.Lines, "\n")
	user := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindStringSubmatch(finalText)
	if user == nil {
		t.Error("runtime stage has no USER")
	} else if uid, _, _ := strings.Cut(user[1], ":"); uid == "0" || uid == "root" {
		t.Errorf("runtime stage runs as %s", user[1])
	} else if _, err := strconv.Atoi(uid); err != nil {
		t.Errorf("USER %s: use a numeric UID so Kubernetes' runAsNonRoot can verify it", user[1])
	}
	if !regexp.MustCompile(`(?m)^ENTRYPOINT\s+\[\s*"[^"]*distfeat"`).MatchString(finalText) {
		t.Error("runtime stage ENTRYPOINT is not the distfeat binary")
	}
	if args["GO_VERSION"] == "" {
		t.Error("Dockerfile: no global ARG GO_VERSION")
	}
}

// TestCodeDockerfile: the Go version and the version stamp agree with the code.
func TestCodeDockerfile(t *testing.T) {
	f := loadFacts(t)
	_, _, args := loadDockerfile(t)
	goVer := args["GO_VERSION"]
	if parts := strings.SplitN(f.GoDirective, ".", 3); len(parts) < 2 || goVer != parts[0]+"."+parts[1] {
		t.Errorf("Dockerfile GO_VERSION %q does not match go.mod's go %s", goVer, f.GoDirective)
	}
	if !f.BuildInfoVars["Version"] {
		t.Error("Dockerfile stamps -X github.com/distfeat/distfeat/internal/buildinfo.Version, but internal/buildinfo has no package-level var Version")
	}
}

// ---- cross-checks against the code ---------------------------------------------------------------

// manifestEnvVars returns every DISTFEAT_ variable named in the deployment files and docs, with
// where it was found.
func manifestEnvVars(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	addAll := func(where string, vars map[string]bool) {
		for v := range vars {
			out[v] = append(out[v], where)
		}
	}
	addAll(composeFile, distfeatVars(yamlDocs(t, composeFile)...))
	for _, dir := range []string{k8sBase, overlaysDir} {
		for _, f := range allYAMLFiles(t, dir) {
			addAll(f, distfeatVars(yamlDocs(t, f)...))
		}
	}
	for _, f := range []string{readme, dockerfile} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		vars := map[string]bool{}
		// DISTFEAT_TLS_* style wildcards name a family, not a variable.
		for _, m := range regexp.MustCompile(`DISTFEAT_[A-Z0-9][A-Z0-9_]*\*?`).FindAllString(string(b), -1) {
			if !strings.HasSuffix(m, "*") {
				vars[strings.TrimRight(m, "_")] = true
			}
		}
		addAll(f, vars)
	}
	return out
}

func TestCodeEnvVarsExist(t *testing.T) {
	f := loadFacts(t)
	vars := manifestEnvVars(t)
	if len(vars) == 0 {
		t.Fatal("found no DISTFEAT_ variables in the manifests")
	}
	for _, v := range keys(vars) {
		name := strings.TrimPrefix(v, envPrefix)
		if _, ok := f.Env[name]; !ok {
			t.Errorf("%s (used in %s) is not a field of the worker configuration; known: %s",
				v, strings.Join(vars[v], ", "), strings.Join(prefixed(keys(f.Env)), ", "))
		}
	}
}

func prefixed(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = envPrefix + n
	}
	return out
}

func TestCodeMetricsExist(t *testing.T) {
	f := loadFacts(t)
	check := func(where, expr string) {
		for _, p := range checkPromQL(expr, f.Metrics) {
			t.Errorf("%s: %s\n    in: %s", where, p, strings.Join(strings.Fields(expr), " "))
		}
	}
	for _, r := range loadAlerts(t) {
		check(alertsFile+" "+r.Alert, r.Expr)
	}
	for _, tc := range list(yamlDoc(t, alertsTestFile)["tests"]) {
		for _, s := range list(get(tc, "input_series")) {
			series := str(get(s, "series"))
			if strings.HasPrefix(series, "distfeat_") {
				check(alertsTestFile, series)
			}
		}
	}
	for _, e := range loadDashboard(t).Exprs {
		check(dashboardFile, e)
	}
	// Go runtime and process metrics on the dashboard need their collectors registered.
	joined := strings.Join(loadDashboard(t).Exprs, "\n")
	collectors := map[string][]string{
		"process_": {"NewProcessCollector", "DefaultRegisterer", "DefaultGatherer"},
		"go_":      {"NewGoCollector", "DefaultRegisterer", "DefaultGatherer"},
	}
	for prefix, markers := range collectors {
		if !regexp.MustCompile(`\b` + prefix + `[a-z_]+`).MatchString(joined) {
			continue
		}
		if !slices.ContainsFunc(markers, func(m string) bool { return codeMentions(t, m) }) {
			t.Errorf("the dashboard uses %s* metrics but no code registers a collector for them (%v)", prefix, markers)
		}
	}
}

// codeMentions reports whether any non-test Go file outside deploy/ contains s.
func codeMentions(t *testing.T, s string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(repoRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil || found {
			return err
		}
		if d.IsDir() && (d.Name() == "deploy" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			found = bytes.Contains(b, []byte(s))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// defaultMetricsPort is the port of DISTFEAT_METRICS_ADDR's default in the code.
func defaultMetricsPort(t *testing.T, f *codeFacts) int {
	t.Helper()
	v, ok := f.Env["METRICS_ADDR"]
	if !ok {
		t.Fatal("the worker configuration has no METRICS_ADDR variable")
	}
	if !v.HasDefault {
		t.Fatalf("METRICS_ADDR (flag --%s) has no default; the manifests rely on its default port", v.Flag)
	}
	return portOf(t, "METRICS_ADDR default", v.Default)
}

func portOf(t *testing.T, where, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("%s: %q: %v", where, addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("%s: %q: %v", where, addr, err)
	}
	return n
}

func TestCodePortsAndPaths(t *testing.T) {
	f := loadFacts(t)
	port := defaultMetricsPort(t, f)

	// The code serves the paths the manifests probe and scrape.
	for _, p := range []string{metricsPath, livenessPath, readinessPath} {
		if !f.AllStrings[p] {
			t.Errorf("no Go source outside deploy/ contains the string literal %q; the probes and scrape configs use it", p)
		}
	}

	// compose: the worker's address, its exposed port, and Prometheus' scrape port.
	c := loadCompose(t)
	wport := port
	if addr := c.env("worker")["DISTFEAT_METRICS_ADDR"]; addr != "" {
		wport = portOf(t, "compose worker DISTFEAT_METRICS_ADDR", addr)
		if wport != port {
			t.Errorf("compose worker listens on %d, the code default is %d", wport, port)
		}
	}
	if !slices.ContainsFunc(list(c.Services["worker"]["expose"]), func(p any) bool { return str(p) == strconv.Itoa(wport) }) {
		t.Errorf("compose worker does not expose the metrics port %d", wport)
	}
	prom := yamlDoc(t, promConfig)
	scraped := false
	for _, sc := range list(prom["scrape_configs"]) {
		if str(get(sc, "job_name")) != "distfeat" {
			continue
		}
		scraped = true
		if mp := str(get(sc, "metrics_path")); mp != "" && mp != metricsPath {
			t.Errorf("%s: metrics_path %s, want %s", promConfig, mp, metricsPath)
		}
		for _, sd := range list(get(sc, "dns_sd_configs")) {
			if p, _ := get(sd, "port").(int); p != wport {
				t.Errorf("%s: scrapes port %d, the workers listen on %d", promConfig, p, wport)
			}
			for _, n := range list(get(sd, "names")) {
				if c.Services[str(n)] == nil {
					t.Errorf("%s: scrapes %s, which is not a compose service", promConfig, n)
				}
			}
		}
		for _, st := range list(get(sc, "static_configs")) {
			for _, tg := range list(get(st, "targets")) {
				if portOf(t, promConfig, str(tg)) != wport {
					t.Errorf("%s: target %s is not on port %d", promConfig, tg, wport)
				}
			}
		}
	}
	if !scraped {
		t.Errorf("%s: no distfeat scrape job", promConfig)
	}

	// Kubernetes: container port, Service, annotation, DISTFEAT_METRICS_ADDR if set.
	k := loadKustomization(t, k8sBase)
	ctr := workerContainer(t, k.one(t, "Deployment"))
	if mp, ok := containerPort(ctr, "metrics"); !ok || mp != port {
		t.Errorf("k8s metrics containerPort %d, the code default is %d", mp, port)
	}
	if addr := deploymentEnv(t, k)["DISTFEAT_METRICS_ADDR"]; addr != "" && portOf(t, "k8s DISTFEAT_METRICS_ADDR", addr) != port {
		t.Errorf("k8s DISTFEAT_METRICS_ADDR %s disagrees with the metrics containerPort %d", addr, port)
	}
	for _, p := range list(get(k.one(t, "Service"), "spec", "ports")) {
		if n, _ := get(p, "port").(int); n != port {
			t.Errorf("metrics Service port %d, the code default is %d", n, port)
		}
	}

	// Dockerfile EXPOSE.
	stages, _, _ := loadDockerfile(t)
	final := strings.Join(stages[len(stages)-1].Lines, "\n")
	if m := regexp.MustCompile(`(?m)^EXPOSE\s+(\d+)`).FindStringSubmatch(final); m == nil {
		t.Errorf("Dockerfile does not EXPOSE the metrics port %d", port)
	} else if m[1] != strconv.Itoa(port) {
		t.Errorf("Dockerfile EXPOSE %s, the code default metrics port is %d", m[1], port)
	}
}

func TestCodeGracefulShutdown(t *testing.T) {
	f := loadFacts(t)
	shutdown := func(set string, where string) time.Duration {
		if set == "" {
			v, ok := f.Env["SHUTDOWN_TIMEOUT"]
			if !ok || !v.HasDefault {
				t.Fatalf("%s does not set DISTFEAT_SHUTDOWN_TIMEOUT and the code has no default for it", where)
			}
			set = v.Default
		}
		return composeDuration(t, where+" DISTFEAT_SHUTDOWN_TIMEOUT", set)
	}
	if _, ok := f.Env["SHUTDOWN_TIMEOUT"]; !ok {
		t.Fatal("the worker configuration has no SHUTDOWN_TIMEOUT variable")
	}

	c := loadCompose(t)
	sd := shutdown(c.env("worker")["DISTFEAT_SHUTDOWN_TIMEOUT"], composeFile)
	grace := 10 * time.Second // docker's default
	if g := str(c.Services["worker"]["stop_grace_period"]); g != "" {
		grace = composeDuration(t, "compose worker stop_grace_period", g)
	}
	if grace < sd+graceMargin {
		t.Errorf("compose worker stop_grace_period %s must exceed DISTFEAT_SHUTDOWN_TIMEOUT %s by %s", grace, sd, graceMargin)
	}

	k := loadKustomization(t, k8sBase)
	sd = shutdown(deploymentEnv(t, k)["DISTFEAT_SHUTDOWN_TIMEOUT"], k8sBase)
	g, _ := get(k.one(t, "Deployment"), "spec", "template", "spec", "terminationGracePeriodSeconds").(int)
	if time.Duration(g)*time.Second < sd+graceMargin {
		t.Errorf("terminationGracePeriodSeconds %d must exceed DISTFEAT_SHUTDOWN_TIMEOUT %s by %s", g, sd, graceMargin)
	}
}

// TestCodeCommandsExist: the subcommands and flags the manifests run exist in cmd/distfeat.
func TestCodeCommandsExist(t *testing.T) {
	f := loadFacts(t)
	type use struct{ where, cmd string }
	var uses []use
	c := loadCompose(t)
	for _, name := range c.distfeatServices() {
		uses = append(uses, use{composeFile + " " + name, strings.Join(c.command(name), " ")})
	}
	ctr := workerContainer(t, loadKustomization(t, k8sBase).one(t, "Deployment"))
	var args []string
	for _, a := range list(ctr["args"]) {
		args = append(args, str(a))
	}
	uses = append(uses, use{k8sBase + " Deployment", strings.Join(args, " ")})
	stages, _, _ := loadDockerfile(t)
	for _, l := range stages[len(stages)-1].Lines {
		if m := regexp.MustCompile(`^CMD\s+\[(.*)\]`).FindStringSubmatch(l); m != nil {
			uses = append(uses, use{dockerfile + " CMD", strings.NewReplacer(`"`, "", ",", " ").Replace(m[1])})
		}
	}
	uses = append(uses, use{dockerfile + " smoke test", "version"})

	for _, u := range uses {
		fields := strings.Fields(u.cmd)
		if len(fields) == 0 {
			t.Errorf("%s: no command", u.where)
			continue
		}
		if !f.CLIStrings[fields[0]] {
			t.Errorf("%s runs subcommand %q, which cmd/distfeat does not mention", u.where, fields[0])
		}
		for _, a := range fields[1:] {
			if !strings.HasPrefix(a, "-") {
				continue
			}
			flag, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			// The worker's flags mirror its variables (--window-size for DISTFEAT_WINDOW_SIZE).
			_, mirrored := f.Env[strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))]
			if !f.CLIStrings[flag] && !(fields[0] == "worker" && mirrored) {
				t.Errorf("%s passes flag --%s, which cmd/distfeat does not define", u.where, flag)
			}
		}
	}
}

// ---- images --------------------------------------------------------------------------------------

func TestImagesAgree(t *testing.T) {
	repos := map[string][]string{} // image repository → where
	add := func(where, ref string) {
		repos[imageRepo(ref)] = append(repos[imageRepo(ref)], where)
	}
	c := loadCompose(t)
	for _, name := range c.distfeatServices() {
		ref := str(c.Services[name]["image"])
		ref = regexp.MustCompile(`\$\{[^}]*\}`).ReplaceAllString(ref, "TAG")
		add(composeFile+" "+name, ref)
	}
	k := loadKustomization(t, k8sBase)
	add(k8sBase+" Deployment", str(workerContainer(t, k.one(t, "Deployment"))["image"]))
	for _, dir := range []string{k8sBase, overlaysDir + "/sasl-tls"} {
		for _, im := range list(yamlDoc(t, filepath.Join(dir, "kustomization.yaml"))["images"]) {
			add(dir+"/kustomization.yaml images", str(get(im, "name")))
			if nn := str(get(im, "newName")); nn != "" {
				t.Errorf("%s renames the image to %s; keep one image name (override it in your own overlay)", dir, nn)
			}
		}
	}
	_, comments, _ := loadDockerfile(t)
	docTags := regexp.MustCompile(`-t\s+(\S+)`).FindAllStringSubmatch(comments, -1)
	if len(docTags) == 0 {
		t.Error("Dockerfile comments do not document the image name (docker build ... -t IMAGE)")
	}
	for _, m := range docTags {
		add(dockerfile+" build command", m[1])
	}
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\bghcr\.io/[a-z0-9./_-]+`).FindAllString(string(b), -1) {
		add(readme, strings.TrimRight(m, "."))
	}
	if len(repos) != 1 {
		var lines []string
		for r, where := range repos {
			lines = append(lines, fmt.Sprintf("%s in %s", r, strings.Join(where, ", ")))
		}
		sort.Strings(lines)
		t.Errorf("image names disagree:\n  %s", strings.Join(lines, "\n  "))
	}
}

// TestManifestsParse: every YAML and JSON file under deploy/ parses.
func TestManifestsParse(t *testing.T) {
	n := 0
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
		case strings.HasSuffix(p, ".yaml"), strings.HasSuffix(p, ".yml"):
			yamlDocs(t, p)
			n++
		case strings.HasSuffix(p, ".json"):
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if !json.Valid(b) {
				t.Errorf("%s: invalid JSON", p)
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Errorf("parsed only %d manifest files", n)
	}
}
