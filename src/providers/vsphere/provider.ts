// The vSphere Provider: carries out planned steps (steps.ts) on one vCenter/ESXi endpoint, one
// operation each (operations/*.ts), with one session for the provider's lifetime (host.ts), and
// tears down exactly what the run created.
import type { Provider } from '../../contract/provider.ts';
import { operationsProvider } from '../operations.ts';
import type { VsphereTargetConfig } from './config.ts';
import { vsphereHost, type VsphereHost, type VsphereProviderOptions } from './host.ts';
import { VSPHERE_OPERATIONS } from './operations/index.ts';
import { perfObserver } from './perf.ts';
import { isTransient } from './retrying.ts';

export type { VsphereProviderOptions };
export { diskUuidEnabled, enableUuidValueOn, guestIdentity } from './guest-identity.ts';

export function createVsphereProvider(target: VsphereTargetConfig, opts: VsphereProviderOptions = {}): Provider {
  const h = vsphereHost(target, opts);
  const observeHost: Provider['observeHost'] = (provisioned) => perfObserver(h.client, { vm: h.vm, datastore: h.findDatastore }, provisioned, opts.perfPollMs !== undefined ? { pollMs: opts.perfPollMs } : {});
  return { name: 'vsphere', ...operationsProvider('vsphere', VSPHERE_OPERATIONS, h), isTransient, close: () => h.close(), describe: () => describe(h), observeHost };
}

/** Facts for the run's fingerprint: the endpoint's product and API, the host's ESXi, the VM's guest and Tools as VMware Tools reports them. */
async function describe(h: VsphereHost): Promise<Record<string, string>> {
  const c = await h.client();
  const about = c.serviceContent.about;
  const facts: Record<string, string> = { 'vsphere.product': about.fullName, 'vsphere.apiType': about.apiType, 'vsphere.apiVersion': about.apiVersion };
  const host = await c.readProps(await c.findHost(h.target.host), ['summary.config.product.fullName']).catch((): Record<string, unknown> => ({}));
  const product = host['summary.config.product.fullName'];
  if (typeof product === 'string') facts['esxi.product'] = product;
  // the VM as VMware Tools reports it (GuestInfo): the guest's OS and the Tools version running there
  const g = await c.readProps(await h.vm(h.target.vm), ['guest.guestFullName', 'guest.toolsVersion', 'guest.toolsRunningStatus']).catch((): Record<string, unknown> => ({}));
  if (typeof g['guest.guestFullName'] === 'string' && g['guest.guestFullName']) facts['vm.guestFullName'] = g['guest.guestFullName'];
  if (typeof g['guest.toolsVersion'] === 'string' && g['guest.toolsVersion']) facts['vmwareTools.version'] = g['guest.toolsVersion'];
  if (typeof g['guest.toolsRunningStatus'] === 'string' && g['guest.toolsRunningStatus']) facts['vmwareTools.runningStatus'] = g['guest.toolsRunningStatus'];
  return facts;
}
