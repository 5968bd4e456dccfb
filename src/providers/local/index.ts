// The `local` provider: fio on this machine, in a work directory or on a test file. It provisions
// nothing, so its only matrix axis is the workload.
import { z } from 'zod';
import type { ProviderModule } from '../../contract/provider.ts';
import { fioFields, fioGuestModule } from '../guest.ts';

const targetSchema = z.strictObject({
  provider: z.literal('local'),
  ...fioFields,
});

export type LocalTarget = z.output<typeof targetSchema>;

export const local = {
  ...fioGuestModule('local', (t: LocalTarget) => ({ ...t, sshHost: undefined })),
  targetSchema,
  sshHostsOf: () => [],
} satisfies ProviderModule<'local', LocalTarget>;
