package runtime

import (
	"context"
	"log/slog"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/handlers/tasks/etcdstore"
	"github.com/mcprt/mcprt/runtime/taskrun"
)

// TasksOptions turn on tasks: tool calls that outlive their request (see
// handlers.Server.ServeTasks and the package handlers/tasks).
type TasksOptions struct {
	// Dir, when set, is where the journal lives: every change of a task is
	// appended there and fsync'd, so completed results survive a crash or
	// a redeploy, and tasks that were running are failed, with the
	// reason, when the server starts again. One process at a time: the
	// directory is locked, and a second server on it fails to start.
	// "": tasks live in memory only, and a restart forgets them.
	Dir string
	// Etcd, when set, keeps the tasks in etcd instead, shared by the
	// replicas that name the same endpoints and prefix: any of them
	// answers for any task, and the tasks of one lost are taken over by
	// another (see handlers/tasks/etcdstore). Not with Dir.
	Etcd *etcdstore.Options
	// Tag prefixes task ids (the replica's -http-session-tag).
	Tag string
	// MaxLive and MaxLivePerOwner bound the tasks in progress, overall and
	// per client (by default the caller, else the connection's address);
	// MaxEndedPerClient bounds the ended tasks a client keeps, its oldest
	// deleted past it; TTL is how long a task is kept when the client asks
	// for no ttl, MaxTTL the most it may ask (0: the taskrun defaults).
	MaxLive, MaxLivePerOwner, MaxEndedPerClient int
	TTL, MaxTTL                                 time.Duration
	// Owner names whom a request's tasks belong to (nil: the caller, or
	// else "": the task id alone), and Client what they count against
	// (nil: the caller, else the connection's address); see
	// handlers.TasksOptions.
	Owner, Client func(ctx context.Context) string
	Logger        *slog.Logger
	// Made, when set, is given the manager once it is made, before it
	// serves: a status page or a metrics endpoint reads its Counts.
	Made func(*taskrun.Manager)
}

// StartTasks starts a tasks manager on e (nil: an engine of its own) and
// has srv serve tasks with it, its tree a root of its own. The caller
// stops it (Manager.Stop) after the server has stopped. Serve does not use
// it: with Options.Tasks the manager is a child of the process's one tree.
func StartTasks(e *actor.Engine, srv *handlers.Server, o TasksOptions) (*taskrun.Manager, error) {
	return makeTasks(srv, o, func(c taskrun.Config) (*taskrun.Manager, error) { return taskrun.Start(e, c) })
}

// newTasks is StartTasks with nothing started: the manager is a Part of
// Serve's tree.
func newTasks(srv *handlers.Server, o TasksOptions) (*taskrun.Manager, error) {
	return makeTasks(srv, o, taskrun.New)
}

func makeTasks(srv *handlers.Server, o TasksOptions, mk func(taskrun.Config) (*taskrun.Manager, error)) (*taskrun.Manager, error) {
	var store tasks.Store
	if o.Etcd != nil {
		eo := *o.Etcd
		if eo.Logger == nil {
			eo.Logger = o.Logger
		}
		if eo.Name == "" {
			eo.Name = o.Tag
		}
		s, err := etcdstore.Open(eo)
		if err != nil {
			return nil, err
		}
		store = s
	}
	if o.Dir != "" && store == nil {
		j, err := tasks.OpenJournal(o.Dir, tasks.JournalOptions{Logger: o.Logger})
		if err != nil {
			return nil, err
		}
		store = j
	}
	m, err := mk(taskrun.Config{Store: store, Tag: o.Tag, MaxLive: o.MaxLive, MaxLivePerOwner: o.MaxLivePerOwner,
		MaxEndedPerClient: o.MaxEndedPerClient, TTL: o.TTL, MaxTTL: o.MaxTTL, Logger: o.Logger})
	if err != nil {
		if store != nil {
			store.Close()
		}
		return nil, err
	}
	srv.ServeTasks(m, handlers.TasksOptions{Owner: o.Owner, Client: o.Client})
	if o.Made != nil {
		o.Made(m)
	}
	return m, nil
}
