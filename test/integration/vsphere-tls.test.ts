// TLS trust against the vcsim harness (self-signed certificate): verified by default, CA file,
// pinned SHA-256 thumbprint — a wrong pin sends nothing, not even RetrieveServiceContent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostVerificationFailed } from '../../src/errors.ts';
import { startVcsim, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { endpointFromEnv, VsphereClient } from '../../src/providers/vsphere/client.ts';
import { VsphereFault } from '../../src/providers/vsphere/fault.ts';

let sim: VcsimHandle;

beforeAll(async () => {
  sim = await startVcsim();
});

afterAll(async () => {
  await sim?.stop();
});

const creds = () => ({ url: sim.url, username: sim.username, password: sim.password });

/** the same fingerprint with its last byte changed */
function wrongPin(pin: string): string {
  const last = pin.slice(-2) === '00' ? '01' : '00';
  return pin.slice(0, -2) + last;
}

describe('TLS trust', () => {
  it('a wrong thumbprint is refused before any SOAP call, so no login body is sent', async () => {
    await sim.control.reset();
    const err = await VsphereClient.connect({ ...creds(), thumbprint: wrongPin(sim.thumbprint) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostVerificationFailed);
    expect((err as Error).message).toContain('does not match the pinned thumbprint');
    expect((err as Error).message).toContain(sim.thumbprint);
    expect(await sim.control.calls()).toEqual({});
  });

  it('a malformed or SHA-1 thumbprint is rejected with a clear message', async () => {
    await expect(VsphereClient.connect({ ...creds(), thumbprint: 'AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01' })).rejects.toThrow(/not a SHA-256 fingerprint/);
  });

  it('the right thumbprint (any case, with or without colons) logs in', async () => {
    await sim.control.reset();
    const c = await VsphereClient.connect({ ...creds(), thumbprint: sim.thumbprint.toLowerCase().replace(/:/g, '') });
    try {
      expect(c.serviceContent.about.apiType).toBe('VirtualCenter');
      expect((await sim.control.calls()).Login).toBe(1);
    } finally {
      await c.logout();
    }
    expect((await sim.control.calls()).Logout).toBe(1);
  });

  it('without a pin or CA the self-signed certificate is refused, and no Login is received', async () => {
    await sim.control.reset();
    const err = await VsphereClient.connect(creds()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostVerificationFailed);
    expect((err as Error).message).toMatch(/TLS verification of 127\.0\.0\.1:\d+ failed/);
    expect((await sim.control.calls()).Login ?? 0).toBe(0);
  });

  it('caFile trusts the certificate (its SAN covers 127.0.0.1)', async () => {
    const c = await VsphereClient.connect({ ...creds(), caFile: sim.certFile });
    await c.logout();
    await expect(VsphereClient.connect({ ...creds(), caFile: '/nonexistent/ca.pem' })).rejects.toThrow(/cannot read caFile \/nonexistent\/ca\.pem/);
  });

  it('insecure: true connects only when written, and cannot be combined with a pin', async () => {
    const c = await VsphereClient.connect({ ...creds(), insecure: true });
    await c.logout();
    await expect(VsphereClient.connect({ ...creds(), insecure: true, thumbprint: sim.thumbprint })).rejects.toThrow(/conflicts with thumbprint/);
  });

  it('a wrong password is an InvalidLogin fault, not a stack of transport errors', async () => {
    const err = await VsphereClient.connect({ ...creds(), password: 'wrong', thumbprint: sim.thumbprint }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VsphereFault);
    expect((err as VsphereFault).faultName).toBe('InvalidLogin');
  });

  it('GOVC_* variables give the endpoint defaults', () => {
    const ep = endpointFromEnv({ GOVC_URL: 'https://u%40x:p%3Aw@vc.example:8443', GOVC_INSECURE: '1' })!;
    expect(ep).toEqual({ url: 'https://vc.example:8443/sdk', username: 'u@x', password: 'p:w', insecure: true });
    expect(endpointFromEnv({ GOVC_URL: 'vc.example', GOVC_USERNAME: 'a', GOVC_PASSWORD: 'b', GOVC_TLS_CA_CERTS: '/ca.pem' })).toEqual({ url: 'https://vc.example/sdk', username: 'a', password: 'b', caFile: '/ca.pem' });
    expect(endpointFromEnv({})).toBeUndefined();
    expect(() => endpointFromEnv({ GOVC_URL: 'vc.example' })).toThrow(/no username\/password/);
  });
});
