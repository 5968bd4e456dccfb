// An object the server keeps only as long as the session that made it: a PropertyCollector
// (wait.ts; "when a session terminates, the associated PropertyCollector filters are automatically
// destroyed", vSphere Web Services API, vmodl.query.PropertyCollector) and a ContainerView
// (property.ts; "a view exists until you terminate it by calling the DestroyView method, or until
// the end of the session", vim.view.View). After a re-login (session.ts logs in again and replays
// the call) the server no longer knows it and says ManagedObjectNotFound for it. One place decides
// when such an object is made again:
//  - on first use, for the session's current login (its generation, session.ts);
//  - again when the session has logged in since it was made (the generation changed), or when
//    the server says ManagedObjectNotFound for it (a round-tripper that does not count logins: only
//    this).
import { isFault } from './fault.ts';
import type { MoRef, RoundTripper } from './soap.ts';

/** A round-tripper that counts its logins (session.ts Session): bumped at each Login. */
export interface Generational {
  readonly generation: number;
}

/** The login count of the session behind `rt`, or undefined when it does not count them. */
export function generationOf(rt: RoundTripper): number | undefined {
  const g = (rt as Partial<Generational>).generation;
  return typeof g === 'number' ? g : undefined;
}

/** Whether `err` is the server saying it does not know `ref` (its session was replaced). */
export function isGone(err: unknown, ref: MoRef): boolean {
  return isFault(err, 'ManagedObjectNotFound') && (err.details.detail.obj as MoRef | undefined)?.value === ref.value;
}

/** One made object: its reference (once made), the login it belongs to, and whether it is given up. */
export interface Scoped {
  readonly ref: Promise<MoRef>;
  /**
   * The session's generation when the object's reference came back (undefined until then, or when
   * the round-tripper does not count logins). Taken at the answer, not at the ask: a create sent
   * while a re-login is under way waits for it and belongs to the new login.
   */
  generation: number | undefined;
  retired: boolean;
}

export interface SessionScopedOptions {
  /** called once for each object given up (retired or of an earlier login), after the next was made */
  onRetire?(old: Scoped): void;
}

/** The current object of one kind on one session, made lazily and again after a re-login. */
export class SessionScoped {
  private cur: Scoped | undefined;

  constructor(
    private readonly rt: RoundTripper,
    private readonly make: () => Promise<MoRef>,
    private readonly opts: SessionScopedOptions = {},
  ) {}

  /** The object of the session's current login: made now when there is none, it was retired, or the session logged in since it was made. */
  current(): Scoped {
    const old = this.cur;
    if (old && !old.retired && (old.generation === undefined || old.generation === generationOf(this.rt))) return old;
    const s: Scoped = { ref: this.make(), generation: undefined, retired: false };
    s.ref.then(
      () => {
        s.generation = generationOf(this.rt);
      },
      () => {
        s.retired = true;
      },
    );
    this.cur = s;
    if (old && !old.retired) {
      old.retired = true;
      this.opts.onRetire?.(old);
    }
    return s;
  }

  /** Gives `s` up (the server no longer knows it); false when it already was. The next `current()` makes another. */
  retire(s: Scoped): boolean {
    if (s.retired) return false;
    s.retired = true;
    if (this.cur === s) this.cur = undefined;
    this.opts.onRetire?.(s);
    return true;
  }

  /**
   * `fn` with the current object; when the server says ManagedObjectNotFound for it (its session was
   * replaced while `fn` ran), the object is made again and `fn` run again, once.
   */
  async use<R>(fn: (ref: MoRef) => Promise<R>): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      const s = this.current();
      const ref = await s.ref;
      try {
        return await fn(ref);
      } catch (err) {
        if (!isGone(err, ref) || attempt >= 2) throw err;
        this.retire(s);
      }
    }
  }

  /** Destroys the current object with `destroy` (best effort: one made for a single use) and forgets it. */
  async destroy(destroy: (ref: MoRef) => Promise<void>): Promise<void> {
    const s = this.cur;
    this.cur = undefined;
    if (!s || s.retired) return;
    s.retired = true;
    const ref = await s.ref.catch(() => undefined);
    if (ref) await destroy(ref).catch(() => undefined);
  }
}
