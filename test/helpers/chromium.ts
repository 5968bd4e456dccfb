// Headless Chromium (Debian `chromium`) driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe), which needs no WebSocket client: the HTML report tests open a report as
// a reader's browser does (test/integration/report-html.test.ts, report-vm-scaling-html.test.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';

export const CHROMIUM = '/usr/bin/chromium';

export interface CdpEvent {
  method: string;
  params: Record<string, unknown>;
  sessionId?: string;
}

/** A minimal DevTools protocol client over Chromium's pipe transport (NUL-terminated JSON). */
export class Browser {
  private nextId = 1;
  private pending = new Map<number, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  private listeners: Array<(e: CdpEvent) => void> = [];
  private buffer = '';
  readonly stderr: string[] = [];

  private constructor(
    private readonly proc: ChildProcess,
    private readonly input: Writable,
    output: Readable,
  ) {
    output.setEncoding('utf8');
    output.on('data', (chunk: string) => {
      this.buffer += chunk;
      let end;
      while ((end = this.buffer.indexOf('\0')) >= 0) {
        const msg = JSON.parse(this.buffer.slice(0, end)) as { id?: number; result?: Record<string, unknown>; error?: { message: string } } & CdpEvent;
        this.buffer = this.buffer.slice(end + 1);
        if (msg.id !== undefined) {
          const p = this.pending.get(msg.id);
          this.pending.delete(msg.id);
          if (msg.error) p?.reject(new Error(`CDP: ${msg.error.message}`));
          else p?.resolve(msg.result ?? {});
        } else {
          for (const l of this.listeners) l(msg);
        }
      }
    });
  }

  static launch(profileDir: string): Browser {
    const proc = spawn(
      CHROMIUM,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--user-data-dir=${profileDir}`,
        '--remote-debugging-pipe',
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
    );
    const b = new Browser(proc, proc.stdio[3] as Writable, proc.stdio[4] as Readable);
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (d: string) => b.stderr.push(d));
    return b;
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.input.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
    });
  }

  on(listener: (e: CdpEvent) => void): void {
    this.listeners.push(listener);
  }

  waitFor(method: string, sessionId: string): Promise<CdpEvent> {
    return new Promise((resolve) => {
      const l = (e: CdpEvent) => {
        if (e.method === method && e.sessionId === sessionId) {
          this.listeners = this.listeners.filter((x) => x !== l);
          resolve(e);
        }
      };
      this.listeners.push(l);
    });
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.proc.once('exit', () => resolve()));
    if (this.proc.exitCode !== null) return;
    await this.send('Browser.close').catch(() => undefined);
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}


/** A page opened in its own target, with what it requested and what it logged as a problem. */
export interface OpenedPage {
  sessionId: string;
  /** every URL the page asked for (a self-contained report asks for itself only) */
  requests: string[];
  /** exceptions, console errors and warnings, log errors and warnings */
  problems: string[];
  /** the value of a JavaScript expression in the page (JSON-serialisable) */
  evaluate<T>(expression: string): Promise<T>;
  close(): Promise<void>;
}

/** Opens `file` at a viewport and waits for its load event. */
export async function openPage(browser: Browser, file: string, viewport: { width: number; height: number; mobile: boolean }): Promise<OpenedPage> {
  const { targetId } = (await browser.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
  const { sessionId } = (await browser.send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
  const requests: string[] = [];
  const problems: string[] = [];
  browser.on((e) => {
    if (e.sessionId !== sessionId) return;
    if (e.method === 'Network.requestWillBeSent') requests.push((e.params.request as { url: string }).url);
    if (e.method === 'Runtime.exceptionThrown') problems.push(`exception: ${JSON.stringify(e.params.exceptionDetails)}`);
    if (e.method === 'Runtime.consoleAPICalled' && (e.params.type === 'error' || e.params.type === 'warning' || e.params.type === 'assert')) {
      problems.push(`console.${String(e.params.type)}: ${JSON.stringify(e.params.args)}`);
    }
    if (e.method === 'Log.entryAdded') {
      const entry = e.params.entry as { level: string; text: string; source: string };
      if (entry.level === 'error' || entry.level === 'warning') problems.push(`log ${entry.level} (${entry.source}): ${entry.text}`);
    }
  });
  for (const m of ['Runtime.enable', 'Log.enable', 'Network.enable', 'Page.enable']) await browser.send(m, {}, sessionId);
  await browser.send('Emulation.setDeviceMetricsOverride', { ...viewport, deviceScaleFactor: viewport.mobile ? 3 : 1 }, sessionId);
  const loaded = browser.waitFor('Page.loadEventFired', sessionId);
  await browser.send('Page.navigate', { url: pathToFileURL(file).href }, sessionId);
  await loaded;
  return {
    sessionId,
    requests,
    problems,
    evaluate: async <T>(expression: string) => {
      const res = (await browser.send('Runtime.evaluate', { expression, returnByValue: true }, sessionId)) as { result: { value: string } };
      return JSON.parse(res.result.value) as T;
    },
    close: async () => void (await browser.send('Target.closeTarget', { targetId })),
  };
}
