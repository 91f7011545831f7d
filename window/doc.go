// Package window groups the point batches of one Kafka partition into windows per set and
// decides when each window closes (docs/windows.md). It is pure: no Kafka, no embedding import, no
// goroutines. It is generic over the per-window state, a mergeable Sketch, so it is tested with
// a tiny fake sketch and used in production with *embedding.Sketch.
//
// # Modes
//
//   - set: one window per set, closed by an input with End (after adding its points), by the
//     idle timeout, or by eviction.
//   - count: windows of Size points of a set's point sequence, sliding by Hop (default Size).
//     Window k holds the set's points [k·Hop, k·Hop+Size). Points are kept in panes of
//     gcd(Size, Hop) points, so each point touches one pane and a closing window merges its
//     panes; an input is split at pane boundaries, so one record's points may land in several
//     windows. End (after adding its points) emits the set's earliest incomplete window if it
//     holds a point no emitted window holds (for tumbling windows: the partial window, if not
//     empty), with reason "end", discards the set's other (overlapping, hence redundant)
//     partial windows and restarts the set's point sequence at 0. Idle expiry and eviction do
//     the same with their own reasons.
//   - time: event-time windows [k·Hop, k·Hop+Size) per set, in panes of gcd(Size, Hop) ms. The
//     partition's watermark is the largest event time seen minus AllowedLateness; window k
//     closes (reason "watermark") once the watermark is ≥ k·Hop+Size, in order of window end
//     (ties by set). End has no effect in this mode: boundaries are a function of event time.
//   - session: per set, a session holds points whose event times are chained by gaps < Gap;
//     a point within Gap of two sessions merges them. A session closes when the watermark is
//     ≥ its last event time + Gap (reason "gap"), or by End, which closes all of the set's
//     sessions.
//
// # Late data
//
// In time mode an input is late when the earliest window that contains its event time has
// already closed (watermark ≥ that window's end, or the set's windows were closed early by
// idle expiry or eviction). For hopping windows this means an input whose windows are partly
// closed and partly open is late as a whole: nothing of it is added, so a window never holds a
// point its predecessor lacks by accident of arrival time. In session mode an input is late
// when t + Gap ≤ watermark, i.e. a session made of it alone would already have closed; this
// covers every point that falls inside or before a closed session. (A point less than Gap
// after a closed session's last point, and itself on time, starts a new session: emitted
// sessions are never reopened.) Add returns an error wrapping ErrLate for a late input and
// changes nothing: the caller dead-letters it. Late inputs do not advance the watermark.
//
// # Watermark
//
// Only inputs with points advance the watermark (max event time seen − AllowedLateness).
//
// # Seq
//
// Seq is replay-stable (docs/CONTRACTS.md): in time mode it is the window number k =
// floor(start/Hop), converted to uint64 (two's complement for windows starting before the
// epoch), or a reopen id (see Capacity and expiry); otherwise it is FirstOffset<<20 | the ordinal, within its record, of the window's
// first point (Input.Index plus the point's position in the batch).
//
// # Capacity and expiry
//
// Open windows are bounded by MaxOpen. When an input would open windows beyond it, the least
// recently updated sets (other than the input's set) are closed first with reason "evicted":
// all of their windows are emitted as they are, nothing is dropped. Eviction is the expiry
// policy under memory pressure; the idle timeout (Expire) is the one under low traffic. Both
// close a set's windows as a whole, in the same way End does in set, count and session modes.
// In time mode, windows closed early by eviction or expiry leave a small per-set tombstone
// (set name and window number) until the watermark passes them, so that a later input for
// such a window is late instead of re-opening a window with an already used Seq. Tombstones
// are bounded: at most 16 × MaxOpen per partition. Beyond that the tombstone with the
// earliest window end (then the oldest) is forgotten and only the highest forgotten window
// number F is kept. While F is set (until the watermark passes window F's end), a set that
// opens state without a tombstone — a new set, or one whose tombstone was forgotten — gives
// its windows ≤ F a reopen id instead of the window number: the top bit set and 63 bits of a
// hash of (window number, offset and point index of the input that opened the state). Such a
// window has the usual time bounds and all of its points; its id is new, so no (set, Seq) is
// ever emitted twice with different contents (up to a 2⁻⁶³ hash collision per pair).
//
// Set and count modes keep at most ceil(Size/Hop) windows per set, and Config.Validate
// requires MaxOpen to be at least that, so Open() ≤ MaxOpen always holds there. In time and
// session modes a single set can hold several windows at once (hopping windows, out-of-order
// points); the input's own set is never evicted to make room for it, so one set with more
// windows than MaxOpen can exceed the bound.
//
// # Commits and replay
//
// SafeOffset, Checkpoint and Restore implement the contract in docs/CONTRACTS.md. In set and
// count modes the cut is a clean cut that no window crosses; replaying from it rebuilds
// identical windows, and windows that had closed before the checkpoint are emitted again,
// identically (consumers dedupe by window-id). In time and session modes the cut is the
// first offset of the oldest still-open pane; the checkpoint carries the watermark at the cut
// and at the checkpoint, so replay reconstructs the original run's watermark record by
// record: late decisions and closings are the same, records whose windows had all closed are
// skipped, and windows closed (or records dead-lettered) before the checkpoint are not
// emitted (or reported) again.
//
// Idle expiry by Expire is processing-time and therefore outside this guarantee. ExpireDue and
// CloseMarker bring it inside: ExpireDue only asks for a close marker, the caller appends it
// to the input partition, and CloseMarker closes the set's windows where the marker sits in
// the log, by a rule that reads only the log (the set has windows and got no points after
// the request's offset), so a replay decides the same. In time mode the tombstone a close
// leaves keeps the cut at or below the first record of the windows it closed while it lives
// (and while records judged with it are after the cut), so a replay rebuilds it. Eviction is
// inside the guarantee in set and count modes, and outside it in time and session modes,
// where which windows a replay must evict depends on windows that opened before the cut (and
// so is the reopen-id rule, which forgetting tombstones beyond the bound starts).
//
// A Manager serves one partition from one goroutine; it is not safe for concurrent use.
package window
