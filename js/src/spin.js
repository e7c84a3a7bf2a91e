// Short waits across the timeline worker, spun instead of slept (issue 32: one op's
// write + dispatch + read through the worker).
//
// A thread that waits for a message goes to sleep, and the message must wake it: on
// the 2-vCPU VM of docs/performance.md a wake-up across CPUs costs tens of us, and a
// one-op round trip through the worker pays two (the worker's, then the page's), most
// of what it costs over in-page execution. For a short window after it starts to wait,
// a thread here instead runs a chain of tasks of its own (messages to itself on a
// MessageChannel: its event loop keeps turning and takes the awaited message, or a
// frame or an input event, as soon as it is there), as thread pools spin before they
// park. Only in a loop of short waits:
// - a wait spins only if the one before it ended within the window: an inference of a
//   model, or a page's next frame, never spins, so a page at 60 fps or a model's
//   back-to-back inferences burn nothing;
// - only once such waits have gone on for SPIN_AFTER_MS without a pause: meanwhile V8
//   tiers the engine's wasm up for what the loop runs, and the start-up's own work
//   (storing the snapshot) ends, both on background threads that two spinning threads
//   starve on two cores (spinning from the first call, the first 400 one-op round trips
//   took 0.6-1.0 ms against 0.3-0.5 without; docs/performance.md);
// - never on one core, where the spin would take the time of the thread it waits for.

import { HARDWARE_CONCURRENCY } from './config.js';
import { SavedMessageChannel, now, savedPortPostMessage } from './intrinsics.js';

const SPIN_AFTER_MS = 1000;
// A wait, or a gap between two, this long ends a loop.
const LOOP_PAUSE_MS = 50;

// The window a thread here may spin for, as configured (WEBNN_POLYFILL_CONFIG.timelineSpinMs).
// The page's decides the worker's too (timeline.js hands it over).
export function spinWindowMs(configured) {
  const can = HARDWARE_CONCURRENCY > 1 && SavedMessageChannel && savedPortPostMessage;
  return can && configured > 0 ? configured : 0;
}

export class Spinner {
  // `windowMs`: how long a wait may spin (0: never); `stillWaiting()`: false once what
  // the wait is for has come (a spin stops there even before end() is called).
  constructor(windowMs, stillWaiting) {
    this.windowMs = spinWindowMs(windowMs);
    this.stillWaiting = stillWaiting;
    this.since = null;  // when the wait in progress began
    this.lastWaitMs = Infinity;  // how long the last wait took
    this.lastEnd = -Infinity;  // when it ended
    this.loopSince = null;  // when the current loop of waits began
    this.spinThisWait = false;
    this.spinning = false;  // a tick is on its way
    this.port = null;
    this.stats = { waits: 0, spun: 0, caught: 0 };  // waits, those that spun, those a spin caught
  }

  // engineStats.timeline.spins(): {windowMs, waits, spun, caught}.
  report() {
    return { windowMs: this.windowMs, ...this.stats };
  }

  // The thread waits from now (already waiting: nothing changes).
  begin() {
    if (this.since !== null) return;
    const t = now();
    this.since = t;
    this.stats.waits++;
    if (this.loopSince === null || t - this.lastEnd >= LOOP_PAUSE_MS) this.loopSince = t;
    this.spinThisWait = this.windowMs > 0 && this.lastWaitMs <= this.windowMs && t - this.loopSince >= SPIN_AFTER_MS;
    if (!this.spinThisWait) return;
    this.stats.spun++;
    if (!this.spinning) {
      this.spinning = true;
      this.tick();
    }
  }

  // What it waited for has come.
  end() {
    if (this.since === null) return;
    const t = now();
    this.lastWaitMs = t - this.since;
    this.lastEnd = t;
    if (this.lastWaitMs >= LOOP_PAUSE_MS) this.loopSince = null;
    this.since = null;
    if (this.spinThisWait && this.spinning) this.stats.caught++;
  }

  tick() {
    if (!this.port) {
      const channel = new SavedMessageChannel();
      channel.port1.onmessage = () => this.spin();
      this.port = channel.port2;
    }
    savedPortPostMessage(this.port, null);
  }

  spin() {
    if (this.since !== null && this.spinThisWait && this.stillWaiting() && now() - this.since < this.windowMs) this.tick();
    else this.spinning = false;
  }
}
