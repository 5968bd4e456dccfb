// VMware Tools guest operations on one VM (GuestOperationsManager, vSphere 5.0+): start a program,
// list and terminate processes, move a file in or out. What PowerCLI's Invoke-VMScript does.
//
// Facts (real-product-rules.md §4; pyvmomi docs/vim/vm/guest/ProcessManager.rst, FileManager.rst):
// - every call carries `auth`, a NamePasswordAuthentication {interactiveSession, username, password}
//   — in the request body only: never in a message, a log field or a child process's argv;
// - StartProgramInGuest → pid; ListProcessesInGuest(pids) → GuestProcessInfo with endTime/exitCode
//   once the process ended (kept ~5 minutes); TerminateProcessInGuest(pid);
// - InitiateFileTransferToGuest(guestFilePath, fileAttributes, fileSize, overwrite) → a URL for one
//   HTTP PUT of exactly the file; InitiateFileTransferFromGuest(guestFilePath) → {size, url} for one
//   HTTP GET. "If the host part of the URL is *, substitute the host name you used to reach the
//   server"; otherwise the URL names the ESX host, whose certificate the API gives as
//   `vm.runtime.host.config.certificate`.
// TLS: a transfer to the SOAP endpoint's own host uses the SOAP session's agent (the same trust:
// CA file, pinned thumbprint or — only when written — none); one to another host (a vCenter hands
// out its ESX host's URL) trusts exactly the certificate vSphere reports for that host, read over the
// verified session, and nothing else.
import { X509Certificate } from 'node:crypto';
import { Agent, type Agent as HttpsAgent } from 'node:https';
import { HostVerificationFailed, InvalidArgument } from '../../errors.ts';
import { isFault, VsphereClientError } from './fault.ts';
import { deleteFileInGuest, initiateFileTransferFromGuest, makeDirectoryInGuest, initiateFileTransferToGuest, listProcessesInGuest, startProgramInGuest, terminateProcessInGuest, type RoundTripper } from './methods.ts';
import { readProps } from './property.ts';
import type { MoRef } from './soap.ts';
import { arr, type DataObject, type GuestProcessInfo, type ServiceContent } from './types.ts';

export type { GuestProcessInfo };

/** The guest account, revealed at each call (never kept in a field that is logged or serialised). */
export interface GuestCredential {
  username: string;
  password: string;
}

export interface GuestProgram {
  programPath: string;
  arguments: string;
  workingDirectory?: string;
  envVariables?: string[];
}

/** The transfer URL with its `*` host replaced by the host (and port) the SOAP session reached. */
export function transferUrl(url: string, soapHost: string): URL {
  const m = /^(https?):\/\/([^/?#]*)(.*)$/i.exec(url.trim());
  if (!m) throw new InvalidArgument(`guest file transfer URL is not http(s): ${JSON.stringify(redactUrl(url))}`, { name: 'url', value: redactUrl(url) });
  const [, scheme, authority, rest] = m as unknown as [string, string, string, string];
  if (scheme.toLowerCase() !== 'https') throw new InvalidArgument(`guest file transfer URL ${JSON.stringify(redactUrl(url))} is not https: storsweep sends nothing unencrypted`, { name: 'url', value: redactUrl(url) });
  const star = /^\*(?::(\d+))?$/.exec(authority);
  if (!star) return new URL(url.trim());
  const soap = new URL(`https://${soapHost}`);
  return new URL(`https://${soap.hostname.includes(':') && !soap.hostname.startsWith('[') ? `[${soap.hostname}]` : soap.hostname}${star[1] ? `:${star[1]}` : soap.port ? `:${soap.port}` : ''}${rest}`);
}

/** A transfer URL for messages: scheme, host and path; its query (the ticket) never shown. */
export function redactUrl(url: string): string {
  const q = url.search(/[?#]/);
  return q < 0 ? url : `${url.slice(0, q)}?…`;
}

/** Signed bytes (xsd:byte[]) of a PEM as vSphere returns `config.certificate`. */
function pemOf(v: unknown): string | null {
  const bytes = arr(v as unknown[] | undefined).map((b) => Number(b));
  if (bytes.length === 0 || bytes.some((b) => !Number.isInteger(b))) return typeof v === 'string' && v.includes('BEGIN CERTIFICATE') ? v : null;
  return Buffer.from(bytes.map((b) => b & 0xff)).toString('latin1');
}

export interface GuestOpsContext {
  rt: RoundTripper;
  sc: ServiceContent;
  /** host[:port] the SOAP session reached */
  endpoint: string;
  /** the SOAP session's TLS agent */
  agent: HttpsAgent;
  /** the endpoint is not verified (insecure: true): nor is a transfer */
  insecure: boolean;
}

/** Guest operations on `vm` with the credential `auth` returns at each call. */
export class GuestOperations {
  private managers: Promise<{ pm: MoRef; fm: MoRef }> | undefined;
  private readonly agents = new Map<string, Promise<HttpsAgent>>();

  constructor(
    private readonly ctx: GuestOpsContext,
    readonly vm: MoRef,
    private readonly credential: () => GuestCredential,
  ) {}

  private auth(): DataObject {
    const c = this.credential();
    return { _type: 'NamePasswordAuthentication', interactiveSession: false, username: c.username, password: c.password };
  }

  private mgrs(): Promise<{ pm: MoRef; fm: MoRef }> {
    this.managers ??= (async () => {
      const gom = this.ctx.sc.guestOperationsManager;
      if (!gom) throw new VsphereClientError('unsupported', `${this.ctx.endpoint} has no GuestOperationsManager (vSphere 5.0 or later runs programs in guests)`, { method: 'StartProgramInGuest', host: this.ctx.endpoint });
      const p = await readProps(this.ctx.rt, this.ctx.sc, gom, ['processManager', 'fileManager']);
      const pm = p.processManager as MoRef | undefined;
      const fm = p.fileManager as MoRef | undefined;
      if (!pm || !fm) throw new VsphereClientError('unsupported', `${this.ctx.endpoint}: GuestOperationsManager has no ${pm ? 'fileManager' : 'processManager'}`, { method: 'RetrievePropertiesEx', host: this.ctx.endpoint });
      return { pm, fm };
    })();
    this.managers.catch(() => (this.managers = undefined));
    return this.managers;
  }

  async start(spec: GuestProgram): Promise<number> {
    const { pm } = await this.mgrs();
    return startProgramInGuest(this.ctx.rt, pm, this.vm, this.auth(), { ...spec });
  }

  async list(pids?: number[]): Promise<GuestProcessInfo[]> {
    const { pm } = await this.mgrs();
    return listProcessesInGuest(this.ctx.rt, pm, this.vm, this.auth(), pids);
  }

  async terminate(pid: number): Promise<void> {
    const { pm } = await this.mgrs();
    await terminateProcessInGuest(this.ctx.rt, pm, this.vm, this.auth(), pid);
  }

  /** Makes a directory (and its parents); one that exists already is fine (FileAlreadyExists). */
  async mkdir(guestPath: string): Promise<void> {
    const { fm } = await this.mgrs();
    try {
      await makeDirectoryInGuest(this.ctx.rt, fm, this.vm, this.auth(), guestPath, true);
    } catch (err) {
      if (!isFault(err, 'FileAlreadyExists')) throw err;
    }
  }

  /** Deletes a file; one already gone is fine (FileNotFound). */
  async remove(guestPath: string): Promise<void> {
    const { fm } = await this.mgrs();
    try {
      await deleteFileInGuest(this.ctx.rt, fm, this.vm, this.auth(), guestPath);
    } catch (err) {
      if (!isFault(err, 'FileNotFound')) throw err;
    }
  }

  /** Writes `data` to `guestPath` (created or, with overwrite, replaced). */
  async upload(guestPath: string, data: Buffer, o: { overwrite: boolean; windows: boolean; timeoutMs?: number }): Promise<void> {
    const { fm } = await this.mgrs();
    const attributes = o.windows ? { _type: 'GuestWindowsFileAttributes' } : { _type: 'GuestPosixFileAttributes', permissions: 0o600 };
    const url = await initiateFileTransferToGuest(this.ctx.rt, fm, this.vm, this.auth(), guestPath, attributes, data.length, o.overwrite);
    await this.http('PUT', url, guestPath, data, o.timeoutMs);
  }

  /** The content of `guestPath`, at most `maxBytes` (refused, not cut, when larger). */
  async download(guestPath: string, o: { maxBytes: number; timeoutMs?: number }): Promise<Buffer> {
    const { fm } = await this.mgrs();
    const info = await initiateFileTransferFromGuest(this.ctx.rt, fm, this.vm, this.auth(), guestPath);
    if (typeof info?.url !== 'string') throw new VsphereClientError('bad-reply', `${this.ctx.endpoint}: InitiateFileTransferFromGuest for ${guestPath} returned no URL`, { method: 'InitiateFileTransferFromGuest', host: this.ctx.endpoint });
    if (typeof info.size === 'number' && info.size > o.maxBytes) throw new VsphereClientError('bad-reply', `${this.ctx.endpoint}: ${guestPath} in the guest has ${info.size} bytes, more than the ${o.maxBytes} storsweep reads`, { method: 'InitiateFileTransferFromGuest', host: this.ctx.endpoint });
    return this.http('GET', info.url, guestPath, undefined, o.timeoutMs, o.maxBytes);
  }

  /** The agent for a transfer URL's host: the session's own, or one trusting exactly the ESX host's certificate. */
  private agentFor(u: URL): Promise<HttpsAgent> {
    const soap = new URL(`https://${this.ctx.endpoint}`);
    if (u.hostname === soap.hostname) return Promise.resolve(this.ctx.agent);
    if (this.ctx.insecure) return Promise.resolve(new Agent({ keepAlive: false, rejectUnauthorized: false }));
    let p = this.agents.get(u.host);
    if (!p) {
      p = (async () => {
        const hostRef = (await readProps(this.ctx.rt, this.ctx.sc, this.vm, ['runtime.host']))['runtime.host'] as MoRef | undefined;
        const pem = hostRef ? pemOf((await readProps(this.ctx.rt, this.ctx.sc, hostRef, ['config.certificate']))['config.certificate']) : null;
        if (!pem) throw new HostVerificationFailed(`guest file transfer to ${u.host}: vSphere reports no certificate for the VM's host (runtime.host config.certificate), so its identity cannot be checked; nothing was sent`, u.host);
        const want = new X509Certificate(pem).fingerprint256;
        return new Agent({
          keepAlive: false,
          ca: pem,
          // the ESX host is identified by the certificate vSphere reports for it, not by its name
          checkServerIdentity: (_h, peer) => (peer.fingerprint256 === want ? undefined : Object.assign(new Error(`certificate ${peer.fingerprint256} is not the one vSphere reports for the VM's host (${want})`), { code: 'ERR_TLS_THUMBPRINT_MISMATCH' })),
        });
      })();
      p.catch(() => this.agents.delete(u.host));
      this.agents.set(u.host, p);
    }
    return p;
  }

  private async http(method: 'PUT' | 'GET', rawUrl: string, guestPath: string, body: Buffer | undefined, timeoutMs = 10 * 60_000, maxBytes = 64 * 2 ** 20): Promise<Buffer> {
    const u = transferUrl(rawUrl, this.ctx.endpoint);
    const shown = `${method} https://${u.host}${u.pathname}`;
    const agent = await this.agentFor(u);
    let res;
    try {
      // loaded on first use: only a guest file transfer needs it
      const { default: axios } = await import('axios');
      res = await axios.request<ArrayBuffer>({
        method,
        url: u.toString(),
        httpsAgent: agent,
        proxy: false,
        maxRedirects: 0,
        timeout: timeoutMs,
        validateStatus: () => true,
        responseType: 'arraybuffer',
        maxContentLength: maxBytes,
        ...(body ? { data: body, headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(body.length) } } : {}),
      });
    } catch (err) {
      // the axios error carries the URL (with its ticket): only its message and code go on
      const code = (err as { code?: string }).code;
      throw new VsphereClientError('bad-reply', `guest file ${guestPath}: ${shown} failed${code ? ` (${code})` : ''}: ${(err as Error).message.replace(/https?:\/\/\S+/g, (x) => redactUrl(x))}`, { method: `InitiateFileTransfer${method === 'PUT' ? 'ToGuest' : 'FromGuest'}`, host: u.host });
    }
    if (res.status < 200 || res.status > 299) {
      throw new VsphereClientError('bad-reply', `guest file ${guestPath}: ${shown} answered HTTP ${res.status}`, { method: `InitiateFileTransfer${method === 'PUT' ? 'ToGuest' : 'FromGuest'}`, host: u.host });
    }
    return Buffer.from(res.data ?? new ArrayBuffer(0));
  }
}
