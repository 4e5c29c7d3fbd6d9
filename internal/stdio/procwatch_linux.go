//go:build linux

package stdio

// The process-wide watcher of stdio servers on Linux: one goroutine starts
// every server and watches them all, so that an idle stdio connection
// costs no goroutine of its own (the SDK's reader aside).

import (
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A procWatcher starts stdio servers and watches them: their exits, through
// a pidfd each (readable once the process has exited), and their stderr,
// through its non-blocking read end, all in one epoll set, with an eventfd
// that says servers are waiting to be started.
type procWatcher struct {
	epfd int
	wake int // the eventfd: spawns are waiting

	mu      sync.Mutex
	spawns  []spawn                    // waiting to be started
	next    uint64                     // the last registration's id (0 is wake's)
	handles map[uint64]func(id uint64) // what an event of each registration runs
}

// A spawn asks the watcher to start p's command, which answers on done.
type spawn struct {
	p    *process
	done chan error // buffered
}

var (
	watcherOnce sync.Once
	watcher     *procWatcher // nil where pidfds or epoll are missing
)

// theWatcher returns the process's watcher, started on first use, or nil
// where the system cannot watch processes so (pidfd_open needs Linux 5.3):
// each server then gets a goroutine of its own (process.run).
func theWatcher() *procWatcher {
	watcherOnce.Do(func() {
		fd, err := unix.PidfdOpen(os.Getpid(), 0)
		if err != nil {
			return
		}
		unix.Close(fd)
		epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return
		}
		wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			unix.Close(epfd)
			return
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN} // id 0, level-triggered
		if unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wake, &ev) != nil {
			unix.Close(epfd)
			unix.Close(wake)
			return
		}
		watcher = &procWatcher{epfd: epfd, wake: wake, handles: map[uint64]func(uint64){}}
		go watcher.run()
	})
	return watcher
}

// Watched reports whether stdio servers are started and watched by the
// process-wide watcher, which it starts: an idle server then costs no
// goroutine of its own.
func Watched() bool { return theWatcher() != nil }

// start starts p's command on the watcher's thread.
func (w *procWatcher) start(p *process) error {
	done := make(chan error, 1)
	w.mu.Lock()
	w.spawns = append(w.spawns, spawn{p: p, done: done})
	w.mu.Unlock()
	var one [8]byte // an eventfd adds what is written to its counter
	binary.NativeEndian.PutUint64(one[:], 1)
	if _, err := unix.Write(w.wake, one[:]); err != nil {
		return err // cannot happen: the counter would have to reach 2⁶⁴-1
	}
	return <-done
}

// run waits for events and runs each registration's handler on a goroutine
// of its own, so that a handler (a stderr line to log, a reap) never holds
// up the other servers; it starts the servers waiting, on its own OS
// thread, locked to it for the life of the process: on Linux a server gets
// its death signal when the thread that started it ends (startInGroup),
// meant for the end of the adapter's process, and any other thread could
// be ended by the Go runtime while the server runs. (fork/exec is
// serialised process-wide anyway: syscall.ForkLock.)
func (w *procWatcher) run() {
	runtime.LockOSThread()
	events := make([]unix.EpollEvent, 32)
	for {
		n, err := unix.EpollWait(w.epfd, events, -1)
		if err != nil { // EINTR: nothing else can fail on a valid epoll fd
			continue
		}
		for _, ev := range events[:n] {
			id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if id == 0 {
				w.startWaiting()
				continue
			}
			w.mu.Lock()
			handle := w.handles[id]
			w.mu.Unlock()
			if handle != nil {
				go handle(id)
			}
		}
	}
}

// startWaiting starts the servers waiting to be started. It reads the
// eventfd before it takes them: a spawn queued later wakes run again.
func (w *procWatcher) startWaiting() {
	var count [8]byte
	unix.Read(w.wake, count[:])
	w.mu.Lock()
	spawns := w.spawns
	w.spawns = nil
	w.mu.Unlock()
	for _, s := range spawns {
		s.done <- s.p.cmd.Start()
	}
}

// add registers fd for one event (it is readable, or hung up), on which
// handle runs, given the registration's id; an EPOLL_CTL_MOD (ctl) asks
// for the next one.
// It returns the id.
func (w *procWatcher) add(fd int, handle func(id uint64)) (uint64, error) {
	w.mu.Lock()
	w.next++
	id := w.next
	w.handles[id] = handle
	w.mu.Unlock()
	if err := w.ctl(unix.EPOLL_CTL_ADD, fd, id); err != nil {
		w.forget(id)
		return 0, err
	}
	return id, nil
}

// ctl adds or modifies the one-shot registration id of fd.
func (w *procWatcher) ctl(op, fd int, id uint64) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLONESHOT, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
	return unix.EpollCtl(w.epfd, op, fd, &ev)
}

// forget drops the registration id, before its fd is closed (which takes
// the fd out of the epoll set).
func (w *procWatcher) forget(id uint64) {
	w.mu.Lock()
	delete(w.handles, id)
	w.mu.Unlock()
}

// startWatched starts p through the watcher, reporting false where there
// is none. The server's stderr goes to a pipe of the watcher's, read as it
// fills (watchedProc.drain); its exit is seen through a pidfd.
func startWatched(p *process) (bool, error) {
	w := theWatcher()
	if w == nil {
		return false, nil
	}
	wp := &watchedProc{w: w, p: p, stderrDone: make(chan struct{})}
	err := wp.start()
	if err != nil {
		p.err = err
		close(p.exited)
	}
	return true, err
}

// A watchedProc is a stdio server the watcher watches.
type watchedProc struct {
	w *procWatcher
	p *process

	mu         sync.Mutex    // guards stderr and stderrID
	stderr     int           // the read end of the server's stderr; -1 once closed
	stderrID   uint64        // its registration
	stderrDone chan struct{} // closed with stderr
}

// start starts the server and registers its stderr and its pidfd. A server
// that cannot be watched (out of file descriptors) is killed and reaped.
func (wp *watchedProc) start() error {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	wp.stderr = fds[0]
	stderrW := os.NewFile(uintptr(fds[1]), "stderr")
	if err := unix.SetNonblock(wp.stderr, true); err != nil {
		stderrW.Close()
		unix.Close(wp.stderr)
		return err
	}
	p := wp.p
	p.cmd.Stderr = stderrW
	err := wp.w.start(p)
	stderrW.Close() // the server's end
	if err != nil {
		unix.Close(wp.stderr)
		return err
	}
	wp.mu.Lock() // a drain may start before add returns
	wp.stderrID, err = wp.w.add(wp.stderr, wp.drain)
	wp.mu.Unlock()
	if err == nil {
		err = wp.watchExit()
	}
	if err != nil {
		// Reaped through the group, which ends the rest of it.
		p.cmd.Process.Kill()
		p.group.wait()
		wp.closeStderr()
		return err
	}
	return nil
}

// pidfdOpen is unix.PidfdOpen, which tests replace to fail.
var pidfdOpen = unix.PidfdOpen

// watchExit registers the server's pidfd, whose event is its exit.
func (wp *watchedProc) watchExit() error {
	pidfd, err := pidfdOpen(wp.p.cmd.Process.Pid, 0)
	if err != nil {
		return err
	}
	_, err = wp.w.add(pidfd, func(id uint64) {
		wp.w.forget(id)
		unix.Close(pidfd)
		wp.exited()
	})
	if err != nil {
		unix.Close(pidfd)
	}
	return err
}

// exited does what process.run does once the leader has exited: it
// ends the group and reaps the leader (at once: it has exited), and waits
// for the end of stderr, at most p.terminate when a grandchild that
// escaped the group holds it (os/exec's WaitDelay).
func (wp *watchedProc) exited() {
	p := wp.p
	p.err = p.group.wait()
	t := time.NewTimer(p.terminate)
	select {
	case <-wp.stderrDone:
	case <-t.C:
		wp.closeStderr()
	}
	t.Stop()
	p.exit()
}

// stderrBufs are the read buffers of drain, shared by every server: an
// idle one holds none.
var stderrBufs = sync.Pool{New: func() any { return new([stderrReadBytes]byte) }}

// drain reads what the server's stderr holds into its stderrLogger, then
// waits for more (or closes it at its end).
func (wp *watchedProc) drain(uint64) {
	buf := stderrBufs.Get().(*[stderrReadBytes]byte)
	defer stderrBufs.Put(buf)
	for {
		n, err := wp.read(buf[:])
		switch {
		case n > 0:
			wp.p.stderr.Write(buf[:n])
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.EAGAIN):
			if wp.rearm() == nil {
				return
			}
			wp.closeStderr()
			return
		default: // the end of stderr, or it was closed
			wp.closeStderr()
			return
		}
	}
}

// read reads from stderr, unless it was closed.
func (wp *watchedProc) read(buf []byte) (int, error) {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	if wp.stderr < 0 {
		return 0, os.ErrClosed
	}
	return unix.Read(wp.stderr, buf)
}

// rearm asks for stderr's next event, unless it was closed.
func (wp *watchedProc) rearm() error {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	if wp.stderr < 0 {
		return nil
	}
	return wp.w.ctl(unix.EPOLL_CTL_MOD, wp.stderr, wp.stderrID)
}

// closeStderr stops reading the server's stderr.
func (wp *watchedProc) closeStderr() {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	if wp.stderr < 0 {
		return
	}
	wp.w.forget(wp.stderrID)
	unix.Close(wp.stderr)
	wp.stderr = -1
	close(wp.stderrDone)
}
