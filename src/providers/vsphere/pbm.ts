// Storage Policy Based Management (SPBM): the vCenter service at /pbm/sdk beside /sdk. A PBM call is
// a SOAP call in namespace urn:pbm, authenticated by the vim25 session: its cookie travels as the
// SOAP header element `vcSessionCookie` (govmomi vim25/soap Header.Cookie: "a vCenter session cookie
// that can be used with other SDK endpoints (e.g. pbm)"; pyVmomi's pbm stub and oslo.vmware's
// PBM client set the same header), not as an HTTP cookie. pyVmomi's stub uses the path /pbm/sdk.
// Methods (vSphere Storage Policy API reference, "only with operations rendered under /pbm"):
// PbmRetrieveServiceContent, PbmQueryProfile, PbmRetrieveContent, PbmQueryMatchingHub (the hubs that
// satisfy a profile, among hubsToSearch), PbmCheckCompliance (PbmComplianceResult.complianceStatus:
// compliant, nonCompliant, unknown, notApplicable, outOfDate), PbmQueryAssociatedProfile.
import https from 'node:https';
import { buildEnvelope, escapeXml, parseSoapResponse, SoapFault, type MoRef, type SoapClient, type SoapValue, type XmlNode } from './soap.ts';
import { fromSoapFault, isNotAuthenticated, VsphereClientError } from './fault.ts';
import { arr, decodeNode, type DataObject } from './types.ts';

/** an idle PBM call is given up after this (the vim25 transport allows 10 minutes for tasks; PBM calls are queries) */
const PBM_TIMEOUT_MS = 120_000;

const PBM_SERVICE_INSTANCE: MoRef = { type: 'PbmServiceInstance', value: 'ServiceInstance' };

export interface PbmContent {
  profileManager: MoRef;
  placementSolver: MoRef;
  complianceManager: MoRef;
}

/** A storage policy as SPBM returns it: id, name and its rules in words. */
export interface StoragePolicy {
  id: string;
  name: string;
  rules: string[];
}

/** One PBM endpoint, riding on a logged-in vim25 SoapClient (its TLS agent and session cookie). */
export class PbmClient {
  private content: PbmContent | undefined;
  private readonly url: URL;

  /** `relogin`: a vim25 call that renews the session (the Session re-logs in on NotAuthenticated). */
  constructor(
    private readonly soap: SoapClient,
    private readonly relogin: () => Promise<void>,
  ) {
    this.url = new URL(soap.url);
    this.url.pathname = '/pbm/sdk';
  }

  private async post(method: string, thisRef: MoRef, params: Array<[string, SoapValue]>): Promise<XmlNode> {
    // the cookie's value without the quotes vCenter puts around it (pyVmomi samples read it with
    // http.cookies.SimpleCookie, which unquotes it)
    const cookie = (this.soap.sessionCookie ?? '').replace(/^"(.*)"$/, '$1');
    const header = cookie ? `<soapenv:Header><vcSessionCookie>${escapeXml(cookie)}</vcSessionCookie></soapenv:Header>` : '';
    const body = buildEnvelope(method, thisRef, params).replace('<soapenv:Body>', `${header}<soapenv:Body>`).replace(`<${method} xmlns="urn:vim25">`, `<${method} xmlns="urn:pbm">`);
    const reply = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = https.request(this.url, { method: 'POST', agent: this.soap.agent, headers: { 'Content-Type': 'text/xml; charset="utf-8"', SOAPAction: 'urn:pbm/2.0', 'Content-Length': String(Buffer.byteLength(body)) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.setTimeout(PBM_TIMEOUT_MS, () => req.destroy(new Error(`${method} to ${this.url.host}/pbm timed out after ${PBM_TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end(body);
    });
    try {
      return parseSoapResponse(method, reply.status, reply.text, `${this.url.host}/pbm`);
    } catch (err) {
      throw err instanceof SoapFault ? fromSoapFault(err, this.url.host) : err;
    }
  }

  /** One call; on NotAuthenticated the vim25 session is renewed once and the call sent again. */
  private async call(method: string, thisRef: MoRef, params: Array<[string, SoapValue]>): Promise<XmlNode> {
    try {
      return await this.post(method, thisRef, params);
    } catch (err) {
      if (!isNotAuthenticated(err)) throw err;
      await this.relogin();
      return this.post(method, thisRef, params);
    }
  }

  private async serviceContent(): Promise<PbmContent> {
    if (!this.content) {
      const resp = await this.call('PbmRetrieveServiceContent', PBM_SERVICE_INSTANCE, []);
      const rv = resp.children.find((c) => c.name === 'returnval');
      const v = (rv ? decodeNode(rv) : {}) as Record<string, MoRef | undefined>;
      if (!v.profileManager || !v.placementSolver || !v.complianceManager) throw new VsphereClientError('bad-reply', `PbmRetrieveServiceContent on ${this.url.host} names no profile manager, placement solver or compliance manager`, { method: 'PbmRetrieveServiceContent', host: this.url.host });
      this.content = { profileManager: v.profileManager, placementSolver: v.placementSolver, complianceManager: v.complianceManager };
    }
    return this.content;
  }

  /** Every storage REQUIREMENT policy (resource type STORAGE), with its rules. */
  async storagePolicies(): Promise<StoragePolicy[]> {
    const sc = await this.serviceContent();
    const ids = returnvals(await this.call('PbmQueryProfile', sc.profileManager, [
      ['resourceType', { resourceType: 'STORAGE' }],
      ['profileCategory', 'REQUIREMENT'],
    ]));
    if (!ids.length) return [];
    const profiles = returnvals(await this.call('PbmRetrieveContent', sc.profileManager, [['profileIds', ids.map((i) => ({ uniqueId: text(i.uniqueId) }))]]));
    return profiles.map((p) => ({ id: text((p.profileId as DataObject).uniqueId), name: text(p.name), rules: policyRules(p) }));
  }

  /** The datastores (hub ids: Datastore MoRef values) among `datastores` that satisfy the policy. */
  async matchingDatastores(policyId: string, datastores: readonly MoRef[]): Promise<string[]> {
    const sc = await this.serviceContent();
    const hubs = returnvals(await this.call('PbmQueryMatchingHub', sc.placementSolver, [
      ['hubsToSearch', datastores.map((d) => ({ hubType: 'Datastore', hubId: d.value }))],
      ['profile', { uniqueId: policyId }],
    ]));
    return hubs.filter((h) => h.hubType === 'Datastore').map((h) => text(h.hubId));
  }

  /** A VM disk's compliance with its policy: the entity is `virtualDiskId` "<vm>:<device key>". */
  async diskCompliance(vm: MoRef, diskKey: number): Promise<{ status: string; profileId?: string }> {
    const sc = await this.serviceContent();
    const res = returnvals(await this.call('PbmCheckCompliance', sc.complianceManager, [['entities', [diskEntity(vm, diskKey)]]]));
    const r = res[0];
    if (!r) return { status: 'unknown' };
    const profile = r.profile as DataObject | undefined;
    return { status: text(r.complianceStatus), ...(profile?.uniqueId !== undefined ? { profileId: text(profile.uniqueId) } : {}) };
  }

  /** The policy SPBM associates with a VM disk (PbmQueryAssociatedProfile), or undefined. */
  async diskPolicy(vm: MoRef, diskKey: number): Promise<string | undefined> {
    const sc = await this.serviceContent();
    const ids = returnvals(await this.call('PbmQueryAssociatedProfile', sc.profileManager, [['entity', diskEntity(vm, diskKey)]]));
    return ids[0]?.uniqueId === undefined ? undefined : text(ids[0].uniqueId);
  }
}

function diskEntity(vm: MoRef, diskKey: number): Record<string, SoapValue> {
  return { objectType: 'virtualDiskId', key: `${vm.value}:${diskKey}` };
}

function returnvals(resp: XmlNode): DataObject[] {
  return resp.children.filter((c) => c.name === 'returnval').map((c) => decodeNode(c) as DataObject);
}

/** A policy's rules in words: `VSAN.hostFailuresToTolerate = 1`, `tag storsweep-tier in gold`. */
export function policyRules(profile: DataObject): string[] {
  const out: string[] = [];
  const constraints = profile.constraints as DataObject | undefined;
  for (const sub of arr(constraints?.subProfiles as DataObject[] | DataObject | undefined)) {
    for (const cap of arr(sub.capability as DataObject[] | DataObject | undefined)) {
      const id = (cap.id ?? {}) as DataObject;
      const ns = text(id.namespace);
      for (const c of arr(cap.constraint as DataObject[] | DataObject | undefined)) {
        for (const p of arr(c.propertyInstance as DataObject[] | DataObject | undefined)) {
          const value = ruleValue(p.value);
          out.push(ns === 'http://www.vmware.com/storage/tag' ? `tag ${text(id.id)} in ${value}` : `${ns}.${text(p.id)} = ${value}`);
        }
      }
    }
  }
  return out;
}

function ruleValue(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v !== 'object') return text(v);
  const o = v as DataObject;
  if ('values' in o) return arr(o.values).map(text).join('|');
  return JSON.stringify(o);
}

/** A decoded leaf as text ('' for anything but a string, number or boolean). */
function text(v: unknown): string {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
}
