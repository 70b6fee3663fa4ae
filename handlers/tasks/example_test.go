package tasks_test

import (
	"fmt"
	"os"

	"github.com/mcprt/mcprt/handlers/tasks"
)

// The journal is the durable Store: what was Put before Close is there
// when the directory is opened again (by the next process on it; the
// runtime opens it for a server given a tasks directory).
func ExampleOpenJournal() {
	dir, err := os.MkdirTemp("", "tasks")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	j, err := tasks.OpenJournal(dir, tasks.JournalOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	j.Put(tasks.Task{ID: "t1", Tool: "report", Status: tasks.Working})
	j.Put(tasks.Task{ID: "t1", Tool: "report", Status: tasks.Completed})
	j.Close()

	j, err = tasks.OpenJournal(dir, tasks.JournalOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer j.Close()
	t, ok, err := j.Get("t1")
	fmt.Println(t.ID, t.Status, ok, err)
	// Output:
	// t1 completed true <nil>
}
