package realkafka

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/distfeat/distfeat/internal/testbroker"
)

// User is a SASL user of a secured single node: every user can log in with PLAIN,
// SCRAM-SHA-256 and SCRAM-SHA-512 (PLAIN from the listener's JAAS configuration, SCRAM
// credentials written at format time).
type User struct{ Name, Password string }

// Admin is the super user (ACLs do not apply to it); Users are the others, with no ACL
// until a test grants one.
var (
	Admin = User{"admin", "admin-pw"}
	Users = []User{{"worker", "worker-secret-pw"}, {"bob", "bob-pw"}, {"alice", "alice-pw"}}
)

// Options configures Start.
type Options struct {
	// Nodes is the number of combined broker+controller nodes (all voters); 0 means 1.
	Nodes int
	// Secure adds, on every node, SASL_PLAINTEXT, SSL and SASL_SSL listeners (certificates
	// generated here), the users above and StandardAuthorizer ACLs. The PLAINTEXT listener
	// (and the controller's) stays: its principal, User:ANONYMOUS, is a super user, so ACL
	// tests must log in through a SASL listener.
	Secure bool
	// Dir holds the nodes' configuration, data and logs; it must exist.
	Dir string
	// HeapMB is each JVM's maximum heap (-Xmx); 0 means 512.
	HeapMB int
}

// Cluster is a running Kafka cluster on loopback.
type Cluster struct {
	lib   string
	opts  Options
	Nodes []*Node
	// CAFile is the PEM CA certificate that signed the SSL listeners' certificate (Secure).
	CAFile string
}

// Node is one Kafka process.
type Node struct {
	ID  int
	dir string
	lib string
	// Addr is the PLAINTEXT listener; SASL, SSL and SASLSSL are the secured listeners (empty
	// without Options.Secure); controller is the CONTROLLER listener.
	Addr, SASL, SSL, SASLSSL, controller string
	heapMB                               int

	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// Start formats storage for opts.Nodes nodes and starts them, and returns once every node
// answers metadata, a topic replicated to every node has a full ISR and the group
// coordinator is found (so the first test's group does not wait for __consumer_offsets).
func Start(ctx context.Context, lib string, opts Options) (*Cluster, error) {
	if opts.Nodes == 0 {
		opts.Nodes = 1
	}
	if opts.HeapMB == 0 {
		opts.HeapMB = 512
	}
	c := &Cluster{lib: lib, opts: opts}
	var voters []string
	for i := 1; i <= opts.Nodes; i++ {
		n := &Node{ID: i, dir: filepath.Join(opts.Dir, "node"+strconv.Itoa(i)), lib: lib, heapMB: opts.HeapMB}
		ports, err := freePorts(5)
		if err != nil {
			return nil, err
		}
		n.Addr, n.controller = "127.0.0.1:"+ports[0], "127.0.0.1:"+ports[1]
		if opts.Secure {
			n.SASL, n.SSL, n.SASLSSL = "127.0.0.1:"+ports[2], "127.0.0.1:"+ports[3], "127.0.0.1:"+ports[4]
		}
		if err := os.MkdirAll(n.dir, 0o755); err != nil {
			return nil, err
		}
		voters = append(voters, fmt.Sprintf("%d@%s", i, n.controller))
		c.Nodes = append(c.Nodes, n)
	}
	var keystore string
	if opts.Secure {
		cert, err := testbroker.NewCertificate("127.0.0.1", "localhost")
		if err != nil {
			return nil, err
		}
		keystore, c.CAFile = filepath.Join(opts.Dir, "keystore.pem"), filepath.Join(opts.Dir, "ca.pem")
		if err := writeKeystore(keystore, cert); err != nil {
			return nil, err
		}
		if err := os.WriteFile(c.CAFile, cert.CAPEM, 0o644); err != nil {
			return nil, err
		}
	}
	id, err := clusterID()
	if err != nil {
		return nil, err
	}
	// The nodes' storage is formatted in parallel (a JVM start each, seconds on a busy machine).
	errs := make(chan error, len(c.Nodes))
	for _, n := range c.Nodes {
		go func() {
			props := n.properties(strings.Join(voters, ","), opts, keystore)
			err := os.WriteFile(filepath.Join(n.dir, "server.properties"), []byte(props), 0o644)
			if err == nil {
				err = os.WriteFile(filepath.Join(n.dir, "log4j2.properties"), []byte(log4j), 0o644)
			}
			if err == nil {
				err = n.format(ctx, id, opts.Secure)
			}
			errs <- err
		}()
	}
	var ferr error
	for range c.Nodes {
		ferr = errors.Join(ferr, <-errs)
	}
	if ferr != nil {
		return nil, ferr
	}
	for _, n := range c.Nodes {
		if err := n.start(); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.WaitReady(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Bootstrap is the PLAINTEXT listeners of every node.
func (c *Cluster) Bootstrap() []string {
	var a []string
	for _, n := range c.Nodes {
		a = append(a, n.Addr)
	}
	return a
}

// Close stops every node: SIGTERM to each by PID at once, then SIGKILL to those still
// running after 10 s (a node's controlled shutdown waits for a controller quorum that the
// others, stopping too, may no longer form).
func (c *Cluster) Close() {
	for _, n := range c.Nodes {
		if n.Running() {
			syscall.Kill(n.PID(), syscall.SIGTERM) //nolint:errcheck // it may have exited already
		}
	}
	deadline := time.After(10 * time.Second)
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		select {
		case <-n.done:
		case <-deadline:
			n.Kill()
		}
	}
}

// NodeByAddr is the node whose PLAINTEXT listener is addr (as metadata names it), or nil.
func (c *Cluster) NodeByAddr(addr string) *Node {
	for _, n := range c.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// NodeByID is the node with Kafka node.id id, or nil.
func (c *Cluster) NodeByID(id int) *Node {
	for _, n := range c.Nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// readyTopic is the topic WaitReady creates, replicated to every node.
const readyTopic = "distfeat-harness-ready"

// WaitReady returns once every running node is in the metadata, the readiness topic (one
// partition, replicated to every node) exists with every running node in its ISR, and the
// group coordinator answers. It retries each step until ctx ends.
func (c *Cluster) WaitReady(ctx context.Context) error {
	tr := &kafka.Transport{DialTimeout: 2 * time.Second}
	defer tr.CloseIdleConnections()
	var live []string
	for _, n := range c.Nodes {
		if n.Running() {
			live = append(live, n.Addr)
		}
	}
	cl := &kafka.Client{Addr: kafka.TCP(live...), Transport: tr, Timeout: 5 * time.Second}
	step := func(name string, f func() error) error {
		var last error
		for {
			if last = f(); last == nil {
				return nil
			}
			for _, n := range c.Nodes {
				if n.cmd != nil && !n.Running() && n.wasStarted() {
					return fmt.Errorf("kafka node %d exited while waiting for %s:\n%s", n.ID, name, n.LogTail(30))
				}
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("kafka cluster not ready (%s): %w (last error: %v)\nnode %d log:\n%s", name, ctx.Err(), last, c.Nodes[0].ID, c.Nodes[0].LogTail(30))
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	if err := step("metadata", func() error {
		md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{}})
		if err != nil {
			return err
		}
		if len(md.Brokers) < len(live) {
			return fmt.Errorf("%d of %d brokers registered", len(md.Brokers), len(live))
		}
		return nil
	}); err != nil {
		return err
	}
	if err := step("topic creation", func() error {
		res, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: readyTopic, NumPartitions: 1, ReplicationFactor: len(c.Nodes)}}})
		if err != nil {
			return err
		}
		if e := res.Errors[readyTopic]; e != nil && !errors.Is(e, kafka.TopicAlreadyExists) {
			return e
		}
		md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{readyTopic}})
		if err != nil {
			return err
		}
		if len(md.Topics) != 1 || md.Topics[0].Error != nil || len(md.Topics[0].Partitions) != 1 {
			return fmt.Errorf("topic %s not in metadata yet", readyTopic)
		}
		p := md.Topics[0].Partitions[0]
		if p.Error != nil || p.Leader.ID < 0 {
			return fmt.Errorf("topic %s has no leader yet (%v)", readyTopic, p.Error)
		}
		if len(p.Isr) < len(live) {
			return fmt.Errorf("topic %s ISR has %d of %d live nodes", readyTopic, len(p.Isr), len(live))
		}
		return nil
	}); err != nil {
		return err
	}
	return step("group coordinator", func() error {
		res, err := cl.FindCoordinator(ctx, &kafka.FindCoordinatorRequest{Key: "distfeat-harness", KeyType: kafka.CoordinatorKeyTypeConsumer})
		if err != nil {
			return err
		}
		return res.Error
	})
}

// CreateTopics creates topics of the given partition count (replicated to every node, up
// to 3) and waits until their leaders answer for them.
func (c *Cluster) CreateTopics(ctx context.Context, partitions int, topics ...string) error {
	tr := &kafka.Transport{DialTimeout: 2 * time.Second}
	defer tr.CloseIdleConnections()
	cl := &kafka.Client{Addr: kafka.TCP(c.Bootstrap()...), Transport: tr, Timeout: 10 * time.Second}
	req := &kafka.CreateTopicsRequest{}
	for _, t := range topics {
		req.Topics = append(req.Topics, kafka.TopicConfig{Topic: t, NumPartitions: partitions, ReplicationFactor: -1})
	}
	res, err := cl.CreateTopics(ctx, req)
	if err != nil {
		return fmt.Errorf("create topics: %w", err)
	}
	for name, e := range res.Errors {
		if e != nil && !errors.Is(e, kafka.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", name, e)
		}
	}
	for {
		lo := &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{}}
		for _, t := range topics {
			for p := range partitions {
				lo.Topics[t] = append(lo.Topics[t], kafka.FirstOffsetOf(p))
			}
		}
		res, err := cl.ListOffsets(ctx, lo)
		ready := err == nil
		for _, t := range topics {
			ready = ready && len(res.Topics[t]) == partitions
			if ready {
				for _, p := range res.Topics[t] {
					ready = ready && p.Error == nil
				}
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topics %v not ready: %w (last error %v)", topics, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// properties is the node's server.properties: light settings for a small machine.
func (n *Node) properties(voters string, opts Options, keystore string) string {
	rf := min(opts.Nodes, 3)
	minISR := max(1, rf-1)
	listeners := []string{"PLAINTEXT://" + n.Addr}
	protocols := []string{"PLAINTEXT:PLAINTEXT", "CONTROLLER:PLAINTEXT"}
	if opts.Secure {
		listeners = append(listeners, "SASL_PLAINTEXT://"+n.SASL, "SSL://"+n.SSL, "SASL_SSL://"+n.SASLSSL)
		protocols = append(protocols, "SASL_PLAINTEXT:SASL_PLAINTEXT", "SSL:SSL", "SASL_SSL:SASL_SSL")
	}
	advertised := strings.Join(listeners, ",")
	listeners = append(listeners, "CONTROLLER://"+n.controller)
	p := []string{
		"process.roles=broker,controller",
		"node.id=" + strconv.Itoa(n.ID),
		"controller.quorum.voters=" + voters,
		"listeners=" + strings.Join(listeners, ","),
		"advertised.listeners=" + advertised,
		"listener.security.protocol.map=" + strings.Join(protocols, ","),
		"controller.listener.names=CONTROLLER",
		"inter.broker.listener.name=PLAINTEXT",
		"log.dirs=" + filepath.Join(n.dir, "data"),
		// A small machine: few threads, a small cleaner buffer, few internal partitions.
		"num.network.threads=1", "num.io.threads=2", "background.threads=2",
		"num.recovery.threads.per.data.dir=1", "num.replica.fetchers=1", "log.cleaner.threads=1",
		"log.cleaner.dedupe.buffer.size=4194304",
		"offsets.topic.num.partitions=3", "transaction.state.log.num.partitions=1",
		"offsets.topic.replication.factor=" + strconv.Itoa(rf),
		"transaction.state.log.replication.factor=" + strconv.Itoa(rf),
		"transaction.state.log.min.isr=" + strconv.Itoa(minISR),
		"share.coordinator.state.topic.replication.factor=" + strconv.Itoa(rf),
		"share.coordinator.state.topic.min.isr=" + strconv.Itoa(minISR),
		"default.replication.factor=" + strconv.Itoa(rf),
		"min.insync.replicas=" + strconv.Itoa(minISR),
		"auto.create.topics.enable=false",
		// Groups form at once (no 3 s wait for more members), and tests may use short
		// session timeouts so that a killed member is evicted quickly.
		"group.initial.rebalance.delay.ms=0",
		"group.min.session.timeout.ms=500",
		// A killed node is fenced, and its partitions get new leaders, within seconds
		// (defaults: 9 s and 2 s).
		"broker.session.timeout.ms=4000", "broker.heartbeat.interval.ms=500",
		"replica.lag.time.max.ms=10000",
	}
	if opts.Secure {
		jaas := func(mech string) string {
			if mech == "plain" {
				s := `org.apache.kafka.common.security.plain.PlainLoginModule required username="` + Admin.Name + `" password="` + Admin.Password + `"`
				for _, u := range append([]User{Admin}, Users...) {
					s += ` user_` + u.Name + `="` + u.Password + `"`
				}
				return s + ";"
			}
			return "org.apache.kafka.common.security.scram.ScramLoginModule required;"
		}
		p = append(p,
			"sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
			"ssl.keystore.type=PEM", "ssl.keystore.location="+keystore, "ssl.client.auth=none",
			"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
			"super.users=User:ANONYMOUS;User:"+Admin.Name,
		)
		for _, l := range []string{"sasl_plaintext", "sasl_ssl"} {
			for _, m := range []string{"plain", "scram-sha-256", "scram-sha-512"} {
				p = append(p, "listener.name."+l+"."+m+".sasl.jaas.config="+jaas(m))
			}
		}
	}
	return strings.Join(p, "\n") + "\n"
}

// log4j sends Kafka's warnings and errors to the process's standard output (the node's log
// file); INFO would be megabytes per test run.
const log4j = `rootLogger.level = WARN
rootLogger.appenderRef.stdout.ref = STDOUT
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
logger.kafka.name = kafka
logger.kafka.level = WARN
logger.server.name = kafka.server.KafkaRaftServer
logger.server.level = INFO
`

// java is the command line of a JVM running main with the node's class path.
func (n *Node) java(main string, args ...string) *exec.Cmd {
	jvm := []string{
		"-Xms128m", "-Xmx" + strconv.Itoa(n.heapMB) + "m", "-XX:+UseSerialGC",
		"-XX:CICompilerCount=2", "-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + filepath.Join(n.dir, "log4j2.properties"),
		"-Dkafka.logs.dir=" + filepath.Join(n.dir, "logs"),
		"-cp", filepath.Join(n.lib, "*"), main,
	}
	cmd := exec.Command("java", append(jvm, args...)...)
	// The JVM dies with the process that started it (a test binary killed by its timeout).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd
}

// format writes the node's KRaft storage (meta.properties, the bootstrap checkpoint) and,
// with secure, the users' SCRAM credentials (KIP-900).
func (n *Node) format(ctx context.Context, clusterID string, secure bool) error {
	args := []string{"format", "-t", clusterID, "-c", filepath.Join(n.dir, "server.properties"), "--ignore-formatted"}
	if secure {
		for _, u := range append([]User{Admin}, Users...) {
			for _, m := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
				args = append(args, "--add-scram", m+"=[name="+u.Name+",password="+u.Password+"]")
			}
		}
	}
	cmd := n.java("kafka.tools.StorageTool", args...)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			if cmd.Process != nil {
				cmd.Process.Kill() //nolint:errcheck // best effort on cancellation
			}
		case <-done:
		}
	}()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("kafka storage format (node %d): %v\n%s", n.ID, err, lastLines(string(out), 20))
	}
	return nil
}

// start starts the node's server process (kafka.Kafka), its output appended to node.log.
func (n *Node) start() error {
	f, err := os.OpenFile(filepath.Join(n.dir, "node.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := n.java("kafka.Kafka", filepath.Join(n.dir, "server.properties"))
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start kafka node %d: %w", n.ID, err)
	}
	n.cmd, n.log, n.done = cmd, f, make(chan struct{})
	done := n.done
	go func() { cmd.Wait(); f.Close(); close(done) }() //nolint:errcheck // the exit is observed through Running
	return nil
}

// Restart starts a stopped or killed node again on the same ports and storage.
func (n *Node) Restart() error {
	if n.Running() {
		return fmt.Errorf("kafka node %d is running", n.ID)
	}
	return n.start()
}

// PID is the node's process ID (0 when never started).
func (n *Node) PID() int {
	if n.cmd == nil || n.cmd.Process == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

func (n *Node) wasStarted() bool { return n.cmd != nil }

// Running reports whether the node's process is alive.
func (n *Node) Running() bool {
	if n.done == nil {
		return false
	}
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

// Kill sends SIGKILL to the node's process and waits for it to exit.
func (n *Node) Kill() {
	if !n.Running() {
		return
	}
	syscall.Kill(n.PID(), syscall.SIGKILL) //nolint:errcheck // it may have exited already
	<-n.done
}

// Stop sends SIGTERM (a controlled shutdown) and SIGKILL if the node is still running
// after 20 s.
func (n *Node) Stop() {
	if !n.Running() {
		return
	}
	syscall.Kill(n.PID(), syscall.SIGTERM) //nolint:errcheck // it may have exited already
	select {
	case <-n.done:
	case <-time.After(20 * time.Second):
		n.Kill()
	}
}

// LogTail is the last lines of the node's log.
func (n *Node) LogTail(lines int) string {
	b, err := os.ReadFile(filepath.Join(n.dir, "node.log"))
	if err != nil {
		return err.Error()
	}
	return lastLines(string(b), lines)
}

// RSS is the node's resident set size in bytes (from /proc), 0 if unknown.
func (n *Node) RSS() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", n.PID()))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// writeKeystore writes the PEM key store Kafka reads (ssl.keystore.type=PEM): the private
// key as unencrypted PKCS#8, then the certificate chain.
func writeKeystore(path string, cert *testbroker.Certificate) error {
	block, _ := pem.Decode(cert.KeyPEM)
	if block == nil {
		return errors.New("realkafka: no key in the generated certificate")
	}
	key, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		return err
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	out := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
	out = append(out, cert.CertPEM...)
	out = append(out, cert.CAPEM...)
	return os.WriteFile(path, out, 0o600)
}

// clusterID is a random Kafka UUID (16 bytes, base64url without padding) that does not
// start with '-': StorageTool's argument parser would take such an ID for an option (Kafka's
// own Uuid.randomUuid draws again for the same reason).
func clusterID() (string, error) {
	for {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		if id := base64.RawURLEncoding.EncodeToString(b[:]); id[0] != '-' {
			return id, nil
		}
	}
}

// freePorts are n loopback ports that were free a moment ago (the kernel picked them).
func freePorts(n int) ([]string, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports, nil
}
