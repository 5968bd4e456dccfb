// vim25 SOAP transport: envelope building, namespace-aware parsing, HTTP, raw faults.
// Knows nothing about vSphere objects; layers above decode the XmlNode trees this returns.
import http, { type IncomingHttpHeaders } from 'node:http';
import https, { type Agent as HttpsAgent } from 'node:https';
import zlib from 'node:zlib';
import { lazy } from '../../lazy.ts';
import { xmlParser } from '../../input/xml-parser.ts';
import { HostVerificationFailed } from '../../errors.ts';

export const NS_SOAPENV = 'http://schemas.xmlsoap.org/soap/envelope/';
export const NS_XSI = 'http://www.w3.org/2001/XMLSchema-instance';
export const NS_XSD = 'http://www.w3.org/2001/XMLSchema';
export const NS_VIM25 = 'urn:vim25';

export interface QName {
  ns: string;
  local: string;
}

/** A parsed element with namespaces resolved (prefixes are gone; only URIs remain). */
export interface XmlNode {
  ns: string;
  name: string;
  /** unqualified attributes by local name (e.g. MoRef `type`) */
  attrs: Record<string, string>;
  /** `xsi:type`, whatever prefix the server bound the XMLSchema-instance namespace to */
  xsiType?: QName;
  children: XmlNode[];
  /** concatenated text content with entities decoded */
  text: string;
}

// ---------------------------------------------------------------- parsing

// built on the first parse (src/lazy.ts): `validate` loads this module and parses no XML
const parser = lazy(() =>
  xmlParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: '',
    // Entity expansion off: a server (or a proxy) cannot make us expand DOCTYPE entities; the five
    // predefined ones and character references are decoded below.
    processEntities: false,
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    // no path string built per tag for callbacks we do not pass (fast-xml-parser 5: `jPath: true`
    // stringifies the tag path for every attribute map and text value)
    jPath: false,
  }),
);

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (m, e: string) => {
    if (e.startsWith('#x')) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith('#')) return String.fromCodePoint(parseInt(e.slice(1), 10));
    return PREDEFINED[e] ?? m;
  });
}

type Raw = Record<string, unknown>;

function splitQName(q: string): [string | undefined, string] {
  const i = q.indexOf(':');
  return i < 0 ? [undefined, q] : [q.slice(0, i), q.slice(i + 1)];
}

function convert(raw: Raw, scope: Map<string | undefined, string>): XmlNode | undefined {
  const tag = Object.keys(raw).find((k) => k !== ':@');
  if (tag === undefined || tag === '#text' || tag.startsWith('?') || tag.startsWith('!')) return undefined;
  const rawAttrs = (raw[':@'] ?? {}) as Record<string, string>;
  let local = scope;
  for (const [k, v] of Object.entries(rawAttrs)) {
    if (k === 'xmlns' || k.startsWith('xmlns:')) {
      if (local === scope) local = new Map(scope);
      local.set(k === 'xmlns' ? undefined : k.slice(6), decodeEntities(v));
    }
  }
  const [prefix, name] = splitQName(tag);
  const node: XmlNode = { ns: local.get(prefix) ?? '', name, attrs: {}, children: [], text: '' };
  for (const [k, v] of Object.entries(rawAttrs)) {
    if (k === 'xmlns' || k.startsWith('xmlns:')) continue;
    const [ap, an] = splitQName(k);
    const value = decodeEntities(v);
    if (ap === undefined) node.attrs[an] = value;
    else if (local.get(ap) === NS_XSI && an === 'type') {
      const [tp, tn] = splitQName(value);
      // An unprefixed QName in an attribute value takes the default namespace.
      node.xsiType = { ns: local.get(tp) ?? '', local: tn };
    }
  }
  const kids = (raw[tag] ?? []) as Raw[];
  let text = '';
  for (const k of kids) {
    if ('#text' in k) {
      text += String(k['#text']);
      continue;
    }
    const child = convert(k, local);
    if (child) node.children.push(child);
  }
  node.text = decodeEntities(text);
  return node;
}

/** Parse an XML document into a namespace-resolved tree (root element). */
export function parseXml(xml: string): XmlNode {
  let raw: Raw[];
  try {
    raw = parser().parse(xml) as Raw[];
  } catch (err) {
    throw new SoapProtocolError(`response is not well-formed XML: ${(err as Error).message}`, { cause: err });
  }
  for (const r of raw) {
    const n = convert(r, new Map([['xml', 'http://www.w3.org/XML/1998/namespace']]));
    if (n) return n;
  }
  throw new SoapProtocolError('response has no root element');
}

export function child(node: XmlNode, name: string): XmlNode | undefined {
  return node.children.find((c) => c.name === name);
}

// ---------------------------------------------------------------- envelope building

export interface MoRef {
  type: string;
  value: string;
}

/**
 * A value to serialise. Plain objects become elements whose children follow the object's key order
 * (callers build them in WSDL order); the key `_type` becomes `xsi:type`. Arrays repeat the element.
 */
export type SoapValue =
  | string
  | number
  | boolean
  | Date
  | MoRef
  | null
  | undefined
  | SoapValue[]
  | { [key: string]: SoapValue };

/**
 * Anything that can carry one call: the raw SoapClient or the re-logging Session above it
 * (govmomi's soap.RoundTripper). Here, below methods.ts, so that what methods.ts uses (known-devices.ts,
 * session-scoped.ts) can name it without importing methods.ts back.
 */
export interface RoundTripper {
  roundTrip(method: string, thisRef: MoRef, params: Array<[string, SoapValue]>): Promise<XmlNode>;
}

export function isMoRef(v: unknown): v is MoRef {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  return keys.length === 2 && typeof (v as MoRef).type === 'string' && typeof (v as MoRef).value === 'string';
}

export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

function encodeElement(name: string, v: SoapValue, out: string[]): void {
  if (v === undefined || v === null) return;
  if (Array.isArray(v)) {
    for (const item of v) encodeElement(name, item, out);
    return;
  }
  if (v instanceof Date) {
    out.push(`<${name}>${v.toISOString()}</${name}>`);
    return;
  }
  if (typeof v !== 'object') {
    out.push(`<${name}>${escapeXml(String(v))}</${name}>`);
    return;
  }
  if (isMoRef(v)) {
    out.push(`<${name} type="${escapeXml(v.type)}">${escapeXml(v.value)}</${name}>`);
    return;
  }
  const typeAttr = typeof v._type === 'string' ? ` xsi:type="${escapeXml(v._type)}"` : '';
  out.push(`<${name}${typeAttr}>`);
  for (const [k, cv] of Object.entries(v)) {
    if (k === '_type') continue;
    encodeElement(k, cv, out);
  }
  out.push(`</${name}>`);
}

/** Request body for `method` on `thisRef`; `params` are [element name, value] in WSDL order. */
export function buildEnvelope(method: string, thisRef: MoRef, params: Array<[string, SoapValue]>): string {
  const out: string[] = [];
  encodeElement('_this', thisRef, out);
  for (const [name, value] of params) encodeElement(name, value, out);
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<soapenv:Envelope xmlns:soapenv="${NS_SOAPENV}" xmlns:xsd="${NS_XSD}" xmlns:xsi="${NS_XSI}">` +
    `<soapenv:Body><${method} xmlns="${NS_VIM25}">${out.join('')}</${method}></soapenv:Body></soapenv:Envelope>`
  );
}

// ---------------------------------------------------------------- errors

/** A SOAP Fault as the server sent it; fault.ts turns it into a typed VsphereFault. */
export class SoapFault extends Error {
  override readonly name = 'SoapFault';
  constructor(
    readonly method: string,
    readonly faultCode: string,
    readonly faultString: string,
    /** the element inside <detail>, e.g. <InvalidLoginFault xsi:type="InvalidLogin"> */
    readonly detail: XmlNode | undefined,
    readonly httpStatus: number,
  ) {
    super(faultString || faultCode);
  }

  /** vim fault type name: xsi:type of the detail element, else its element name minus "Fault" */
  get faultName(): string {
    if (this.detail?.xsiType) return this.detail.xsiType.local;
    if (this.detail) return this.detail.name.replace(/Fault$/, '');
    return this.faultCode;
  }
}

/** The server answered with something that is not a SOAP response (bad XML, HTML error page…). */
export class SoapProtocolError extends Error {
  override readonly name = 'SoapProtocolError';
}

/** No SOAP answer: connection refused/reset/dropped, timeout. `ambiguous` when the body was sent. */
export class SoapTransportError extends Error {
  override readonly name = 'SoapTransportError';
  constructor(
    message: string,
    readonly details: { url: string; method: string; code: string | undefined; ambiguous: boolean },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

// ---------------------------------------------------------------- HTTP

export interface SoapClientOptions {
  /** https://host[:port]/sdk */
  url: string;
  agent: HttpsAgent;
  userAgent?: string;
  timeoutMs?: number;
  /** SOAPAction version, e.g. '6.7'; negotiated from /sdk/vimServiceVersions.xml by discoverVersion() */
  version?: string;
}

const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_UNTRUSTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_TLS_THUMBPRINT_MISMATCH',
]);

/**
 * The vim25 versions this client is written for, most preferred first: the public dotted version
 * ids of vSphere 5.5 to 8.0 U3 (pyvmomi docs/vim/version.rst and its generated version list). 5.5
 * is the floor because disks are created with `capacityInBytes`, which 5.5 added.
 */
export const CLIENT_VIM_VERSIONS: readonly string[] = [
  '8.0.3.0', '8.0.2.0', '8.0.1.0', '8.0.0.2', '8.0.0.1', '8.0.0.0',
  '7.0.3.2', '7.0.3.1', '7.0.3.0', '7.0.2.1', '7.0.2.0', '7.0.1.1', '7.0.1.0', '7.0.0.2', '7.0.0.1', '7.0.0.0',
  '6.7.3', '6.7.2', '6.7.1', '6.7', '6.5', '6.0', '5.5',
];

/**
 * The highest version both sides know, from a server's vimServiceVersions.xml (`<namespaces
 * version="1.0"><namespace><name>urn:vim25</name><version>…</version><priorVersions>…`): the
 * first of CLIENT_VIM_VERSIONS that the server lists as its version or a prior one — what
 * pyVim.connect `__FindSupportedVersion`/`__VersionIsSupported` do with a preference list. (govmomi
 * `vim25.Client.UseServiceVersion` adopts `<version>` as is, which on vCenter 8.0.3 is `uA046D008`.)
 */
export function negotiateVimVersion(doc: XmlNode, host = 'server'): string {
  if (doc.name !== 'namespaces' || doc.attrs.version !== '1.0') {
    throw new SoapProtocolError(`vimServiceVersions.xml from ${host} is not a version 1.0 <namespaces> document`);
  }
  const served = new Set<string>();
  for (const ns of doc.children.filter((c) => c.name === 'namespace' && child(c, 'name')?.text.trim() === 'urn:vim25')) {
    const current = child(ns, 'version')?.text.trim();
    if (current) served.add(current);
    for (const v of child(ns, 'priorVersions')?.children ?? []) if (v.name === 'version') served.add(v.text.trim());
  }
  const common = CLIENT_VIM_VERSIONS.find((v) => served.has(v));
  if (common === undefined) {
    const list = [...served].slice(0, 12).join(', ') || 'none';
    throw new SoapProtocolError(`${host} serves vim25 versions ${list}; this client speaks ${CLIENT_VIM_VERSIONS.at(-1)!} to ${CLIENT_VIM_VERSIONS[0]!}`);
  }
  return common;
}

/** One HTTP exchange's outcome: any status (faults come back as HTTP 500 with a SOAP body). */
interface HttpReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export class SoapClient {
  readonly url: string;
  private readonly target: URL;
  private readonly timeoutMs: number;
  private cookie: string | undefined;
  version: string;

  constructor(private readonly opts: SoapClientOptions) {
    this.url = opts.url;
    this.target = new URL(opts.url);
    this.version = opts.version ?? '6.5';
    this.timeoutMs = opts.timeoutMs ?? 10 * 60_000;
  }

  /**
   * One request on Node's own http(s) client with the endpoint's agent (keep-alive pool, TLS trust):
   * no proxy from the environment, no redirects followed, every status returned to the caller, a
   * gzip/deflate body inflated. A SOAP call is one small POST and one text answer, so this is all
   * the HTTP a call needs; it replaced axios here, whose per-request work (config merging, header
   * normalisation, adapter and interceptor chains) was a measurable share of a call's client CPU
   * (bench/orchestration/cycle-profile.ts; docs/decisions.md).
   */
  private send(method: 'GET' | 'POST', url: URL, headers: Record<string, string>, body?: string): Promise<HttpReply> {
    const isHttps = url.protocol === 'https:';
    return new Promise<HttpReply>((resolve, reject) => {
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        reject(err);
      };
      const req = (isHttps ? https : http).request(
        {
          protocol: url.protocol,
          hostname: url.hostname.replace(/^\[|\]$/g, ''),
          port: url.port || (isHttps ? 443 : 80),
          path: `${url.pathname}${url.search}`,
          method,
          // an http:// URL (the unit tests' plain servers) goes through Node's default agent
          ...(isHttps ? { agent: this.opts.agent } : {}),
          headers: {
            Accept: 'text/xml, */*',
            'Accept-Encoding': 'gzip, deflate',
            ...headers,
            ...(body !== undefined ? { 'Content-Length': String(Buffer.byteLength(body, 'utf8')) } : {}),
          },
        },
        (res) => {
          const enc = String(res.headers['content-encoding'] ?? '').toLowerCase();
          const stream = enc === 'gzip' ? res.pipe(zlib.createGunzip()) : enc === 'deflate' ? res.pipe(zlib.createInflate()) : res;
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', (err: Error) => fail(err));
          res.on('aborted', () => fail(Object.assign(new Error('the server closed the connection before the answer was complete'), { code: 'ECONNRESET' })));
          stream.on('end', () => {
            if (settled) return;
            settled = true;
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
          });
        },
      );
      // idle socket timeout, as axios' `timeout` was
      req.setTimeout(this.timeoutMs, () => req.destroy(Object.assign(new Error(`timeout of ${this.timeoutMs}ms exceeded`), { code: 'ECONNABORTED' })));
      req.on('error', (err) => fail(err));
      // a string body goes out with the headers in one write (one TLS record), a Buffer in a second
      if (body === undefined) req.end();
      else req.end(body, 'utf8');
    });
  }

  get host(): string {
    return new URL(this.url).host;
  }

  /** The TLS trust of this endpoint (its https.Agent): a guest file transfer to it uses the same. */
  get agent(): HttpsAgent {
    return this.opts.agent;
  }

  /** Session cookie (opaque; real vCenter quotes the value). Never log it. */
  get sessionCookie(): string | undefined {
    return this.cookie;
  }

  clearSession(): void {
    this.cookie = undefined;
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    const h: Record<string, string> = { ...extra };
    if (this.opts.userAgent) h['User-Agent'] = this.opts.userAgent;
    if (this.cookie) h.Cookie = `vmware_soap_session=${this.cookie}`;
    return h;
  }

  private transportError(method: string, err: unknown, ambiguous: boolean): Error {
    const code = (err as { code?: string }).code;
    const causeCode = ((err as { cause?: { code?: string } }).cause ?? {}).code;
    const c = code && code !== 'ERR_BAD_RESPONSE' ? code : causeCode;
    if (c && TLS_CODES.has(c)) {
      return new HostVerificationFailed(
        `TLS verification of ${this.host} failed (${c}): ${(err as Error).message}; set caFile or a SHA-256 thumbprint for this endpoint`,
        this.host,
        { cause: Object.assign(new Error((err as Error).message), { code: c }) },
      );
    }
    // Only the message and code go on: an HTTP library's error may carry the request (session
    // cookie, Login body).
    const cause = Object.assign(new Error((err as Error).message), { code: c });
    return new SoapTransportError(`${method} to ${this.url} failed: ${(err as Error).message}`, { url: this.url, method, code: c, ambiguous }, { cause });
  }

  /**
   * GET /sdk/vimServiceVersions.xml and use, for SOAPAction, the highest vim25 version both sides
   * know (`negotiateVimVersion`). Not the server's own current version: a vCenter 8.0.3 names an
   * internal build id (`uA046D008`) there, which no client was written against.
   */
  async discoverVersion(): Promise<string> {
    const u = new URL(this.url);
    u.pathname = u.pathname.replace(/\/?$/, '/vimServiceVersions.xml');
    let res;
    try {
      res = await this.send('GET', u, this.headers({}));
    } catch (err) {
      throw this.transportError('GET vimServiceVersions.xml', err, false);
    }
    if (res.status !== 200) {
      // pyvmomi then tries vimService.wsdl and gives up with "is not a VIM server"; every vSphere
      // since 4.0 serves this document, so its absence means the URL is not a vSphere SDK.
      throw new SoapProtocolError(`GET ${u.pathname} on ${this.host}: HTTP ${res.status}; is ${this.url} a vCenter/ESXi SDK endpoint?`);
    }
    this.version = negotiateVimVersion(parseXml(res.text), this.host);
    return this.version;
  }

  /**
   * POST one call, once. Resolves with the `<METHODResponse>` element (its `returnval` children, if
   * any), rejects with SoapFault, SoapProtocolError, SoapTransportError or HostVerificationFailed.
   * Replays are the decorator's (retrying.ts), around this, under the session.
   */
  async roundTrip(method: string, thisRef: MoRef, params: Array<[string, SoapValue]>): Promise<XmlNode> {
    const body = buildEnvelope(method, thisRef, params);
    let res;
    try {
      res = await this.send(
        'POST',
        this.target,
        this.headers({
          'Content-Type': 'text/xml; charset="utf-8"',
          SOAPAction: `urn:vim25/${this.version}`,
        }),
        body,
      );
    } catch (err) {
      // Once the request left, a reset does not prove the server did not act on it.
      const code = (err as { code?: string }).code;
      throw this.transportError(method, err, code !== 'ECONNREFUSED' && code !== 'ENOTFOUND');
    }
    const setCookie = res.headers['set-cookie'];
    for (const c of setCookie ?? []) {
      const m = /^vmware_soap_session=([^;]*)/.exec(c);
      if (m) this.cookie = m[1];
    }
    return parseSoapResponse(method, res.status, res.text, this.url);
  }
}

/**
 * The `<METHODResponse>` element of a SOAP response body, or a thrown SoapFault /
 * SoapProtocolError. Shared by the HTTP client and the fixture tests.
 */
export function parseSoapResponse(method: string, status: number, text: string, from = 'server'): XmlNode {
  if (!text.trimStart().startsWith('<')) {
    throw new SoapProtocolError(`${method}: HTTP ${status} from ${from} without a SOAP body`);
  }
  const env = parseXml(text);
  const bodyNode = env.children.find((c) => c.ns === NS_SOAPENV && c.name === 'Body');
  if (env.ns !== NS_SOAPENV || env.name !== 'Envelope' || !bodyNode) {
    throw new SoapProtocolError(`${method}: HTTP ${status} from ${from} is not a SOAP envelope`);
  }
  const fault = bodyNode.children.find((c) => c.ns === NS_SOAPENV && c.name === 'Fault');
  if (fault) {
    const detail = child(fault, 'detail')?.children[0];
    throw new SoapFault(method, child(fault, 'faultcode')?.text ?? '', child(fault, 'faultstring')?.text ?? '', detail, status);
  }
  const resp = bodyNode.children[0];
  if (!resp || resp.name !== `${method}Response`) {
    throw new SoapProtocolError(`${method}: expected <${method}Response>, got <${resp?.name ?? 'nothing'}> (HTTP ${status} from ${from})`);
  }
  return resp;
}
