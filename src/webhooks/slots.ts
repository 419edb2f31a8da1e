/**
 * Who may send a webhook now. Three bounds, so that a receiver that hangs holds up only its
 * own deliveries:
 *
 * - `concurrency` slots for attempts under way. An attempt whose receiver has not answered
 *   within `slowAfterMs` gives its slot back and goes on as a slow attempt: it costs a socket
 *   and a timer until it ends (its `timeoutMs` bounds it), not a slot, so receivers that hang
 *   cannot take all the slots, whatever their number.
 * - `maxSlow`: slow attempts open at once, across targets. Past it, a slow attempt keeps its
 *   slot until it ends.
 * - `perTarget`: attempts open at once (slow ones included) to one target, a receiver's origin
 *   (`scheme://host:port`). A target at its limit is busy: its deliveries are not claimed
 *   (`busyTargets`) until one of its attempts ends.
 *
 * A target whose attempt went slow is remembered as slow (for `SLOW_MEMORY_MS`, or until one
 * of its attempts is answered in time): its next attempts start slow, without a slot, so
 * receivers that keep hanging cost the slots nothing on their retries either. While the slow
 * attempts are at `maxSlow`, the slow targets are busy.
 *
 * Retries wait in storage (their next attempt time), never here.
 */
export interface SlotLimits {
  concurrency: number;
  perTarget: number;
  maxSlow: number;
  slowAfterMs: number;
}

/** An attempt's hold on a slot and its target: `release` once, when the attempt ends. */
export interface Slot {
  release(): void;
}

/** How long a target stays known as slow after its last attempt went slow. */
const SLOW_MEMORY_MS = 10 * 60_000;
/** Targets remembered as slow at most (the oldest forgotten first). */
const SLOW_MEMORY_TARGETS = 10_000;

export class DeliverySlots {
  readonly #limits: SlotLimits;
  /** Called whenever room opens (a slot given back, a target no longer busy). */
  readonly #onRoom: () => void;
  #fast = 0;
  #slow = 0;
  readonly #perTarget = new Map<string, number>();
  /** Targets known as slow, with when that is forgotten, oldest first. */
  readonly #slowTargets = new Map<string, number>();

  constructor(limits: SlotLimits, onRoom: () => void) {
    this.#limits = limits;
    this.#onRoom = onRoom;
  }

  /** How many more attempts may start now. */
  room(): number {
    return Math.max(0, this.#limits.concurrency - this.#fast);
  }

  /** Targets at their limit: deliveries to them are left in storage for now. */
  busyTargets(): string[] {
    const busy = new Set<string>();
    for (const [target, open] of this.#perTarget) {
      if (open >= this.#limits.perTarget) busy.add(target);
    }
    if (this.#slow >= this.#limits.maxSlow) {
      for (const target of this.#slowTargets.keys()) {
        if (this.#isSlow(target)) busy.add(target);
      }
    }
    return [...busy];
  }

  /** Attempts open now: those in a slot, and slow ones. */
  get open(): { fast: number; slow: number } {
    return { fast: this.#fast, slow: this.#slow };
  }

  /**
   * A hold for an attempt to `target`: a slot, or a slow place for a target known as slow;
   * null when the target is busy or there is no room.
   */
  take(target: string): Slot | null {
    const open = this.#perTarget.get(target) ?? 0;
    if (open >= this.#limits.perTarget) return null;
    let slow = this.#isSlow(target);
    if (slow ? this.#slow >= this.#limits.maxSlow : this.room() === 0) return null;
    this.#perTarget.set(target, open + 1);
    if (slow) this.#slow++;
    else this.#fast++;
    let released = false;
    let unanswered = false;
    // A timer the hold keeps: it moves an unanswered attempt out of its slot, however long it
    // then lasts, and marks its target slow.
    const timer = setTimeout(() => {
      if (released) return;
      unanswered = true;
      this.#markSlow(target);
      if (slow || this.#slow >= this.#limits.maxSlow) return;
      slow = true;
      this.#fast--;
      this.#slow++;
      this.#onRoom();
    }, this.#limits.slowAfterMs);
    timer.unref();
    return {
      release: () => {
        if (released) return;
        released = true;
        clearTimeout(timer);
        // Answered in time: the target is not slow (any more).
        if (!unanswered) this.#slowTargets.delete(target);
        if (slow) this.#slow--;
        else this.#fast--;
        const left = (this.#perTarget.get(target) ?? 1) - 1;
        if (left === 0) this.#perTarget.delete(target);
        else this.#perTarget.set(target, left);
        this.#onRoom();
      },
    };
  }

  #isSlow(target: string): boolean {
    const until = this.#slowTargets.get(target);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.#slowTargets.delete(target);
    return false;
  }

  #markSlow(target: string): void {
    this.#slowTargets.delete(target);
    this.#slowTargets.set(target, Date.now() + SLOW_MEMORY_MS);
    if (this.#slowTargets.size > SLOW_MEMORY_TARGETS) {
      const oldest = this.#slowTargets.keys().next().value;
      if (oldest !== undefined) this.#slowTargets.delete(oldest);
    }
  }
}

/** The target a delivery's attempts count against: its URL's origin. */
export function targetOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
