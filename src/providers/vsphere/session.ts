// A logged-in session over one SoapClient. Every call goes through `roundTrip`, which turns SOAP
// faults into VsphereFault and, on NotAuthenticated, logs in again once and replays the call.
// Re-login is single-flight: concurrent calls that hit an expired session share one Login. Below
// it, every call goes through the retry decorator (retrying.ts): a busy fault or a dropped
// connection is replayed there when replaying cannot do anything twice.
import { fromSoapFault, isNotAuthenticated, VsphereClientError } from './fault.ts';
import { login, logout, retrieveServiceContent, type RoundTripper } from './methods.ts';
import type { Generational } from './session-scoped.ts';
import { retryingRoundTrips, ROUND_TRIP_RETRY, type RoundTripRetry } from './retrying.ts';
import { SoapFault, type MoRef, type SoapClient, type SoapValue, type XmlNode } from './soap.ts';
import type { ServiceContent, UserSession } from './types.ts';

const NO_REPLAY = new Set(['Login', 'Logout', 'LoginByToken', 'LoginExtensionByCertificate', 'RetrieveServiceContent']);

export interface SessionEvents {
  /** called after a transparent re-login (for logs; carries no secret) */
  onRelogin?(info: { method: string; host: string }): void;
  /** called before the round-tripper replays a call (busy fault, dropped connection); no secret */
  onRetry?(info: { method: string; host: string; attempt: number; reason: string }): void;
  /** the round-trip retry policy (tests shorten it) */
  roundTripRetry?: Omit<RoundTripRetry, 'onRetry'>;
}

/**
 * An expired session can also surface as HTTP 200 with NotAuthenticated in every
 * ObjectContent.missingSet (RetrievePropertiesEx) instead of a top-level fault.
 */
function missingSetNotAuthenticated(resp: XmlNode): boolean {
  const contents = resp.children.flatMap((rv) => [rv, ...rv.children.filter((c) => c.name === 'objects')]);
  return contents.some((oc) =>
    oc.children.some(
      (ms) =>
        ms.name === 'missingSet' &&
        ms.children.find((c) => c.name === 'fault')?.children.find((c) => c.name === 'fault')?.xsiType?.local === 'NotAuthenticated',
    ),
  );
}

export class Session implements RoundTripper, Generational {
  serviceContent!: ServiceContent;
  userSession: UserSession | undefined;
  private logins = 0;
  private relogin: Promise<void> | undefined;
  private loggedIn = false;
  /** the SOAP client behind the retry decorator */
  private readonly rt: RoundTripper;

  constructor(
    readonly soap: SoapClient,
    private readonly credentials: { username: string; password: string },
    private readonly events: SessionEvents = {},
  ) {
    this.rt = retryingRoundTrips(soap, { ...(events.roundTripRetry ?? ROUND_TRIP_RETRY), onRetry: (i) => events.onRetry?.({ ...i, host: soap.host }) });
  }

  get host(): string {
    return this.soap.host;
  }

  /**
   * How many times this session logged in: bumped at each Login (the first and every re-login).
   * What the server made for the session before a re-login is gone with it (session-scoped.ts).
   */
  get generation(): number {
    return this.logins;
  }

  /** RetrieveServiceContent + Login. */
  async open(): Promise<void> {
    this.serviceContent = await this.raw('RetrieveServiceContent', () => retrieveServiceContent(this.rawRt));
    await this.doLogin();
  }

  private readonly rawRt: RoundTripper = {
    roundTrip: (method, thisRef, params) => this.rt.roundTrip(method, thisRef, params),
  };

  private async raw<R>(method: string, fn: () => Promise<R>): Promise<R> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof SoapFault) throw fromSoapFault(err, this.host);
      throw err;
    }
  }

  private async doLogin(): Promise<void> {
    const sm = this.serviceContent.sessionManager;
    if (!sm) throw new VsphereClientError('unsupported', `${this.host} has no SessionManager`, { method: 'Login', host: this.host });
    this.soap.clearSession();
    this.userSession = await this.raw('Login', () => login(this.rawRt, sm, this.credentials.username, this.credentials.password));
    this.loggedIn = true;
    this.logins++;
  }

  private async reloginOnce(seenGeneration: number): Promise<void> {
    // Someone else already replaced the session we saw fail: just replay.
    if (seenGeneration !== this.generation) return;
    if (!this.relogin) {
      this.relogin = this.doLogin().finally(() => {
        this.relogin = undefined;
      });
    }
    await this.relogin;
  }

  async roundTrip(method: string, thisRef: MoRef, params: Array<[string, SoapValue]>): Promise<XmlNode> {
    if (this.relogin) await this.relogin;
    const gen = this.generation;
    try {
      const resp = await this.rt.roundTrip(method, thisRef, params);
      if (NO_REPLAY.has(method) || !this.loggedIn || !missingSetNotAuthenticated(resp)) return resp;
    } catch (err) {
      if (!(err instanceof SoapFault)) throw err;
      if (NO_REPLAY.has(method) || !this.loggedIn || !isNotAuthenticated(err)) throw fromSoapFault(err, this.host);
    }
    await this.reloginOnce(gen);
    this.events.onRelogin?.({ method, host: this.host });
    try {
      return await this.rt.roundTrip(method, thisRef, params);
    } catch (err) {
      if (err instanceof SoapFault) throw fromSoapFault(err, this.host);
      throw err;
    }
  }

  async close(): Promise<void> {
    if (!this.loggedIn || !this.serviceContent.sessionManager) return;
    this.loggedIn = false;
    try {
      await this.raw('Logout', () => logout(this.rawRt, this.serviceContent.sessionManager!));
    } catch (err) {
      // Already expired is as good as logged out.
      if (!isNotAuthenticated(err)) throw err;
    } finally {
      this.soap.clearSession();
    }
  }
}
