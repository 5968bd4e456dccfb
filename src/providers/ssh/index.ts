// The `ssh` provider: fio on a Linux machine reached over SSH (an `sshHosts` entry). It provisions
// nothing, so its only matrix axis is the workload.
import { z } from 'zod';
import type { ProviderModule } from '../../contract/provider.ts';
import { fioFields, fioGuestModule, nameField } from '../guest.ts';

const targetSchema = z.strictObject({
  provider: z.literal('ssh'),
  sshHost: nameField(),
  ...fioFields,
});

export type SshTarget = z.output<typeof targetSchema>;

export const ssh = {
  ...fioGuestModule('ssh', (t: SshTarget) => t),
  targetSchema,
  // fio runs through POSIX sh commands (shJoin) there
  sshHostsOf: (t) => [{ name: t.sshHost, path: ['sshHost'], shell: 'posix' }],
} satisfies ProviderModule<'ssh', SshTarget>;
