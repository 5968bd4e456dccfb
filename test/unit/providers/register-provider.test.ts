// registerProvider (src/providers/index.ts): a test's provider joins the registry only before
// anything reads it — the config layer builds its schemas from the registry as it loads, so a later
// provider would be missing from them without a word. A later call, or a name taken, is refused.
import { describe, expect, it } from 'vitest';
import type { ProviderModule, ProviderName } from '../../../src/contract/provider.ts';
import { local } from '../../../src/providers/local/index.ts';
import { providerModules, registerProvider } from '../../../src/providers/index.ts';

// a module of its own without asking the registry (which would close it)
const named = (name: string) => ({ ...local, name: name as ProviderName }) as unknown as ProviderModule;

describe('registerProvider', () => {
  it('takes a new name (listed after the shipped ones), refuses a name taken, and refuses anything once the registry was read', () => {
    registerProvider(named('scratch-early'));
    expect(() => registerProvider(named('local'))).toThrow(/named "local" is already registered/);
    expect(() => registerProvider(named('scratch-early'))).toThrow(/named "scratch-early" is already registered/);
    expect(providerModules().map((m) => m.name)).toEqual(['local', 'ssh', 'vsphere', 'esxi-shell', 'hyperv', 'scratch-early']);
    // providerModules() read the registry: from here on nothing may join
    expect(() => registerProvider(named('scratch-late'))).toThrow(/the provider registry was already read .*register before importing config\/, plan\/ or app\//);
    expect(providerModules().map((m) => m.name)).not.toContain('scratch-late');
  });
});
