package main

// Holds: a barrier a test controls, where a delay or a slow task would make it guess a duration.
// POST /_harness/hold {"method":"ModifyListView"} holds the calls of that method that arrive from now
// on: each is logged and counted, its session checked, then it waits until POST /_harness/release
// {"method":…} (nothing executed before). {"method":"ReconfigVM_Task","task":true} holds its tasks
// instead: the call runs and is answered, but its task reports `running` (progress 0) until released,
// then its real outcome (taskEnd in the call log), as slow-task does after a time. A release lets
// every held call and task of the method go on and ends the hold; reset and the harness's exit release
// everything. A lab facility for tests: nothing like it exists on a vCenter.

import (
	"fmt"
	"strings"
)

// holdState is guarded by harness.mu.
type holdState struct {
	// method → closed on release: held calls wait for it
	calls map[string]chan struct{}
	// methods whose tasks are held, and the finish of each task held so far
	tasks    map[string]bool
	finishes map[string][]func()
	// calls waiting at a gate now, by method
	waiting map[string]int
}

func newHoldState() holdState {
	return holdState{calls: map[string]chan struct{}{}, tasks: map[string]bool{}, finishes: map[string][]func(){}, waiting: map[string]int{}}
}

// waitAtGate holds a call of `method` while its method is held (marked held in the call log).
func (h *harness) waitAtGate(method string, entry *callEntry) {
	h.mu.Lock()
	gate := h.holds.calls[method]
	if gate != nil {
		entry.Held = true
		h.holds.waiting[method]++
	}
	h.mu.Unlock()
	if gate == nil {
		return
	}
	<-gate
	h.mu.Lock()
	h.holds.waiting[method]--
	h.mu.Unlock()
}

// holdTask keeps a task that was rewound to running until release; false when its method is not
// held (any more), and the caller finishes it as slow-task does.
func (h *harness) holdTask(method string, entry *callEntry, finish func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.holds.tasks[method] {
		return false
	}
	entry.Held = true
	h.holds.finishes[method] = append(h.holds.finishes[method], finish)
	return true
}

func (h *harness) tasksHeld(method string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.holds.tasks[method]
}

// hold starts holding the calls (or tasks) of a method.
func (h *harness) hold(method string, task bool) error {
	if method == "" {
		return fmt.Errorf("/_harness/hold needs \"method\"")
	}
	if task && !strings.HasSuffix(method, "_Task") {
		return fmt.Errorf("/_harness/hold: %q is not a *_Task method (\"task\": true holds tasks)", method)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if task {
		h.holds.tasks[method] = true
	} else if h.holds.calls[method] == nil {
		h.holds.calls[method] = make(chan struct{})
	}
	return nil
}

// release lets the held calls and tasks of `method` (every method when "") go on and ends their
// holds; returns how many calls and tasks it let go.
func (h *harness) release(method string) (calls, tasks int) {
	h.mu.Lock()
	var gates []chan struct{}
	var finishes []func()
	for m, g := range h.holds.calls {
		if method == "" || m == method {
			gates = append(gates, g)
			delete(h.holds.calls, m)
		}
	}
	for m := range h.holds.tasks {
		if method == "" || m == method {
			delete(h.holds.tasks, m)
		}
	}
	for m, f := range h.holds.finishes {
		if method == "" || m == method {
			finishes = append(finishes, f...)
			delete(h.holds.finishes, m)
		}
	}
	for m, n := range h.holds.waiting {
		if method == "" || m == method {
			calls += n
		}
	}
	h.mu.Unlock()
	for _, g := range gates {
		close(g)
	}
	// outside the lock: a finish takes it to stamp taskEnd
	for _, f := range finishes {
		f()
	}
	return calls, len(finishes)
}
