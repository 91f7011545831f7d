//go:build dev

package devcmd

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// errExited: the process waited for exited before it became ready.
var errExited = errors.New("exited before becoming ready")

// waitReady polls a worker's http://addr/readyz until it answers 200. Each request is bounded
// by a one-second HTTP timeout, so a worker that accepts the connection but never answers
// cannot stall the caller past ctx. It gives up when ctx ends, or with errExited when exited
// (nil: never) is closed.
func waitReady(ctx context.Context, addr string, exited <-chan struct{}) error {
	client := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return errors.New("worker never became ready")
		case <-exited:
			return errExited
		case <-time.After(20 * time.Millisecond):
		}
	}
}
