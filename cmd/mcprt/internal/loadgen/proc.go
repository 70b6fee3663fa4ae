package loadgen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// proc is one server process with its three pipes. Every goroutine it
// starts (reaper, stderr drain, watchdog) is waited for by finish.
type proc struct {
	cmd     *exec.Cmd
	pid     int
	started time.Time

	in  *os.File // our end of the server's stdin
	out *os.File // our end of the server's stdout
	lr  *lineReader
	wd  *watchdog

	stderr  *headBuffer
	errFile *os.File
	errDone chan struct{}

	exited chan struct{} // closed once the process is reaped
	state  *os.ProcessState

	finishOnce sync.Once
	exitDesc   string
}

// spawn starts argv with pipes for its standard streams. A blocking read
// or write on them that makes no progress for timeout fails.
func spawn(argv, env []string, timeout time.Duration) (*proc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	p := &proc{
		cmd: cmd, in: inW, out: outR, errFile: errR,
		stderr: &headBuffer{max: 8 << 10}, errDone: make(chan struct{}), exited: make(chan struct{}),
	}
	p.started = time.Now()
	err = cmd.Start()
	// The child has its copies; ours would keep the pipes open after it dies
	// and hide its death from the reads.
	closeAll(inR, outW, errW)
	if err != nil {
		closeAll(inW, outR, errR)
		return nil, err
	}
	p.pid = cmd.Process.Pid
	p.wd = newWatchdog(timeout, outR, inW)
	p.lr = &lineReader{f: outR, wd: p.wd, buf: make([]byte, 64<<10)}
	go func() {
		defer close(p.errDone)
		p.stderr.drain(errR)
	}()
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	return p, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// send writes b in one Write call, as a client writes a message.
func (p *proc) send(b []byte) error {
	p.wd.begin(&p.wd.writing)
	_, err := p.in.Write(b)
	p.wd.end(&p.wd.writing)
	return p.ioError("writing to the server", err)
}

// ioError explains a failed read or write: a server that died, or one that
// stopped making progress.
func (p *proc) ioError(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case p.wd.fired.Load():
		return fmt.Errorf("%s: no progress for %v (use -timeout to wait longer)", op, p.wd.timeout)
	case errors.Is(err, io.EOF), errors.Is(err, syscall.EPIPE):
		if p.waitExit(time.Second) {
			return fmt.Errorf("%s: the server exited (%s)%s", op, p.describeExit(), p.stderrHint())
		}
		stream := "stdin"
		if errors.Is(err, io.EOF) {
			stream = "stdout"
		}
		return fmt.Errorf("%s: the server closed its %s%s", op, stream, p.stderrHint())
	}
	return fmt.Errorf("%s: %w", op, err)
}

func (p *proc) stderrHint() string {
	h := p.stderr.head(5)
	if h == "" {
		return ""
	}
	return "; its stderr began:\n" + h
}

func (p *proc) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

func (p *proc) describeExit() string {
	if p.state == nil {
		return "running"
	}
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by " + ws.Signal().String()
	}
	return "exit " + strconv.Itoa(p.state.ExitCode())
}

// finish closes the server's stdin, as a client that is done does, gives it
// grace to exit, kills it otherwise, and waits for every goroutine of p. It
// returns how the server ended.
func (p *proc) finish(grace time.Duration) string {
	p.finishOnce.Do(func() {
		p.in.Close()
		if !p.waitExit(grace) {
			_ = p.cmd.Process.Kill()
			<-p.exited
			p.exitDesc = fmt.Sprintf("did not exit within %v of stdin EOF (killed)", grace)
		} else {
			p.exitDesc = p.describeExit()
		}
		p.out.Close()
		p.wd.close()
		// A grandchild may still hold stderr open: do not wait for it long.
		select {
		case <-p.errDone:
		case <-time.After(100 * time.Millisecond):
			p.errFile.Close()
			<-p.errDone
		}
	})
	return p.exitDesc
}

// kill ends a server that failed, without grace.
func (p *proc) kill() string {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
	}
	return p.finish(time.Second)
}

// clockTick is USER_HZ, the unit of utime and stime in /proc/PID/stat. The
// kernel fixes it at 100 on every architecture Go supports.
const clockTick = 10 * time.Millisecond

// cpu returns the user+system CPU time the server has used so far, summed
// over its threads (10 ms resolution: phases must be long enough).
func (p *proc) cpu() (time.Duration, error) { return ProcCPU(p.pid) }

// ProcCPU is the user+system CPU time process pid has used so far, from
// /proc/PID/stat (Linux; 10 ms resolution).
func ProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces and parentheses: fields are counted
	// after its closing parenthesis, the last one on the line.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc stat format")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("unexpected /proc stat format")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("unexpected /proc stat format")
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// statusKiB returns a "kB" field of /proc/PID/status (VmRSS, VmHWM).
func (p *proc) statusKiB(key string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				break
			}
			return strconv.ParseInt(f[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", key, p.pid)
}

// watchdog fails reads and writes that make no progress for timeout. It
// costs the hot path two atomic stores per system call, where a deadline
// per call would cost a timer update each time.
type watchdog struct {
	timeout          time.Duration
	epoch            time.Time
	reading, writing atomic.Int64 // when the blocked call began (ns since epoch, +1); 0: none
	fired            atomic.Bool
	stop, done       chan struct{}
}

func newWatchdog(timeout time.Duration, r, w *os.File) *watchdog {
	wd := &watchdog{timeout: timeout, epoch: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	tick := min(max(timeout/8, 10*time.Millisecond), time.Second)
	go func() {
		defer close(wd.done)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-wd.stop:
				return
			case <-t.C:
			}
			now := int64(time.Since(wd.epoch)) + 1
			stuck := func(a *atomic.Int64) bool {
				s := a.Load()
				return s != 0 && time.Duration(now-s) > timeout
			}
			if stuck(&wd.reading) || stuck(&wd.writing) {
				wd.fired.Store(true)
				past := time.Unix(1, 0)
				_ = r.SetReadDeadline(past)
				_ = w.SetWriteDeadline(past)
				return
			}
		}
	}()
	return wd
}

func (wd *watchdog) begin(a *atomic.Int64) { a.Store(int64(time.Since(wd.epoch)) + 1) }
func (wd *watchdog) end(a *atomic.Int64)   { a.Store(0) }

func (wd *watchdog) close() {
	close(wd.stop)
	<-wd.done
}

// lineReader splits the server's stdout into lines. A line is valid until
// the next call; the buffer grows to hold the longest line seen.
type lineReader struct {
	f    *os.File
	wd   *watchdog
	buf  []byte
	r, w int // unread bytes are buf[r:w]
	scan int // buf[r:scan] is known to hold no '\n'
}

// next returns the next line without its line ending.
func (l *lineReader) next() ([]byte, error) {
	for {
		if i := bytes.IndexByte(l.buf[l.scan:l.w], '\n'); i >= 0 {
			end := l.scan + i
			line := l.buf[l.r:end]
			l.r, l.scan = end+1, end+1
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			return line, nil
		}
		l.scan = l.w
		if l.r == l.w {
			l.r, l.w, l.scan = 0, 0, 0
		}
		if l.w == len(l.buf) {
			if l.r > 0 {
				n := copy(l.buf, l.buf[l.r:l.w])
				l.scan -= l.r
				l.r, l.w = 0, n
			} else {
				nb := make([]byte, 2*len(l.buf))
				copy(nb, l.buf[:l.w])
				l.buf = nb
			}
		}
		l.wd.begin(&l.wd.reading)
		n, err := l.f.Read(l.buf[l.w:])
		l.wd.end(&l.wd.reading)
		l.w += n
		if err != nil && n == 0 {
			return nil, err
		}
	}
}

// ready reports whether a whole line is already buffered, so that next
// will not block.
func (l *lineReader) ready() bool {
	return bytes.IndexByte(l.buf[l.scan:l.w], '\n') >= 0
}

// headBuffer keeps the first max bytes written to a stream and drops the
// rest, so a chatty server never blocks on its stderr.
type headBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (h *headBuffer) drain(f *os.File) {
	buf := make([]byte, 16<<10)
	for {
		n, err := f.Read(buf)
		h.mu.Lock()
		if room := h.max - len(h.b); room > 0 {
			h.b = append(h.b, buf[:min(n, room)]...)
		}
		h.mu.Unlock()
		if err != nil {
			f.Close()
			return
		}
	}
}

// head returns up to n first lines, indented.
func (h *headBuffer) head(n int) string {
	h.mu.Lock()
	s := string(h.b)
	h.mu.Unlock()
	var out []string
	for line := range strings.Lines(s) {
		if line = strings.TrimRight(line, "\r\n"); strings.TrimSpace(line) == "" {
			continue
		}
		if out = append(out, "    "+line); len(out) == n {
			break
		}
	}
	return strings.Join(out, "\n")
}
