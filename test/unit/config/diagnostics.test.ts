// Every malformed playbook or inventory is reported as file:line:col: key.path: message, with all
// problems of the file at once. Fixtures live in test/fixtures/config; each expectation is exact.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCompatibility, loadInventory, loadPlaybook } from '../../../src/config/index.ts';
import { ConfigError } from '../../../src/errors.ts';
import { matrixSchema } from '../../../src/config/playbook.ts';
import { PROVIDER_NAMES } from '../../../src/providers/index.ts';
import { diagnosticsOf } from '../../helpers/config-errors.ts';

const DIR = 'test/fixtures/config';
const f = (name: string) => path.join(DIR, name);


const playbook = (name: string) => diagnosticsOf(() => loadPlaybook(f(name)));
const inventory = (name: string, env: NodeJS.ProcessEnv = {}) => diagnosticsOf(() => loadInventory(f(name), env));
const against = (pbName: string) => diagnosticsOf(() => checkCompatibility(loadPlaybook(f(pbName)), loadInventory(f('inv-ok.yaml'), {})));

describe('playbook diagnostics', () => {
  it('bad YAML syntax: points at where the parser gave up, says it is YAML', () => {
    expect(playbook('pb-bad-yaml.yaml')).toEqual([`${f('pb-bad-yaml.yaml')}:6:1: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]`]);
  });

  it('wrong types: each value, with what was expected and what was given', () => {
    expect(playbook('pb-wrong-types.yaml')).toEqual([
      `${f('pb-wrong-types.yaml')}:5:14: matrix.workload.profile: expected a list; got "cdm8-default"`,
      `${f('pb-wrong-types.yaml')}:7:15: settings.runtimeSec: expected whole seconds from 1 to 86400 (a day per pass at most); got "fast"`,
      `${f('pb-wrong-types.yaml')}:8:15: settings.warmupPass: expected boolean; got "no"`,
      `${f('pb-wrong-types.yaml')}:9:9: repeat: expected a number of repetitions from 1 to 1000, or {count: N, reprovision: true|false}, or {min: N, max: N, until: {ciPct: N}}; got "three"`,
    ]);
  });

  it('unknown keys: point at the key itself, with a did-you-mean and the accepted keys', () => {
    const d = playbook('pb-unknown-keys.yaml');
    expect(d).toHaveLength(3);
    // the shipped sections first; a provider's own axis may add one after them (the registry's)
    expect(Object.keys(matrixSchema.shape).slice(0, 5)).toEqual(['datastore', 'disk', 'guest', 'volume', 'workload']);
    expect(d[0]).toBe(`${f('pb-unknown-keys.yaml')}:6:3: matrix.datastor: unknown key "datastor"; did you mean "datastore"? (expected one of ${Object.keys(matrixSchema.shape).join(', ')})`);
    expect(d[1]).toBe(
      `${f('pb-unknown-keys.yaml')}:9:3: settings.runtimSec: unknown key "runtimSec"; did you mean "runtimeSec"? (expected one of fileSize, runtimeSec, rampSec, passes, warmupPass, prefill, prefillMBps, writeData, intervalSec, direct, aggregate, stopAfterSameFailure)`,
    );
    expect(d[2]).toMatch(new RegExp(`^${f('pb-unknown-keys.yaml')}:10:1: repet: unknown key "repet"; did you mean "repeat"\\? \\(expected one of .*\\brepeat\\b.*\\)$`));
  });

  it('invalid enum value in a block list: exact item position and the accepted values', () => {
    expect(playbook('pb-bad-enum.yaml')).toEqual([
      `${f('pb-bad-enum.yaml')}:8:9: matrix.disk.format[2]: expected one of thin, lazyzeroedthick, eagerzeroedthick, rdm-physical, rdm-virtual, vhdx-fixed, vhdx-dynamic, passthrough; got "eagerzero"`,
    ]);
  });

  it('missing required key: named, at the mapping that lacks it', () => {
    expect(playbook('pb-missing-target.yaml')).toEqual([`${f('pb-missing-target.yaml')}:1:1: target: required key is missing (expected string or a list)`]);
  });

  it('duplicate axis value: at the duplicate, naming the first occurrence', () => {
    expect(playbook('pb-duplicate-axis.yaml')).toEqual([`${f('pb-duplicate-axis.yaml')}:5:36: matrix.workload.profile[2]: duplicate axis value "cdm8-default" (already at index 0)`]);
  });

  it('empty matrix and empty axis list', () => {
    expect(playbook('pb-empty-matrix.yaml')).toEqual([`${f('pb-empty-matrix.yaml')}:3:9: matrix.workload: required key is missing (expected a mapping)`]);
    expect(playbook('pb-empty-axis.yaml')).toEqual([`${f('pb-empty-axis.yaml')}:5:14: matrix.workload.profile: an axis needs at least one value`]);
  });

  it('an empty document', () => {
    expect(playbook('pb-empty.yaml')).toEqual([`${f('pb-empty.yaml')}:1:1: the document is empty (expected a mapping)`]);
  });

  it('include / exclude / baseline naming something that is not an axis', () => {
    const F = f('pb-include-exclude-non-axis.yaml');
    expect(playbook('pb-include-exclude-non-axis.yaml')).toEqual([
      `${F}:8:5: exclude[0].disk.format: "disk.format" is not an axis of the matrix (axes: workload.profile)`,
      `${F}:10:5: include[0].workload.profil: "workload.profil" is not an axis of the matrix (axes: workload.profile)`,
      `${F}:12:3: baseline.datastore.kind: "datastore.kind" is not an axis of the matrix (axes: workload.profile)`,
    ]);
  });

  it('a baseline value that is not on its axis: at the value, with the allowed values', () => {
    const F = f('pb-baseline-value.yaml');
    expect(playbook('pb-baseline-value.yaml')).toEqual([
      `${F}:10:26: baseline.datastore.blockSizeMb: 16 is not a value of the axis datastore.blockSizeMb (values: 1, 2, 4, 8)`,
      `${F}:11:11: baseline.target: "lab-c" is not a value of the axis target (values: lab-a, lab-b)`,
    ]);
  });

  it('environment: plain one-line text of bounded size under plain keys, every problem at its line', () => {
    const file = f('pb-environment-bad.yaml');
    expect(playbook('pb-environment-bad.yaml')).toEqual([
      `${file}:8:9: environment.raid: expected plain one-line text: no control, bidi or line-separator character (newline, tab, escape, U+202E, …)`,
      `${file}:9:11: environment.9lives: expected a key of at most 64 letters, digits, \`_\`, \`.\`, \`/\` and \`-\`, starting with a letter (e.g. array, raid, vm.cpu)`,
      `${file}:10:13: environment.protocol: expected plain one-line text: no control, bidi or line-separator character (newline, tab, escape, U+202E, …)`,
      `${file}:11:7: environment.vm: expected one line of text, a number or true/false; got a list`,
      `${file}:12:9: environment.note: expected at most 200 characters of plain text`,
    ]);
    // the refused text is never echoed: no escape sequence or bidi override reaches the message
    for (const d of playbook('pb-environment-bad.yaml')) expect(d.includes('\u001b') || d.includes('\u202e')).toBe(false);
  });

  it('unknown workload profile: at the matrix value, listing the presets', () => {
    const d = playbook('pb-unknown-profile.yaml');
    expect(d).toHaveLength(1);
    expect(d[0]).toMatch(new RegExp(`^${f('pb-unknown-profile.yaml')}:7:9: matrix\\.workload\\.profile\\[1\\]: workload "cdm9-default" is neither a preset \\(cdm8-default, .*\\) nor an IOMeter access spec`));
  });

  it('reports every problem of a file at once, in file order', () => {
    const F = f('pb-many-errors.yaml');
    expect(playbook('pb-many-errors.yaml')).toEqual([
      `${F}:1:7: name: expected a lowercase name of letters, digits and dashes`,
      `${F}:5:20: matrix.disk.format[1]: expected one of thin, lazyzeroedthick, eagerzeroedthick, rdm-physical, rdm-virtual, vhdx-fixed, vhdx-dynamic, passthrough; got "eagerzero"`,
      `${F}:7:14: matrix.workload.profile: an axis needs at least one value`,
      `${F}:9:13: settings.fileSize: expected a size like 64m, 1g, 1024m or a number of bytes`,
      `${F}:10:11: settings.passes: expected a number of passes from 1 to 100; got 0`,
      `${F}:11:9: repeat: expected a number of repetitions from 1 to 1000; got 0`,
      `${F}:13:14: order.randomize: expected boolean; got "maybe"`,
    ]);
  });
});

describe('playbook against an inventory', () => {
  it('target not in the inventory: names the inventory and the targets it has', () => {
    expect(against('pb-target-not-in-inventory.yaml')).toEqual([
      `${f('pb-target-not-in-inventory.yaml')}:2:9: target: no target "lab-nowhere" in ${f('inv-ok.yaml')} (have: lab-guest, lab-local, vc-no-rdm)`,
    ]);
  });

  it('rdm format on a target without rdmDevice', () => {
    expect(against('pb-rdm-without-device.yaml')).toEqual([`${f('pb-rdm-without-device.yaml')}:5:20: matrix.disk.format[1]: "rdm-physical" maps a LUN, but target "vc-no-rdm" names no rdmDevice`]);
  });

  it('a disk axis on a target that provisions no disks', () => {
    expect(against('pb-disk-on-ssh-target.yaml')).toEqual([
      `${f('pb-disk-on-ssh-target.yaml')}:5:5: matrix.disk.format: target "lab-guest" (ssh) does not use disk.format: ssh targets provision nothing, their only axis is workload.profile; each of its values would repeat the same permutation`,
    ]);
  });
});

describe('inventory diagnostics', () => {
  it('missing secret env variable: names the variable, at the reference', () => {
    expect(inventory('inv-missing-secret-env.yaml')).toEqual([
      `${f('inv-missing-secret-env.yaml')}:5:15: sshHosts.esx.password: secret \${env:STORSWEEP_FIXTURE_UNSET_PASSWORD}: environment variable STORSWEEP_FIXTURE_UNSET_PASSWORD is not set`,
    ]);
  });

  it('the same file loads once the variable is set (and the value is not what prints)', () => {
    const inv = loadInventory(f('inv-missing-secret-env.yaml'), { STORSWEEP_FIXTURE_UNSET_PASSWORD: 'pw-from-env' });
    const secret = inv.secrets.get('${env:STORSWEEP_FIXTURE_UNSET_PASSWORD}');
    expect(secret?.reveal()).toBe('pw-from-env');
    expect(String(secret)).toBe('${env:STORSWEEP_FIXTURE_UNSET_PASSWORD}');
    expect(JSON.stringify({ secret })).not.toContain('pw-from-env');
  });

  it('missing secret file: names the resolved path (relative to the inventory) and the errno', () => {
    expect(inventory('inv-missing-secret-file.yaml')).toEqual([
      `${f('inv-missing-secret-file.yaml')}:5:15: vcenters.vc.password: secret \${file:secrets/no-such-file}: cannot read ${path.resolve(DIR, 'secrets/no-such-file')} (ENOENT)`,
    ]);
  });

  it('plaintext password is refused', () => {
    expect(inventory('inv-plaintext-password.yaml')).toEqual([
      `${f('inv-plaintext-password.yaml')}:5:15: sshHosts.esx.password: expected a secret reference like \${env:NAME} or \${file:path}; plaintext secrets are not accepted`,
    ]);
  });

  it('a device outside allowedDevices', () => {
    expect(inventory('inv-device-not-allowed.yaml')).toEqual([
      `${f('inv-device-not-allowed.yaml')}:11:16: targets.vc1.rdmDevice: naa.600508b1001c3a50 is not listed in allowedDevices; a device is formatted or mapped only when the inventory allows it by canonical name`,
    ]);
  });

  it('a thumbprint that is not 32 hex bytes', () => {
    expect(inventory('inv-bad-thumbprint.yaml')).toEqual([`${f('inv-bad-thumbprint.yaml')}:4:17: vcenters.vc.thumbprint: expected a SHA-256 thumbprint: 32 colon-separated hex bytes`]);
  });

  it('references to missing sshHosts / vcenters, all at once', () => {
    const F = f('inv-sshhost-ref-missing.yaml');
    expect(inventory('inv-sshhost-ref-missing.yaml')).toEqual([
      `${F}:10:14: targets.t1.sshHost: no sshHosts entry named "gues" (have: guest)`,
      `${F}:14:14: targets.t2.vcenter: no vcenters entry named "missing-vc" (and GOVC_URL is not set)`,
      `${F}:18:16: targets.t2.guest.sshHost: no sshHosts entry named "other" (have: guest)`,
    ]);
  });

  it('an unknown provider lists the providers', () => {
    expect(inventory('inv-bad-provider.yaml')).toEqual([`${f('inv-bad-provider.yaml')}:3:15: targets.t.provider: expected provider to be one of ${PROVIDER_NAMES.join(', ')}; got "vmware"`]);
  });

  it('out-of-range port and bad enum in an sshHosts entry', () => {
    expect(inventory('inv-sshhost-incomplete.yaml')).toEqual([
      `${f('inv-sshhost-incomplete.yaml')}:4:11: sshHosts.guest.port: expected a TCP port from 1 to 65535; got 70000`,
      `${f('inv-sshhost-incomplete.yaml')}:6:12: sshHosts.guest.shell: expected one of posix, powershell; got "bash"`,
    ]);
  });

  it('an ssh host without credentials or known_hosts (insecure must be explicit)', () => {
    expect(inventory('inv-sshhost-no-auth.yaml')).toEqual([
      `${f('inv-sshhost-no-auth.yaml')}:3:5: sshHosts.guest: needs privateKeyFile or password`,
      `${f('inv-sshhost-no-auth.yaml')}:3:5: sshHosts.guest: needs knownHostsFile (or insecure: true to skip host key verification)`,
    ]);
  });

  it('unknown key in a target: did-you-mean among the keys of THAT provider only', () => {
    expect(inventory('inv-unknown-target-key.yaml')).toEqual([
      `${f('inv-unknown-target-key.yaml')}:9:5: targets.t.workdir: required key is missing (expected string)`,
      `${f('inv-unknown-target-key.yaml')}:11:5: targets.t.workdr: unknown key "workdr"; did you mean "workdir"? (expected one of provider, sshHost, workdir, testFile, fioPath, ioengine, environment)`,
    ]);
  });

  it('missing targets', () => {
    expect(inventory('inv-missing-targets.yaml')).toEqual([`${f('inv-missing-targets.yaml')}:1:1: targets: required key is missing (expected a mapping)`]);
  });

  it('a missing file is a diagnostic too, not an exception', () => {
    expect(inventory('no-such-inventory.yaml')).toEqual([`${f('no-such-inventory.yaml')}:1:1: file not found`]);
  });
});

describe('hostile or odd files: refused at the line, in a sentence (issue 11, items 12 and 14)', () => {
  it('UTF-16, with or without a byte order mark: says so instead of echoing the bytes', () => {
    expect(playbook('pb-utf16.yaml')).toEqual([`${f('pb-utf16.yaml')}:1:1: the file is UTF-16 (little-endian); save it as UTF-8`]);
    expect(playbook('pb-utf16-no-bom.yaml')).toEqual([`${f('pb-utf16-no-bom.yaml')}:1:1: the file is UTF-16 (big-endian); save it as UTF-8`]);
  });

  it('.inf and -.inf: named as YAML writes them, not "expected number; got number Infinity"', () => {
    expect(playbook('pb-infinity.yaml')).toEqual([
      `${f('pb-infinity.yaml')}:7:15: settings.runtimeSec: expected whole seconds from 1 to 86400 (a day per pass at most); got .inf (infinity)`,
      `${f('pb-infinity.yaml')}:8:9: repeat: expected a number of repetitions from 1 to 1000, or {count: N, reprovision: true|false}, or {min: N, max: N, until: {ciPct: N}}; got -.inf (infinity)`,
    ]);
  });

  it('YAML 1.1 tags that load as Map/Set (!!omap, !!set): the tag is named as unsupported', () => {
    expect(playbook('pb-omap.yaml')).toEqual([
      `${f('pb-omap.yaml')}:4:3: the tag !!omap is not supported; write a plain mapping without the tag`,
      `${f('pb-omap.yaml')}:5:17: the tag !!set is not supported; write a plain list without the tag`,
    ]);
  });

  it('an alias without an anchor: file:line, not a ReferenceError', () => {
    expect(playbook('pb-undefined-alias.yaml')).toEqual([`${f('pb-undefined-alias.yaml')}:5:15: alias *profiles has no anchor &profiles before it`]);
  });

  it('long values and keys are echoed cut to 80 characters, saying how much more there is', () => {
    const [value, key] = playbook('pb-long-value.yaml');
    expect(value).toBe(`${f('pb-long-value.yaml')}:6:9: repeat: expected a number of repetitions from 1 to 1000, or {count: N, reprovision: true|false}, or {min: N, max: N, until: {ciPct: N}}; got "${'x'.repeat(80)}… (220 more)"`);
    expect(key).toBe(`${f('pb-long-value.yaml')}:7:1: ${'y'.repeat(80)}… (120 more): unknown key "${'y'.repeat(80)}… (120 more)" (expected one of $schema, name, description, target, matrix, lackingAxes, workloads, settings, include, exclude, repeat, order, baseline, environment, environmentOf, timeouts)`);
  });

  it('a long value quoted by a lower layer\'s message (a workload name) is cut too', () => {
    expect(playbook('pb-long-profile.yaml')).toEqual([
      `${f('pb-long-profile.yaml')}:5:15: matrix.workload.profile[0]: workload "${'z'.repeat(79)}… (222 more) is neither a preset (cdm8-default, quick, cdm3, cdm5, cdm6, cdm7-default, cdm7-peak, cdm7-real, cdm8-peak, cdm8-real, cdm8-demo, cdm8-nvme) nor an IOMeter access spec like "4k 50% read 100% random"`,
    ]);
  });

  it('more permutations than the limit: refused at matrix:, counting targets and includes', () => {
    expect(playbook('pb-too-many-permutations.yaml')).toEqual([
      `${f('pb-too-many-permutations.yaml')}:3:1: matrix: the matrix expands to 160,001 permutations (target 2 × disk.format 2 × disk.sizeGb 200 × volume.sizeGb 100 × workload.profile 2, plus include); at most 100,000 are allowed: drop axis values or split the playbook`,
    ]);
    // the same matrix with excludes that leave 20,000 is fine
    expect(() => loadPlaybook(f('pb-many-permutations-excluded.yaml'))).not.toThrow();
  });

  it('a ConfigError message shows 50 diagnostics and counts the rest', () => {
    const diags = Array.from({ length: 120 }, (_, i) => ({ file: 'p.yaml', line: i + 1, column: 1, path: `k${i}`, message: 'unknown key' }));
    const lines = new ConfigError(diags).message.split('\n');
    expect(lines).toHaveLength(51);
    expect(lines[49]).toBe('p.yaml:50:1: k49: unknown key');
    expect(lines[50]).toBe('… and 70 more problems (fix these first)');
  });
});
