// Package etcdtest starts real etcd members on loopback for tests (the
// etcd binary, Debian's etcd-server): one, or a cluster of three whose
// members a test can kill and start again. A test skips, saying so, when
// there is no etcd on the PATH.
package etcdtest

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Cluster is etcd members started by a test, stopped when it ends.
type Cluster struct {
	t       testing.TB
	tls     *TLS
	health  *http.Client
	members []*member
	initial string
}

type member struct {
	name, dir    string
	client, peer string // URLs
	mu           sync.Mutex
	cmd          *exec.Cmd
	exited       chan struct{}
	logPath      string
	startedOnce  bool
}

// TLS has the members serve clients over https with these PEM files and
// require a client certificate signed by CA.
type TLS struct {
	CertFile, KeyFile, CAFile string
	// Client is what the health checks use (a client certificate and
	// the CA).
	Client *tls.Config
}

// StartTLS is Start with clients served over https.
func StartTLS(t testing.TB, n int, tc TLS) *Cluster { return start(t, n, &tc) }

// Start starts an etcd cluster of n members (1 or 3, say) on loopback in
// t's temporary directories and waits until it answers; it skips t when
// etcd is not installed.
func Start(t testing.TB, n int) *Cluster { return start(t, n, nil) }

func start(t testing.TB, n int, tc *TLS) *Cluster {
	t.Helper()
	if _, err := exec.LookPath("etcd"); err != nil {
		t.Skip("etcd is not installed (Debian: apt-get install etcd-server); skipping the tests that need a real etcd")
	}
	c := &Cluster{t: t, tls: tc, health: &http.Client{Timeout: time.Second}}
	scheme := "http://"
	if tc != nil {
		scheme = "https://"
		c.health.Transport = &http.Transport{TLSClientConfig: tc.Client}
	}
	var initial []string
	for i := range n {
		m := &member{name: fmt.Sprint("m", i), dir: filepath.Join(t.TempDir(), "data"),
			client: scheme + freeAddr(t), peer: "http://" + freeAddr(t)}
		m.logPath = filepath.Join(t.TempDir(), "etcd.log")
		c.members = append(c.members, m)
		initial = append(initial, m.name+"="+m.peer)
	}
	c.initial = strings.Join(initial, ",")
	for _, m := range c.members {
		c.start(m)
	}
	t.Cleanup(func() {
		for _, m := range c.members {
			m.kill()
		}
	})
	for i := range c.members {
		c.WaitHealthy(i)
	}
	return c
}

// Endpoints are the members' client URLs.
func (c *Cluster) Endpoints() []string {
	var out []string
	for _, m := range c.members {
		out = append(out, m.client)
	}
	return out
}

// Kill stops member i at once (SIGKILL).
func (c *Cluster) Kill(i int) { c.members[i].kill() }

// Restart starts the members given again on their data (after Kill),
// all of them before it waits until each answers: a member alone cannot
// answer while the others that make its quorum are down.
func (c *Cluster) Restart(members ...int) {
	for _, i := range members {
		c.start(c.members[i])
	}
	for _, i := range members {
		c.WaitHealthy(i)
	}
}

func (c *Cluster) start(m *member) {
	c.t.Helper()
	state := "new"
	if m.startedOnce {
		state = "existing"
	}
	m.startedOnce = true
	logf, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command("etcd", "--name", m.name, "--data-dir", m.dir,
		"--listen-client-urls", m.client, "--advertise-client-urls", m.client,
		"--listen-peer-urls", m.peer, "--initial-advertise-peer-urls", m.peer,
		"--initial-cluster", c.initial, "--initial-cluster-state", state,
		"--initial-cluster-token", "mcprt-test",
		// Quick elections on loopback: a killed leader is replaced in
		// well under a second.
		"--heartbeat-interval", "50", "--election-timeout", "500")
	if c.tls != nil {
		cmd.Args = append(cmd.Args, "--cert-file", c.tls.CertFile, "--key-file", c.tls.KeyFile,
			"--trusted-ca-file", c.tls.CAFile, "--client-cert-auth")
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		logf.Close()
		c.t.Fatalf("etcd: %v", err)
	}
	exited := make(chan struct{})
	go func() { // owned: ends when the process does (kill waits for it)
		cmd.Wait()
		logf.Close()
		close(exited)
	}()
	m.mu.Lock()
	m.cmd, m.exited = cmd, exited
	m.mu.Unlock()
}

func (m *member) kill() {
	m.mu.Lock()
	cmd, exited := m.cmd, m.exited
	m.cmd = nil
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Kill()
	<-exited
}

// WaitHealthy waits (up to 20 s) until member i says it is healthy.
func (c *Cluster) WaitHealthy(i int) {
	c.t.Helper()
	m := c.members[i]
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := c.health.Get(m.client + "/health")
		if err == nil {
			ok := resp.StatusCode == 200
			resp.Body.Close()
			if ok {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	log, _ := os.ReadFile(m.logPath)
	if len(log) > 4000 {
		log = log[len(log)-4000:]
	}
	c.t.Fatalf("etcd member %s (%s) not healthy after 20 s; its log ends:\n%s", m.name, m.client, log)
}

// freeAddr returns a loopback address with a port free now.
func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
