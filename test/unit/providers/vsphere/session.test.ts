// Re-login on an expired session, both ways a server reports it (top-level NotAuthenticated fault,
// or HTTP 200 with NotAuthenticated in every missingSet), single-flight under concurrency. The
// server is a tiny real HTTP server answering with vCenter-shaped XML (as in the fixtures).
import { createServer, type Server } from 'node:http';
import { Agent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VsphereFault } from '../../../../src/providers/vsphere/fault.ts';
import { retrieveAll } from '../../../../src/providers/vsphere/property.ts';
import { Session } from '../../../../src/providers/vsphere/session.ts';
import { SoapClient } from '../../../../src/providers/vsphere/soap.ts';

const ENV = (body: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>${body}</soapenv:Body></soapenv:Envelope>`;
const NOT_AUTH = ENV(
  '<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>The session is not authenticated.</faultstring><detail><NotAuthenticatedFault xmlns="urn:vim25" xsi:type="NotAuthenticated"><object type="Folder">group-d1</object><privilegeId>System.View</privilegeId></NotAuthenticatedFault></detail></soapenv:Fault>',
);

let server: Server;
let url: string;
let mode: 'fault' | 'missingSet' = 'fault';
let valid = new Set<string>();
let logins = 0;
let received: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const method = /<soapenv:Body><(\w+)/.exec(body)?.[1] ?? '?';
      received.push(method);
      const cookie = /vmware_soap_session=("[^"]+")/.exec(req.headers.cookie ?? '')?.[1];
      const send = (status: number, xml: string, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'Content-Type': 'text/xml', ...headers });
        res.end(xml);
      };
      if (method === 'RetrieveServiceContent') {
        return send(200, ENV('<RetrieveServiceContentResponse xmlns="urn:vim25"><returnval><rootFolder type="Folder">group-d1</rootFolder><propertyCollector type="PropertyCollector">propertyCollector</propertyCollector><about><apiType>VirtualCenter</apiType></about><sessionManager type="SessionManager">SessionManager</sessionManager><searchIndex type="SearchIndex">SearchIndex</searchIndex></returnval></RetrieveServiceContentResponse>'));
      }
      if (method === 'Login') {
        logins++;
        // Real vCenter quotes the cookie value; the client must send it back verbatim.
        const c = `"s${logins}"`;
        valid.add(c);
        return send(200, ENV('<LoginResponse xmlns="urn:vim25"><returnval><key>k</key><userName>u</userName></returnval></LoginResponse>'), { 'Set-Cookie': `vmware_soap_session=${c}; Path=/; HttpOnly; Secure;` });
      }
      if (!cookie || !valid.has(cookie)) {
        if (mode === 'fault') return send(500, NOT_AUTH);
        return send(200, ENV('<RetrievePropertiesExResponse xmlns="urn:vim25"><returnval><objects><obj type="Folder">group-d1</obj><missingSet><path>name</path><fault><fault xsi:type="NotAuthenticated"><object type="Folder">group-d1</object><privilegeId>System.View</privilegeId></fault><localizedMessage></localizedMessage></fault></missingSet></objects></returnval></RetrievePropertiesExResponse>'));
      }
      if (method === 'Logout') return send(200, ENV('<LogoutResponse xmlns="urn:vim25"></LogoutResponse>'));
      return send(200, ENV('<RetrievePropertiesExResponse xmlns="urn:vim25"><returnval><objects><obj type="Folder">group-d1</obj><propSet><name>name</name><val xsi:type="xsd:string">Datacenters</val></propSet></objects></returnval></RetrievePropertiesExResponse>'));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sdk`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

beforeEach(() => {
  valid = new Set();
  logins = 0;
  received = [];
});

const spec = [{ propSet: [{ type: 'Folder', pathSet: ['name'] }], objectSet: [{ obj: { type: 'Folder', value: 'group-d1' }, skip: false }] }];

async function open(onRelogin?: () => void): Promise<Session> {
  const s = new Session(new SoapClient({ url, agent: new Agent() }), { username: 'u', password: 'p' }, { ...(onRelogin ? { onRelogin } : {}) });
  await s.open();
  return s;
}

describe('Session re-login', () => {
  for (const m of ['fault', 'missingSet'] as const) {
    it(`expired session reported as ${m}: logs in again once and replays the call`, async () => {
      mode = m;
      let relogins = 0;
      const s = await open(() => relogins++);
      valid.clear();
      const objs = await retrieveAll(s, s.serviceContent.propertyCollector, spec);
      expect(objs[0]!.propSet).toEqual([{ _type: 'DynamicProperty', name: 'name', val: 'Datacenters' }]);
      expect(logins).toBe(2);
      expect(relogins).toBe(1);
      expect(received).toEqual(['RetrieveServiceContent', 'Login', 'RetrievePropertiesEx', 'Login', 'RetrievePropertiesEx']);
    });
  }

  it('concurrent calls on an expired session share one Login', async () => {
    mode = 'fault';
    const s = await open();
    valid.clear();
    const results = await Promise.all(Array.from({ length: 6 }, () => retrieveAll(s, s.serviceContent.propertyCollector, spec)));
    expect(results.every((r) => r.length === 1)).toBe(true);
    expect(logins).toBe(2);
  });

  it('replays only once: a session that stays invalid surfaces as NotAuthenticated', async () => {
    mode = 'fault';
    const s = await open();
    // Every new session is invalidated as soon as it is created.
    const add = valid.add.bind(valid);
    valid.add = () => valid;
    valid.clear();
    const err = await retrieveAll(s, s.serviceContent.propertyCollector, spec).catch((e: unknown) => e);
    valid.add = add;
    expect(err).toBeInstanceOf(VsphereFault);
    expect((err as VsphereFault).faultName).toBe('NotAuthenticated');
    expect((err as VsphereFault).message).toBe(`RetrievePropertiesEx on ${new URL(url).host}: NotAuthenticated: The session is not authenticated.`);
    expect(logins).toBe(2);
  });

  it('logout sends Logout and forgets the cookie', async () => {
    const s = await open();
    await s.close();
    expect(received.at(-1)).toBe('Logout');
    expect(s.soap.sessionCookie).toBeUndefined();
  });
});
