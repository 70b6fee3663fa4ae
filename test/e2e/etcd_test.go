//go:build linux

package e2e

// Replicas that share their tasks through etcd and survive the loss of a
// node: a 3-member etcd cluster, three `mcprt serve -http -tasks-etcd`
// replicas with tags, nginx in front (testdata/nginx-etcd.conf: the tag
// routing of nginx-modern.conf, with the other replicas as backups). One
// replica is killed with -9 while its tasks run, and an etcd member is
// killed and started again: every task is answered through the
// survivors, the dead replica's taken over and run again once.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
	"github.com/mcprt/mcprt/test/etcdtest"
)

func TestEtcdReplicasSurviveALostNode(t *testing.T) {
	nginxPath(t) // skips the test without nginx, before etcd starts
	cl := etcdtest.Start(t, 3)
	key := nginxKeyFile(t, "etcd")
	eps := strings.Join(cl.Endpoints(), ",")
	// MCPRT_ETCD_HOLD sets the replicas' hold ttl, to measure failover
	// against it (test/bench/RESULTS.md).
	hold := "2s"
	if h := os.Getenv("MCPRT_ETCD_HOLD"); h != "" {
		hold = h
	}
	replicas := map[string]*nginxReplica{}
	for _, tag := range []string{"a", "b", "c"} {
		replicas[tag] = nginxStartReplica(t, tag, "-http-session-tag", tag, "-http-state-key-file", key,
			"-tasks-etcd", eps, "-tasks-etcd-prefix", "e2e/", "-tasks-etcd-hold", hold, "-tasks-etcd-timeout", "1s")
	}
	c := nginxStart(t, "nginx-etcd.conf", replicas["a"], replicas["b"], replicas["c"])
	tasksExt := map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	// A bound on every exchange: the client never waits past it, whatever
	// is down.
	const bound = 10 * time.Second
	call := func(n int, method string, params map[string]any) (map[string]json.RawMessage, *nginxReply) {
		t.Helper()
		hdr, body := nginxModernRequest(n, method, params, tasksExt)
		r, err := c.sendWithin(bound, c.url, "POST", hdr, body)
		if err != nil {
			t.Fatalf("%s through nginx: %v (the client's bound is %v)", method, err, bound)
		}
		return r.final(t).result(t, method), r
	}
	made := map[string]string{} // task id → replica that made it
	for i := range 9 {
		res, r := call(i, "tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 2500}})
		var id string
		if json.Unmarshal(res["taskId"], &id); id == "" {
			t.Fatalf("tools/call sleep: want a task, got %s", r.final(t).Result)
		}
		made[id] = r.upstream
	}
	byA := 0
	for _, by := range made {
		if by == "a" {
			byA++
		}
	}
	if byA == 0 {
		t.Fatalf("no task made by replica a (round robin): %v", made)
	}
	// Any replica answers for a task another runs: each task read from
	// the replica after the one that made it, bypassing nginx.
	next := map[string]string{"a": "b", "b": "c", "c": "a"}
	n := 100
	for id, by := range made {
		hdr, body := nginxModernRequest(n, "tasks/get", map[string]any{"taskId": id}, tasksExt)
		n++
		r, err := c.sendWithin(bound, "http://"+replicas[next[by]].addr+"/mcp", "POST", hdr, body)
		if err != nil {
			t.Fatal(err)
		}
		if res := r.final(t).result(t, "tasks/get"); string(res["status"]) != `"working"` {
			t.Fatalf("task %s (made by %s) read at %s: %s, want working", id, by, next[by], r.final(t).Result)
		}
	}
	// Legacy sessions: one on a, one elsewhere; their ids are sealed, so
	// an altered id is no session, even on its own replica.
	var sa, sOther *nginxSession
	for i := 0; sa == nil || sOther == nil; i++ {
		if i == 9 {
			t.Fatalf("nine initializes did not reach a and another replica")
		}
		s := c.initialize(t)
		if s.replica == "a" && sa == nil {
			sa = s
		} else if s.replica != "a" && sOther == nil {
			sOther = s
		}
	}
	nginxWantEcho(t, c.legacy(t, sa, "POST", nginxEcho(200, "on a")), "on a")
	forged := []byte(sOther.id)
	forged[len(forged)-3] ^= 1
	if r := c.legacy(t, &nginxSession{id: string(forged)}, "POST", nginxEcho(201, "x")); r.status != 404 || r.upstream != sOther.replica {
		t.Fatalf("an altered session id: status %d via %q, want 404 from %s: %s", r.status, r.tried, sOther.replica, r.body)
	}
	// Node loss mid-task, and an etcd member lost for a while.
	time.Sleep(300 * time.Millisecond)
	replicas["a"].kill(t)
	killed := time.Now()
	cl.Kill(0)
	etcdBack := make(chan struct{})
	go func() {
		defer close(etcdBack)
		time.Sleep(1500 * time.Millisecond)
		cl.Restart(0)
	}()
	defer func() { <-etcdBack }()
	done := map[string]time.Duration{}
	takenOver := map[string]time.Duration{} // first read as run again by a survivor
	for deadline := time.Now().Add(40 * time.Second); len(done) < len(made); {
		if time.Now().After(deadline) {
			t.Fatalf("tasks not answered within 40 s: %d of %d done", len(done), len(made))
		}
		for id := range made {
			if _, ok := done[id]; ok {
				continue
			}
			res, r := call(n, "tasks/get", map[string]any{"taskId": id})
			n++
			switch string(res["status"]) {
			case `"completed"`:
				done[id] = time.Since(killed)
			case `"working"`:
				if _, ok := takenOver[id]; !ok && strings.Contains(string(res["statusMessage"]), "run again by another server") {
					takenOver[id] = time.Since(killed)
				}
			default:
				t.Fatalf("task %s (made by %s): %s; want it completed (a sleep is resumable: taken over, it is run again)", id, made[id], r.final(t).Result)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	// a's legacy session is gone with a: a survivor answers 404 (it does
	// not know the session), the client initializes again and goes on;
	// the other replica's session never noticed.
	if r := c.legacy(t, sa, "POST", nginxEcho(202, "x")); r.status != 404 || r.upstream == "a" || r.upstream == "" {
		t.Fatalf("the dead replica's session: status %d via %q, want 404 from a survivor: %s", r.status, r.tried, r.body)
	}
	again := c.initialize(t)
	nginxWantEcho(t, c.legacy(t, again, "POST", nginxEcho(203, "again")), "again")
	nginxWantEcho(t, c.legacy(t, sOther, "POST", nginxEcho(204, "still")), "still")
	// Exactly one survivor ran each of a's tasks again; none of the
	// others' was taken over.
	<-etcdBack
	var failover, firstRun time.Duration
	for id, by := range made {
		runs := 0
		for _, tag := range []string{"b", "c"} {
			runs += strings.Count(replicas[tag].stderr.String(), "took over and ran again a task whose server was lost\" task="+id)
			runs += strings.Count(replicas[tag].stderr.String(), "took over and ran again a task whose server was lost task="+id)
		}
		want := 0
		if by == "a" {
			want = 1
			failover = max(failover, done[id])
			firstRun = max(firstRun, takenOver[id])
		}
		if runs != want {
			t.Errorf("task %s made by %s was run again %d times; want %d", id, by, runs, want)
		}
	}
	// The store down: a task call gets an error saying so within the
	// client's bound; a plain call is unaffected.
	var some string
	for id := range made {
		some = id
	}
	for i := range 3 {
		cl.Kill(i)
	}
	start := time.Now()
	hdr, body := nginxModernRequest(n, "tasks/get", map[string]any{"taskId": some}, tasksExt)
	r, err := c.sendWithin(bound, c.url, "POST", hdr, body)
	if err != nil {
		t.Fatalf("tasks/get with etcd down: %v after %v (bound %v)", err, time.Since(start), bound)
	}
	if m := r.final(t); m.Error == nil || !strings.Contains(m.Error.Message, "task store is unreachable") {
		t.Fatalf("tasks/get with etcd down: %s; want an error saying the task store is unreachable", r.body)
	}
	storeDown := time.Since(start)
	res, _ := call(n+1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
	if !strings.Contains(string(res["content"]), "hi") {
		t.Fatalf("a plain call with etcd down: %v", res)
	}
	t.Logf("etcd down: tasks/get answered with the store's error in %v", storeDown.Round(10*time.Millisecond))
	// The store back (its members' holds ran out meanwhile): the old task
	// is read again, and a new one is made and runs to its end.
	cl.Restart(0, 1, 2)
	back := time.Now()
	n += 2
	var fresh string
	for deadline := time.Now().Add(30 * time.Second); fresh == ""; n++ {
		if time.Now().After(deadline) {
			t.Fatal("etcd back for 30 s, and still no task could be made")
		}
		hdr, body := nginxModernRequest(n, "tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 200}}, tasksExt)
		if r, err := c.sendWithin(bound, c.url, "POST", hdr, body); err == nil {
			if m := r.final(t); m.Error == nil {
				var res map[string]json.RawMessage
				json.Unmarshal(m.Result, &res)
				json.Unmarshal(res["taskId"], &fresh)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if res, r := call(n, "tasks/get", map[string]any{"taskId": some}); string(res["status"]) != `"completed"` {
		t.Fatalf("a task made before the store went down, read after it came back: %s", r.final(t).Result)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		n++
		res, r := call(n, "tasks/get", map[string]any{"taskId": fresh})
		if string(res["status"]) == `"completed"` {
			break
		}
		if string(res["status"]) != `"working"` || time.Now().After(deadline) {
			t.Fatalf("a task made after the store came back: %s", r.final(t).Result)
		}
	}
	t.Logf("etcd back: a new task made and completed %v after its members answered again", time.Since(back).Round(10*time.Millisecond))
	t.Logf("9 tasks, 3 replicas, hold %s: replica a killed; its tasks run again by survivors within %v of the kill, completed within %v (sleep 2.5 s)",
		hold, firstRun.Round(10*time.Millisecond), failover.Round(10*time.Millisecond))
}

// The gateway variant: two gateways on one etcd (each with its own
// backend, mcprt serve, which knows no tasks: the gateway makes the
// task). A task made at one is read and awaited at the other; when the
// one running it is killed, the other fails it, saying its server was
// lost (a gateway's call is not resumable), rather than leave it working.
func TestEtcdGatewayReplicas(t *testing.T) {
	cl := etcdtest.Start(t, 1)
	f := newGateway(t)
	config := f.config(map[string]any{"ref": f.serve("ref", nil)})
	args := []string{"-tasks-etcd", strings.Join(cl.Endpoints(), ","), "-tasks-etcd-prefix", "gw/", "-tasks-etcd-hold", "1s"}
	g1 := f.startGatewayHTTP(config, append(args, "-http-session-tag", "g1")...)
	g2 := f.startGatewayHTTP(config, append(args, "-http-session-tag", "g2")...)
	ctx := testCtx(t)
	c1 := connectHTTP(t, g1.url, client.Options{Era: client.EraModern})
	c2 := connectHTTP(t, g2.url, client.Options{Era: client.EraModern})
	short, _, err := c1.CallToolTask(ctx, "ref__sleep", map[string]any{"ms": 500})
	if err != nil || short == nil {
		t.Fatalf("CallToolTask at g1: %v %v", short, err)
	}
	if got, err := c2.GetTask(ctx, short.ID); err != nil || got.Status != client.TaskWorking {
		t.Fatalf("g1's task read at g2: %+v %v", got, err)
	}
	if res, err := c2.AwaitTask(ctx, short, nil); err != nil || !strings.Contains(string(res), "slept") {
		t.Fatalf("g1's task awaited at g2: %s %v", res, err)
	}
	long, _, err := c1.CallToolTask(ctx, "ref__sleep", map[string]any{"ms": 60000})
	if err != nil || long == nil {
		t.Fatalf("CallToolTask at g1: %v %v", long, err)
	}
	g1.stop(syscall.SIGKILL)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got, err := c2.GetTask(ctx, long.ID)
		if err != nil {
			t.Fatalf("g1's task read at g2 after g1 died: %v", err)
		}
		if got.Status == client.TaskFailed && strings.Contains(got.StatusMessage, "its server was lost") {
			break
		}
		if got.Status != client.TaskWorking || time.Now().After(deadline) {
			t.Fatalf("g1's task after g1 died: %+v; want it failed, its server lost", got)
		}
	}
}

// mcprt chaos -tasks through nginx, in both eras at once, while each of
// three replicas on one etcd is killed with -9 in turn and started again
// on its address: every task the campaigns start ends in exactly one
// terminal state and is still known at the end (-task-durable), the
// legacy campaign's session is begun again when its replica dies, and
// nothing hangs.
func TestEtcdChaosTasksThroughNginx(t *testing.T) {
	nginxPath(t)
	cl := etcdtest.Start(t, 1)
	key := nginxKeyFile(t, "etcd")
	args := func(tag string) []string {
		return []string{"-http-session-tag", tag, "-http-state-key-file", key,
			"-tasks-etcd", strings.Join(cl.Endpoints(), ","), "-tasks-etcd-prefix", "chaos/",
			"-tasks-etcd-hold", "2s", "-tasks-etcd-timeout", "1s"}
	}
	tags := []string{"a", "b", "c"}
	replicas := make([]*nginxReplica, len(tags))
	for i, tag := range tags {
		replicas[i] = nginxStartReplica(t, tag, args(tag)...)
	}
	c := nginxStart(t, "nginx-etcd.conf", replicas...)

	type result struct {
		era string
		out []byte
		err error
	}
	results := make(chan result, 2)
	for i, era := range []string{"legacy", "modern"} {
		cmd := exec.Command(binPath, "chaos", "-tasks", "24", "-task-concurrency", "4", "-task-durable",
			"-seed", fmt.Sprint(7+i), "-era", era, "-url", c.url)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		go func() {
			out, err := cmd.CombinedOutput()
			results <- result{era, out, err}
		}()
	}
	// Each replica in turn: killed while tasks run, started again on its
	// address (nginx knows it there) before the next one goes.
	for i, tag := range tags {
		time.Sleep(1500 * time.Millisecond)
		replicas[i].kill(t)
		time.Sleep(1500 * time.Millisecond)
		replicas[i] = nginxStartReplicaAt(t, tag, replicas[i].addr, args(tag)...)
	}
	for range 2 {
		var r result
		select {
		case r = <-results:
		case <-time.After(3 * time.Minute):
			t.Fatal("a chaos campaign did not end within 3 minutes")
		}
		t.Logf("%s campaign:\n%s", r.era, r.out)
		if r.err != nil {
			t.Errorf("%s campaign through nginx: %v", r.era, r.err)
		}
		if !strings.Contains(string(r.out), "PASS") || !strings.Contains(string(r.out), "; 0 lost") {
			t.Errorf("%s campaign: want PASS with 0 lost", r.era)
		}
		if r.era == "legacy" && !strings.Contains(string(r.out), "new sessions") {
			t.Errorf("legacy campaign: its session's replica was killed, yet it never began another")
		}
	}
}
