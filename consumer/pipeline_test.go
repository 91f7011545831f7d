package consumer

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestSubmitCancelledIsNotInFlight: a batch whose submit gives up (full queue, cancelled
// context) was never written, so it must not hold up commits or drains.
func TestSubmitCancelledIsNotInFlight(t *testing.T) {
	pl := &pipeline{queue: make(chan *outBatch), bytes: newByteGate(1<<20, nil)} // unbuffered, no writer: submit cannot enqueue
	pl.idle = sync.NewCond(&pl.mu)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := pl.submit(ctx, &outBatch{first: 5, through: 9, bytes: 100}); err == nil {
		t.Fatal("submit with a cancelled context and no room succeeded")
	}
	if inFlight, _, _ := pl.state(); inFlight {
		t.Error("the batch that was never queued counts as in flight")
	}
	if n := pl.bytes.held(); n != 0 {
		t.Errorf("the batch that was never queued holds %d bytes of the output budget", n)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer dcancel()
	if err := pl.drain(dctx); err != nil {
		t.Errorf("drain waits on a batch that was never queued: %v", err)
	}
}
