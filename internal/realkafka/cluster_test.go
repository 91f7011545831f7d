package realkafka

import (
	"crypto/tls"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distfeat/distfeat/internal/testbroker"
)

// TestProperties: a node's server.properties carries its listeners, the voters, the
// replication settings that fit the cluster's size, and, secured, the SASL, TLS and ACL
// settings — the settings the real-Kafka suites rely on (the suites themselves, under
// `make test-kafka`, check that Kafka accepts them).
func TestProperties(t *testing.T) {
	n := &Node{ID: 2, dir: "/d/node2", Addr: "127.0.0.1:1", controller: "127.0.0.1:2", SASL: "127.0.0.1:3", SSL: "127.0.0.1:4", SASLSSL: "127.0.0.1:5"}
	for _, tc := range []struct {
		name   string
		opts   Options
		want   []string
		absent []string
	}{
		{"three plain nodes", Options{Nodes: 3}, []string{
			"node.id=2\n", "controller.quorum.voters=V\n", "listeners=PLAINTEXT://127.0.0.1:1,CONTROLLER://127.0.0.1:2\n",
			"advertised.listeners=PLAINTEXT://127.0.0.1:1\n", "default.replication.factor=3\n", "min.insync.replicas=2\n",
			"offsets.topic.replication.factor=3\n", "group.initial.rebalance.delay.ms=0\n", "auto.create.topics.enable=false\n",
		}, []string{"SASL", "authorizer"}},
		{"secured single node", Options{Nodes: 1, Secure: true}, []string{
			"listeners=PLAINTEXT://127.0.0.1:1,SASL_PLAINTEXT://127.0.0.1:3,SSL://127.0.0.1:4,SASL_SSL://127.0.0.1:5,CONTROLLER://127.0.0.1:2\n",
			"min.insync.replicas=1\n", "offsets.topic.replication.factor=1\n", "transaction.state.log.min.isr=1\n",
			"ssl.keystore.type=PEM\n", "ssl.keystore.location=/k.pem\n",
			"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n", "super.users=User:ANONYMOUS;User:admin\n",
			`listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-pw" user_admin="admin-pw" user_worker="worker-secret-pw"`,
			"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;\n",
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := n.properties("V", tc.opts, "/k.pem")
			for _, w := range tc.want {
				if !strings.Contains(p, w) {
					t.Errorf("properties lack %q:\n%s", w, p)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(p, a) {
					t.Errorf("properties have %q:\n%s", a, p)
				}
			}
		})
	}
}

// TestKeystore: the PEM key store Kafka reads holds an unencrypted PKCS#8 key (Kafka's PEM
// support reads no other key format) and the certificate chain, and Go accepts the pair.
func TestKeystore(t *testing.T) {
	cert, err := testbroker.NewCertificate("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "k.pem")
	if err := writeKeystore(path, cert); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "-----BEGIN PRIVATE KEY-----") || strings.Count(string(b), "BEGIN CERTIFICATE") != 2 {
		t.Fatalf("key store is not a PKCS#8 key and a chain of two certificates:\n%s", b)
	}
	if _, err := tls.X509KeyPair(b, b); err != nil {
		t.Errorf("key store does not parse as a key pair: %v", err)
	}
}

// TestClusterID: a Kafka UUID, 16 random bytes in unpadded base64url, different each time,
// never starting with '-' (which StorageTool would parse as an option: one ID in 64 would,
// so 2000 draws without the guard fail with probability 1 − (63/64)²⁰⁰⁰ ≈ 1 − 2·10⁻¹⁴).
func TestClusterID(t *testing.T) {
	for range 2000 {
		id, err := clusterID()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(id, "-") {
			t.Fatalf("cluster ID %q starts with '-'", id)
		}
	}
	a, err := clusterID()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := clusterID()
	raw, err := base64.RawURLEncoding.DecodeString(a)
	if err != nil || len(raw) != 16 || len(a) != 22 {
		t.Errorf("cluster ID %q: %d bytes (%v), want 16 in 22 characters", a, len(raw), err)
	}
	if a == b {
		t.Errorf("two cluster IDs are both %q", a)
	}
}
