package etcdv3

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/test/etcdtest"
)

func TestKVTxnLeaseWatch(t *testing.T) {
	cl := etcdtest.Start(t, 1)
	c, err := New(Config{Endpoints: append([]string{"http://127.0.0.1:1"}, cl.Endpoints()...), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Put(ctx, []byte("p/a"), []byte("1"), 0); err != nil {
		t.Fatalf("put through a dead endpoint then a live one: %v", err)
	}
	kvs, rev, err := c.Range(ctx, []byte("p/"), PrefixEnd([]byte("p/")))
	if err != nil || len(kvs) != 1 || string(kvs[0].Value) != "1" || rev == 0 {
		t.Fatalf("range: %v %d %v", kvs, rev, err)
	}
	// A txn whose comparison fails applies its else branch alone.
	res, err := c.Txn(ctx, []Cmp{VersionIs([]byte("p/a"), 0)},
		[]Op{OpPut([]byte("p/a"), []byte("2"), 0)}, []Op{OpGet([]byte("p/a"))})
	if err != nil || res.Succeeded || len(res.Gets) != 1 || string(res.Gets[0][0].Value) != "1" {
		t.Fatalf("txn: %+v %v", res, err)
	}
	res, err = c.Txn(ctx, []Cmp{ModRevisionIs([]byte("p/a"), kvs[0].ModRevision), LeaseIs([]byte("p/a"), 0)},
		[]Op{OpPut([]byte("p/a"), []byte("2"), 0), OpDelete([]byte("p/none"), nil)}, nil)
	if err != nil || !res.Succeeded {
		t.Fatalf("txn on the right revision: %+v %v", res, err)
	}
	// Leases: a key on a revoked lease is gone; keep-alive says so.
	lease, err := c.Grant(ctx, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ttl, err := c.KeepAlive(ctx, lease); err != nil || ttl <= 0 {
		t.Fatalf("keepalive: %v %v", ttl, err)
	}
	var mu sync.Mutex
	var seen []Event
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error)
	ready := make(chan struct{}, 1)
	go func() {
		done <- c.Watch(wctx, []byte("p/"), PrefixEnd([]byte("p/")), res.Revision+1, func(evs []Event) {
			mu.Lock()
			seen = append(seen, evs...)
			mu.Unlock()
		}, func() { ready <- struct{}{} })
	}()
	<-ready
	if _, err := c.Put(ctx, []byte("p/l"), []byte("x"), lease); err != nil {
		t.Fatal(err)
	}
	if err := c.Revoke(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if _, err := c.KeepAlive(ctx, lease); !errors.Is(err, ErrLeaseGone) {
		t.Fatalf("keepalive of a revoked lease: %v, want ErrLeaseGone", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0].Delete || string(seen[0].KV.Key) != "p/l" || !seen[1].Delete {
		t.Fatalf("watch saw %+v; want the put of p/l, then its delete by the revoke", seen)
	}
}

// A dead cluster is an error naming it, within the timeout, not a hang.
func TestUnreachable(t *testing.T) {
	c, _ := New(Config{Endpoints: []string{"http://127.0.0.1:1", "http://127.0.0.1:2"}, Timeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := c.Put(context.Background(), []byte("k"), nil, 0)
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("put to nothing: %v after %v", err, time.Since(start))
	}
	t.Log(err)
}

// With etcd's auth on, a client with the user's password gets a token and
// is served; one without is refused, and the password is in no error.
func TestAuth(t *testing.T) {
	cl := etcdtest.Start(t, 1)
	ep := cl.Endpoints()[0]
	for _, args := range [][]string{
		{"user", "add", "root", "--new-user-password=s3cret-pw"},
		{"user", "grant-role", "root", "root"},
		{"auth", "enable"},
	} {
		cmd := exec.Command("etcdctl", append([]string{"--endpoints=" + ep}, args...)...)
		cmd.Env = append(os.Environ(), "ETCDCTL_API=3")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("etcdctl %v: %v: %s (etcd-client needed for the auth test)", args, err, out)
		}
	}
	ctx := context.Background()
	c, _ := New(Config{Endpoints: []string{ep}, Username: "root", Password: "s3cret-pw", Timeout: time.Second})
	if _, err := c.Put(ctx, []byte("k"), []byte("v"), 0); err != nil {
		t.Fatalf("put with a token: %v", err)
	}
	// A token etcd no longer knows is replaced once.
	c.mu.Lock()
	c.token = "stale.token"
	c.mu.Unlock()
	if kvs, _, err := c.Range(ctx, []byte("k"), nil); err != nil || len(kvs) != 1 {
		t.Fatalf("range with a stale token: %v %v", kvs, err)
	}
	bad, _ := New(Config{Endpoints: []string{ep}, Username: "root", Password: "wrong-pw", Timeout: time.Second})
	_, err := bad.Put(ctx, []byte("k"), []byte("v"), 0)
	if err == nil || strings.Contains(err.Error(), "wrong-pw") {
		t.Fatalf("put with a wrong password: %v; want an error without the password", err)
	}
	anon, _ := New(Config{Endpoints: []string{ep}, Timeout: time.Second})
	if _, err := anon.Put(ctx, []byte("k"), []byte("v"), 0); err == nil {
		t.Fatal("put without credentials succeeded with auth enabled")
	}
}
