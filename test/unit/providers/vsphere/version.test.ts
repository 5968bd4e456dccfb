// SOAP version negotiation against what real servers answer: a tiny real HTTP server replays the
// recorded vCenter 8.0.3 and 6.0.0 sessions (test/fixtures/vcenter-soap) and records the
// SOAPAction of every call. The client must speak the highest vim25 version both sides know —
// never the server's internal current version (8.0.3 names `uA046D008` there).
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { Agent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VsphereFault } from '../../../../src/providers/vsphere/fault.ts';
import { Session } from '../../../../src/providers/vsphere/session.ts';
import { CLIENT_VIM_VERSIONS, negotiateVimVersion, parseXml, SoapClient, SoapProtocolError } from '../../../../src/providers/vsphere/soap.ts';

const ROOT = join(import.meta.dirname, '../../../fixtures/vcenter-soap');
const rec = (session: string, file: string) => readFileSync(join(ROOT, session, `${file}.response.xml`), 'utf8');

/** vCenter 8.0.3's recorded document (current version uA046D008, priors 8.0.2.0 … 4.0). */
const VERSIONS_803 = rec('vcenter-8.0.3/root_folder_parent', '00-GET-vimServiceVersions.xml');
/**
 * No vimServiceVersions.xml was recorded from the 6.0.0 server; this one is written in the same
 * documented shape with the versions a 6.0 server lists (its own 6.0 and the releases before it).
 */
const VERSIONS_600 =
  '<?xml version="1.0" encoding="UTF-8" ?><namespaces version="1.0"><namespace><name>urn:vim25</name><version>6.0</version><priorVersions><version>5.5</version><version>5.1</version><version>5.0</version><version>4.1</version><version>4.0</version></priorVersions></namespace></namespaces>';

interface Server803Or600 {
  versions: string;
  serviceContent: string;
  login: { status: number; body: string; cookie?: string };
}
const SERVERS: Record<'8.0.3' | '6.0.0', Server803Or600> = {
  '8.0.3': {
    versions: VERSIONS_803,
    serviceContent: rec('vcenter-8.0.3/basic_connection', '00-RetrieveServiceContent'),
    login: { status: 200, body: rec('vcenter-8.0.3/basic_connection', '01-Login'), cookie: 'vmware_soap_session="7bea48466ca72276d54d979e86c48fb254b0f4ec"; Path=/; HttpOnly; Secure;' },
  },
  '6.0.0': {
    versions: VERSIONS_600,
    serviceContent: rec('vcenter-6.0.0/basic_connection_bad_password', '00-RetrieveServiceContent'),
    login: { status: 500, body: rec('vcenter-6.0.0/basic_connection_bad_password', '01-Login') },
  },
};

let server: Server;
let url: string;
let current: Server803Or600 | undefined;
let actions: string[] = [];

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => resolve(body));
  });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void read(req).then((body) => {
      const s = current;
      if (!s) return res.writeHead(404).end();
      if (req.method === 'GET') {
        if (req.url !== '/sdk/vimServiceVersions.xml') return res.writeHead(404).end();
        return res.writeHead(200, { 'Content-Type': 'text/xml' }).end(s.versions);
      }
      actions.push(String(req.headers.soapaction));
      const method = /<soapenv:Body><(\w+)/.exec(body)?.[1];
      if (method === 'RetrieveServiceContent') return res.writeHead(200, { 'Content-Type': 'text/xml' }).end(s.serviceContent);
      if (method === 'Login') return res.writeHead(s.login.status, { 'Content-Type': 'text/xml', ...(s.login.cookie ? { 'Set-Cookie': s.login.cookie } : {}) }).end(s.login.body);
      return res.writeHead(500).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sdk`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  actions = [];
});

async function connect(which: keyof typeof SERVERS): Promise<{ soap: SoapClient; session: Session }> {
  current = SERVERS[which];
  const soap = new SoapClient({ url, agent: new Agent() });
  await soap.discoverVersion();
  const session = new Session(soap, { username: 'my_user', password: 'p' });
  return { soap, session };
}

describe('SOAP version negotiation', () => {
  it('vCenter 8.0.3: speaks 8.0.2.0 (its newest public prior version), not the internal uA046D008', async () => {
    const { soap, session } = await connect('8.0.3');
    expect(soap.version).toBe('8.0.2.0');
    await session.open();
    expect(session.serviceContent.about.fullName).toBe('VMware vCenter Server 8.0.3 build-69507950');
    expect(session.userSession?.userName).toBe('my_user');
    expect(actions).toEqual(['urn:vim25/8.0.2.0', 'urn:vim25/8.0.2.0']);
  });

  it('vCenter 6.0.0: speaks 6.0, and its InvalidLogin answer comes through as the typed fault', async () => {
    const { soap, session } = await connect('6.0.0');
    expect(soap.version).toBe('6.0');
    const err = await session.open().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VsphereFault);
    expect((err as VsphereFault).faultName).toBe('InvalidLogin');
    expect(session.serviceContent.about).toMatchObject({ fullName: 'VMware vCenter Server 6.0.0 build-2798252', apiVersion: '6.0' });
    expect(actions).toEqual(['urn:vim25/6.0', 'urn:vim25/6.0']);
  });

  it('picks the highest common version whatever the order, and refuses a server with none in common', () => {
    const doc = (cur: string, prior: string[]) =>
      parseXml(`<namespaces version="1.0"><namespace><name>urn:vim25</name><version>${cur}</version><priorVersions>${prior.map((v) => `<version>${v}</version>`).join('')}</priorVersions></namespace></namespaces>`);
    expect(negotiateVimVersion(doc('6.5', ['6.0', '5.5']))).toBe('6.5'); // the simulator's answer
    expect(negotiateVimVersion(doc('7.0.3.0', ['5.5', '6.7.3', '7.0.2.1']))).toBe('7.0.3.0');
    expect(negotiateVimVersion(doc('9.9.9', ['8.0.3.0', '8.0.2.0']))).toBe('8.0.3.0');
    expect(() => negotiateVimVersion(doc('4.1', ['4.0']))).toThrow(/serves vim25 versions 4\.1, 4\.0; this client speaks 5\.5 to 8\.0\.3\.0/);
    expect(() => negotiateVimVersion(parseXml('<namespaces version="2.0"/>'))).toThrow(SoapProtocolError);
    expect(CLIENT_VIM_VERSIONS.at(-1)).toBe('5.5');
  });

  it('a URL that serves no vimServiceVersions.xml is refused as not a vSphere SDK', async () => {
    current = { ...SERVERS['8.0.3'], versions: '' };
    const soap = new SoapClient({ url: url.replace(/\/sdk$/, '/other'), agent: new Agent() });
    await expect(soap.discoverVersion()).rejects.toThrow(/HTTP 404; is .* a vCenter\/ESXi SDK endpoint\?/);
  });
});
