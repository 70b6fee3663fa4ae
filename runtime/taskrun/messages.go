package taskrun

// The statusMessage of tasks the manager settles when it starts, or takes
// over from a lost replica (tasks.RestartedMessage is the plain case).

// resumedMessage is the statusMessage of a task of a resumable tool that
// a new server on the store runs again after a restart.
const resumedMessage = "the server restarted while the task was running; its call was run again"

// resumedAgainMessage is the statusMessage of a task of a resumable tool
// that was run again once after a restart and whose server stopped again
// before it finished: it is failed, not run a third time.
const resumedAgainMessage = "the server restarted again while the task, already run again once after a restart, was running; its work was lost"

// lostMessage is the statusMessage of a task whose server was lost (a
// replica sharing its store with others died, or lost the store, while
// the task ran there) and that another replica failed, taking it over.
const lostMessage = "its server was lost while the task was running; its work was lost"

// lostResumedMessage is the statusMessage of a task of a resumable tool
// whose server was lost and that another replica runs again.
const lostResumedMessage = "its server was lost while the task was running; its call was run again by another server"
