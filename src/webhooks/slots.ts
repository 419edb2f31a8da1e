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

export class DeliverySlots {
  readonly #limits: SlotLimits;
  /** Called whenever room opens (a slot given back, a target no longer busy). */
  readonly #onRoom: () => void;
  #fast = 0;
  #slow = 0;
  readonly #perTarget = new Map<string, number>();

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
    const busy: string[] = [];
    for (const [target, open] of this.#perTarget) {
      if (open >= this.#limits.perTarget) busy.push(target);
    }
    return busy;
  }

  /** Attempts open now: those in a slot, and slow ones. */
  get open(): { fast: number; slow: number } {
    return { fast: this.#fast, slow: this.#slow };
  }

  /** A slot for an attempt to `target`, or null when the target is busy (or no slot is free). */
  take(target: string): Slot | null {
    const open = this.#perTarget.get(target) ?? 0;
    if (open >= this.#limits.perTarget || this.room() === 0) return null;
    this.#perTarget.set(target, open + 1);
    this.#fast++;
    let slow = false;
    let released = false;
    // A timer the slot holds: it moves the attempt out of its slot however long it then lasts.
    const timer = setTimeout(() => {
      if (released || this.#slow >= this.#limits.maxSlow) return;
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
        if (slow) this.#slow--;
        else this.#fast--;
        const left = (this.#perTarget.get(target) ?? 1) - 1;
        if (left === 0) this.#perTarget.delete(target);
        else this.#perTarget.set(target, left);
        this.#onRoom();
      },
    };
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
