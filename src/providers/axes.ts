// Every provider's matrix axes, one line per provider (exhaustive: a new ProviderName fails to
// compile until it is listed). local and ssh provision nothing: the workload is their only axis.
import type { ProviderName } from '../contract/provider.ts';
import type { AxisSpec } from '../contract/axis.ts';
import { ESXI_SHELL_AXES } from './esxi-shell/axes.ts';
import { HYPERV_AXES } from './hyperv/axes.ts';
import { VSPHERE_AXES } from './vsphere/axes.ts';

export const PROVIDER_AXES: Readonly<Record<ProviderName, readonly AxisSpec[]>> = {
  local: [],
  ssh: [],
  vsphere: VSPHERE_AXES,
  'esxi-shell': ESXI_SHELL_AXES,
  hyperv: HYPERV_AXES,
};
