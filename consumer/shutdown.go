package consumer

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrShutdownIncomplete is wrapped by Run's error when a stop could not deliver and commit
// everything within ShutdownTimeout (typically: the output topic refused writes). Nothing is
// lost — the next owner replays from the last commit — but the exit is not clean, and the
// operator should know before relying on it.
var ErrShutdownIncomplete = errors.New("shutdown incomplete")

// unclean accumulates, over the partitions' shutdowns, what a stop left undelivered.
type unclean struct {
	mu          sync.Mutex
	partitions  int
	unacked     int
	uncommitted int64
}

func (u *unclean) add(unacked int, uncommitted int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.partitions++
	u.unacked += unacked
	u.uncommitted += max(uncommitted, 0)
}

// err is nil after a clean stop, else an error wrapping ErrShutdownIncomplete that says how
// much was left.
func (u *unclean) err(timeout time.Duration) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.partitions == 0 {
		return nil
	}
	return fmt.Errorf("consumer: %w: %d partition(s) not committed within DISTFEAT_SHUTDOWN_TIMEOUT=%s: %d output message(s) unacknowledged, %d processed input record(s) above the committed offsets will be replayed by the next owner",
		ErrShutdownIncomplete, u.partitions, timeout, u.unacked, u.uncommitted)
}
