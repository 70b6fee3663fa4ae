package gateway

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
)

const watchedURI = "test://watched-resource"

// conformance is a backend running mcprt's conformance fixture, whose
// tool test_update_watched_resource changes test://watched-resource and
// tells subscribers.
func conformance(name, protocol string) Backend {
	b := serve(name)
	b.Args = []string{"serve", "-fixture", "conformance"}
	b.Protocol = protocol
	b.Backoff = 10 * time.Millisecond
	return b
}

// updates collects the gateway server's resource updates.
func updates(t *testing.T, srv *handlers.Server) <-chan string {
	ch := make(chan string, 100)
	stop := srv.Watch(func(c handlers.Change) {
		if c.Kind == handlers.ResourceUpdated {
			ch <- c.URI
		}
	})
	t.Cleanup(stop)
	return ch
}

func wantUpdate(t *testing.T, ch <-chan string, uri string) {
	t.Helper()
	select {
	case got := <-ch:
		if got != uri {
			t.Fatalf("update of %q, want %q", got, uri)
		}
	case <-time.After(hang):
		t.Fatalf("no update of %s", uri)
	}
}

// A client's subscription is followed at the backend that offers the
// resource (legacy: resources/subscribe; 2026-07-28: its listen stream's
// resourceSubscriptions) while some client session follows it, its
// updates reach the gateway's server, and a restarted backend is made to
// follow it again.
func TestSubscriptionFollowsTheResource(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"legacy", "modern"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			g := start(t, conformance("c", protocol), serve("other"))
			srv := g.Server()
			ch := updates(t, srv)
			following := func(n int) func() bool { return func() bool { return g.state("c").Subscriptions == n } }

			srv.Subscription(watchedURI, true) // two client sessions
			srv.Subscription(watchedURI, true)
			waitFor(t, "the backend to follow the resource", following(1))
			wantUpdate(t, ch, watchedURI) // it may have changed before it was followed
			g.must("tools/call", `{"name":"c__test_update_watched_resource","arguments":{}}`)
			wantUpdate(t, ch, watchedURI)
			if st := g.state("other"); st.Subscriptions != 0 {
				t.Errorf("other follows: %+v", st)
			}

			// The backend comes back following it.
			pid := g.state("c").PID
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the backend to come back following it", func() bool {
				st := g.state("c")
				return st.PID != pid && st.State == Up && st.Subscriptions == 1
			})
			wantUpdate(t, ch, watchedURI) // the new process's content is news
			g.must("tools/call", `{"name":"c__test_update_watched_resource","arguments":{}}`)
			wantUpdate(t, ch, watchedURI)

			srv.Subscription(watchedURI, false) // one session still follows it
			if g.state("c").Subscriptions != 1 {
				t.Fatal("unfollowed while a session still follows it")
			}
			srv.Subscription(watchedURI, false)
			waitFor(t, "the backend to stop following it", following(0))
			select {
			case u := <-ch:
				t.Errorf("an update too many: %s", u)
			default:
			}
			if !strings.Contains(g.stderr.String(), "backend went away") {
				t.Errorf("no restart logged:\n%s", g.stderr.String())
			}
		})
	}
}

// A URI that no backend offers is followed by none; an unsubscribe
// without a subscribe is nothing.
func TestSubscriptionWithoutOwner(t *testing.T) {
	t.Parallel()
	g := start(t, serve("a"))
	g.Server().Subscription("test://nobody", false)
	g.Server().Subscription("test://nobody", true)
	g.Server().Subscription("mcprt://reference/greeting/Ada", true) // a template's
	waitFor(t, "a to follow the template's resource", func() bool { return g.state("a").Subscriptions == 1 })
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.subVia["test://nobody"] != nil || g.subs["test://nobody"] != 1 {
		t.Errorf("subs %v via %v", g.subs, g.subVia)
	}
}

// A client that subscribes before the backend that offers the resource is
// up (the gateway serves while backends still start) has it followed once
// the backend comes up and lists it.
func TestSubscriptionBeforeTheBackendIsUp(t *testing.T) {
	t.Parallel()
	g := unstarted(t, Options{}, conformance("c", "legacy"))
	g.Server().Subscription(watchedURI, true)
	g.start()
	waitFor(t, "the backend to follow the resource subscribed to before it was up", func() bool { return g.state("c").Subscriptions == 1 })
}
